package httpapi

import (
	"context"
	"encoding/binary"
	"log/slog"
	"math/rand/v2"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceRequests is otelgin's middleware: one server span per request,
// named by route template, continuing the caller's trace when a
// traceparent header comes in. Probes and scrapes are not traced.
func (s *Server) traceRequests() gin.HandlerFunc {
	return otelgin.Middleware("quire",
		otelgin.WithTracerProvider(s.tracer),
		otelgin.WithPropagators(s.prop),
		otelgin.WithMeterProvider(noop.NewMeterProvider()), // metrics come from Prometheus
		otelgin.WithGinFilter(func(c *gin.Context) bool { return traced(c.FullPath()) }),
	)
}

// continueTrace is traceRequests for a provider that records no span
// (begin calls it): it continues the caller's trace (or starts one) so
// logs and child spans carry trace ids, without the span otelgin (or the
// SDK's tracer) would build for every request only to drop it. The
// request's span is a span context of its own: the caller's trace id, or
// a new one, and a new span id.
func (s *Server) continueTrace(ctx context.Context, h http.Header) context.Context {
	var parent trace.SpanContext
	// Canonical keys: no copy of the name per request.
	if len(h["Traceparent"])+len(h["Baggage"]) > 0 {
		ctx = s.prop.Extract(ctx, propagation.HeaderCarrier(h))
		parent = trace.SpanContextFromContext(ctx)
	}
	cfg := trace.SpanContextConfig{TraceID: parent.TraceID(), TraceFlags: parent.TraceFlags()}
	for !cfg.TraceID.IsValid() {
		binary.LittleEndian.PutUint64(cfg.TraceID[:8], rand.Uint64())
		binary.LittleEndian.PutUint64(cfg.TraceID[8:], rand.Uint64())
	}
	for !cfg.SpanID.IsValid() {
		binary.LittleEndian.PutUint64(cfg.SpanID[:], rand.Uint64())
	}
	return trace.ContextWithSpanContext(ctx, trace.NewSpanContext(cfg))
}

// traced says whether requests to route are traced: probes and scrapes
// are not.
func traced(route string) bool {
	switch route {
	case "/healthz", "/readyz", "/metrics":
		return false
	}
	return true
}

// tagSpan puts the request id on the request's span, so a trace can be
// found from a log line or a client's X-Request-ID and back.
func (s *Server) tagSpan(c *gin.Context) {
	trace.SpanFromContext(c.Request.Context()).SetAttributes(attribute.String("quire.request_id", requestIDOf(c)))
	c.Next()
}

// appendTraceAttrs appends the log attributes naming the trace of ctx,
// if any, to attrs.
func appendTraceAttrs(ctx context.Context, attrs []slog.Attr) []slog.Attr {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return attrs
	}
	return append(attrs, slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
}
