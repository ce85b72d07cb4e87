package httpapi

import (
	"context"
	"encoding/hex"
	"log/slog"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/trace"
)

// The access log: one JSON line per request. Where Config.AccessLog is
// set (quire serve, quire-bench), the line is appended by hand into a
// pooled buffer and written there in one call; otherwise it goes through
// the Logger's handler. The hand-written line is slog's JSON handler's
// line, field for field (time as RFC 3339 with nanoseconds, level, msg,
// then the attributes; durations in nanoseconds): the handler costs
// about 4% of a cached render's CPU on its own (walking attributes,
// checking kinds, its lock), which the hot path's goal does not leave
// room for (issue 30). TestAccessLineIsSlogs keeps the two alike.

// accessLine is what one request's line says.
type accessLine struct {
	end                     time.Time
	requestID, method       string
	route                   string
	status, bytes           int
	took                    time.Duration
	trace                   trace.SpanContext // not valid when the request has no trace
	kind, principal, userID string            // "" when no one is signed in
	err                     string            // a 5xx's error, else ""
}

// accessLineOf reads the line of the request c answered.
func accessLineOf(c *gin.Context, route string, end time.Time, took time.Duration) accessLine {
	l := accessLine{
		end: end, method: c.Request.Method, route: route,
		status: c.Writer.Status(), bytes: max(c.Writer.Size(), 0), took: took,
	}
	l.trace = trace.SpanContextFromContext(c.Request.Context())
	if r := requestOf(c); r != nil {
		l.requestID = r.id
		if p := r.principal; p != nil {
			l.kind, l.principal, l.userID = p.Kind(), p.ID(), p.User.ID
		}
	}
	if len(c.Errors) > 0 && l.status >= 500 {
		l.err = c.Errors.Last().Error()
	}
	return l
}

// attrs are the line's attributes, for a slog handler.
func (l *accessLine) attrs() []slog.Attr {
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs,
		slog.String("request_id", l.requestID),
		slog.String("method", l.method),
		slog.String("route", l.route),
		slog.Int("status", l.status),
		slog.Duration("duration", l.took),
		slog.Int("bytes", l.bytes),
	)
	if l.trace.IsValid() {
		attrs = append(attrs, slog.String("trace_id", l.trace.TraceID().String()), slog.String("span_id", l.trace.SpanID().String()))
	}
	if l.kind != "" {
		attrs = append(attrs, slog.String("principal_kind", l.kind), slog.String("principal_id", l.principal), slog.String("user_id", l.userID))
	}
	if l.err != "" {
		attrs = append(attrs, slog.String("error", l.err))
	}
	return attrs
}

// appendJSON appends the line as slog's JSON handler writes it, newline
// included, when l is ascii.
func (l *accessLine) appendJSON(b []byte) []byte {
	b = append(b, `{"time":"`...)
	b = l.end.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request"`...)
	str := func(k, v string) {
		b = append(b, ',', '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		b, _ = slogQuoting.append(b, v) // ASCII (ascii): always quoted
	}
	id := func(k string, v []byte) {
		b = append(b, ',', '"')
		b = append(b, k...)
		b = append(b, '"', ':', '"')
		b = hex.AppendEncode(b, v)
		b = append(b, '"')
	}
	num := func(k string, v int64) {
		b = append(b, ',', '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, v, 10)
	}
	str("request_id", l.requestID)
	str("method", l.method)
	str("route", l.route)
	num("status", int64(l.status))
	num("duration", int64(l.took))
	num("bytes", int64(l.bytes))
	if l.trace.IsValid() {
		tid, sid := l.trace.TraceID(), l.trace.SpanID()
		id("trace_id", tid[:])
		id("span_id", sid[:])
	}
	if l.kind != "" {
		str("principal_kind", l.kind)
		str("principal_id", l.principal)
		str("user_id", l.userID)
	}
	if l.err != "" {
		str("error", l.err)
	}
	return append(b, '}', '\n')
}

// accessLog writes one structured line per request. It never logs headers
// or bodies, so tokens and passwords cannot leak into it.
func (s *Server) accessLog(c *gin.Context, route string, end time.Time, took time.Duration) {
	ctx := c.Request.Context()
	if !s.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	l := accessLineOf(c, route, end, took)
	s.writeLine(ctx, &l)
}

// writeLine writes the access line l.
func (s *Server) writeLine(ctx context.Context, l *accessLine) {
	switch {
	case s.accessOut == nil:
		logAccessLine(ctx, s.log.Handler(), l)
	case !l.ascii():
		// slog escapes U+2028, U+2029 and invalid UTF-8 its own way;
		// only an error's text brings them, rarely.
		logAccessLine(ctx, s.accessJSON, l)
	default:
		s.writeAccessLine(l)
	}
}

// ascii reports whether every string of l is ASCII, which appendJSON
// quotes as slog does.
func (l *accessLine) ascii() bool {
	for _, v := range [...]string{l.requestID, l.method, l.route, l.kind, l.principal, l.userID, l.err} {
		for i := 0; i < len(v); i++ {
			if v[i] >= utf8.RuneSelf {
				return false
			}
		}
	}
	return true
}

// writeAccessLine writes l to the access log's writer in one call, from
// a pooled buffer.
func (s *Server) writeAccessLine(l *accessLine) {
	bp, _ := s.lineBufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	*bp = l.appendJSON((*bp)[:0])
	s.accessOut.Write(*bp) // a log line that cannot be written has nowhere to go
	if cap(*bp) <= 4<<10 {
		s.lineBufs.Put(bp)
	}
}

// logAccessLine hands l to h as a record, with no caller's pc:
// Logger.LogAttrs would walk the stack for a source location the line
// does not carry.
func logAccessLine(ctx context.Context, h slog.Handler, l *accessLine) {
	r := slog.NewRecord(l.end, slog.LevelInfo, "request", 0)
	r.AddAttrs(l.attrs()...)
	h.Handle(ctx, r)
}
