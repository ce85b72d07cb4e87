package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// TestAccessLineIsSlogs: the access line written by hand is the line
// slog's JSON handler writes for the same request, byte for byte, for
// every shape of line and for strings that need escaping.
func TestAccessLineIsSlogs(t *testing.T) {
	end := time.Date(2026, 11, 28, 14, 5, 6, 789012345, time.FixedZone("x", 3600))
	for _, l := range []accessLine{
		{end: end, requestID: "abc", method: "POST", route: "/v1/prompts/:id/render", status: 200, bytes: 120, took: 41800 * time.Nanosecond},
		{end: end.UTC(), requestID: `q"uo\te`, method: "GET", route: "unmatched", status: 404, took: time.Second},
		{end: end, requestID: "r", method: "PUT", route: "/x", status: 500, bytes: 0, took: 1,
			trace: spanContext(t, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"),
			kind:  "api_key", principal: "k1", userID: "u1",
			err: "boom: \"quoted\"\n\ttab\x01ctl <html> & \u2028sep\u2029 é \xff invalid"},
		{end: end, requestID: "", method: "DELETE", route: "/y", status: 503, kind: "session", principal: "s", userID: "", err: "x"},
		{end: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), requestID: "whole second", method: "HEAD", route: "/", status: 204},
		{end: end, requestID: "<a>&\x7f", method: "POST", route: "/z", status: 502, trace: spanContext(t, "0000000000000000000000000000000a", "ffffffffffffffff"),
			err: "every control byte: \x00\x01\x02\x03\x04\x05\x06\x07\b\t\n\x0b\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f \"\\ <>&"},
	} {
		var want bytes.Buffer
		logAccessLine(context.Background(), slog.NewJSONHandler(&want, nil), &l)
		// As the server writes it: by hand, or through slog's handler
		// over the same writer for a line with other than ASCII.
		var got bytes.Buffer
		s := &Server{log: slog.New(slog.NewJSONHandler(&got, nil)), accessOut: &got, accessJSON: slog.NewJSONHandler(&got, nil)}
		s.writeLine(context.Background(), &l)
		if got.String() != want.String() {
			t.Errorf("access line\n got %s\nwant %s", got.Bytes(), want.Bytes())
		}
		if l.ascii() && !bytes.Equal(l.appendJSON(nil), want.Bytes()) {
			t.Errorf("appendJSON\n got %s\nwant %s", l.appendJSON(nil), want.Bytes())
		}
	}
}

func spanContext(t *testing.T, traceID, spanID string) trace.SpanContext {
	t.Helper()
	tid, err := trace.TraceIDFromHex(traceID)
	if err != nil {
		t.Fatal(err)
	}
	sid, err := trace.SpanIDFromHex(spanID)
	if err != nil {
		t.Fatal(err)
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid})
}
