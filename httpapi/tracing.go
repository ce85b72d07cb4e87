package httpapi

import (
	"context"
	"log/slog"

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
	prop := s.prop
	if prop == nil {
		prop = propagation.TraceContext{}
	}
	return otelgin.Middleware("quire",
		otelgin.WithTracerProvider(s.tracer),
		otelgin.WithPropagators(prop),
		otelgin.WithMeterProvider(noop.NewMeterProvider()), // metrics come from Prometheus
		otelgin.WithGinFilter(func(c *gin.Context) bool { return traced(c.FullPath()) }),
	)
}

// traceContext is traceRequests for a provider that records no span: it
// continues the caller's trace (or starts one) so logs and child spans
// carry trace ids, without the attributes, status and metrics otelgin
// builds for every request only for the span to drop them.
func (s *Server) traceContext() gin.HandlerFunc {
	prop := s.prop
	if prop == nil {
		prop = propagation.TraceContext{}
	}
	tracer := s.tracer.Tracer(otelgin.ScopeName)
	return func(c *gin.Context) {
		route := c.FullPath()
		if !traced(route) {
			c.Next()
			return
		}
		ctx := prop.Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
		ctx, span := tracer.Start(ctx, route, trace.WithSpanKind(trace.SpanKindServer))
		c.Request = c.Request.WithContext(ctx)
		c.Next()
		span.End()
	}
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
	trace.SpanFromContext(c.Request.Context()).SetAttributes(attribute.String("quire.request_id", c.GetString(ctxRequestID)))
	c.Next()
}

// traceAttrs are the log attributes naming the trace of ctx, if any.
func traceAttrs(ctx context.Context) []slog.Attr {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	return []slog.Attr{slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String())}
}
