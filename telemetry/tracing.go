package telemetry

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"
)

var noopProvider trace.TracerProvider = noop.NewTracerProvider()

// TracingOptions configure Tracing.
type TracingOptions struct {
	// ServiceName and Version describe this process in every span
	// (OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override them).
	ServiceName string
	Version     string
	// Exporter, when set, receives every span synchronously: tests use
	// tracetest.NewInMemoryExporter here. Otherwise the OTLP exporter is
	// used when OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set.
	Exporter sdktrace.SpanExporter
	// Getenv reads the environment; os.Getenv when nil.
	Getenv func(string) string
}

// Tracing is quire's OpenTelemetry tracer provider and propagator.
type Tracing struct {
	Provider   trace.TracerProvider
	Propagator propagation.TextMapPropagator
	// Exporting names the exporter in use ("otlp/http", "otlp/grpc",
	// "custom"), or is "" when spans are not exported.
	Exporting string

	sdk *sdktrace.TracerProvider
}

// NewTracing sets up tracing. With no exporter configured, spans are not
// sampled, so they cost almost nothing, but they still carry trace ids
// (taken from an incoming traceparent header or made fresh), so request
// log lines can be correlated with the caller's traces all the same.
// The OTLP exporter reads the standard OTEL_EXPORTER_OTLP_* variables; the
// protocol is OTLP/HTTP unless OTEL_EXPORTER_OTLP_PROTOCOL (or
// ..._TRACES_PROTOCOL) is "grpc".
func NewTracing(ctx context.Context, o TracingOptions) (*Tracing, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if o.ServiceName == "" {
		o.ServiceName = "quire"
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(o.ServiceName), semconv.ServiceVersion(o.Version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("tracing resource: %w", err)
	}
	t := &Tracing{Propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	switch {
	case o.Exporter != nil:
		t.Exporting = "custom"
		opts = append(opts, sdktrace.WithSyncer(o.Exporter), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	case otlpConfigured(getenv):
		exp, proto, err := newOTLPExporter(ctx, getenv)
		if err != nil {
			return nil, err
		}
		t.Exporting = proto
		// The sampler is the SDK's default, which honours OTEL_TRACES_SAMPLER.
		opts = append(opts, sdktrace.WithBatcher(exp))
	default:
		opts = append(opts, sdktrace.WithSampler(sdktrace.NeverSample()))
	}
	t.sdk = sdktrace.NewTracerProvider(opts...)
	t.Provider = t.sdk
	return t, nil
}

func otlpConfigured(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

func newOTLPExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, string, error) {
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto == "grpc" {
		exp, err := otlptracegrpc.New(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("otlp grpc exporter: %w", err)
		}
		return exp, "otlp/grpc", nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("otlp http exporter: %w", err)
	}
	return exp, "otlp/http", nil
}

// Shutdown exports the spans still queued and stops the provider.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.sdk == nil {
		return nil
	}
	return t.sdk.Shutdown(ctx)
}

// ChildSpansOnly wraps tp so that its tracers start spans only inside an
// existing trace. Instrumented dependencies (redisotel) would otherwise
// start a trace of their own for every command run outside a request:
// each usage flush and each metrics scrape.
func ChildSpansOnly(tp trace.TracerProvider) trace.TracerProvider {
	return childOnlyProvider{tp: tp}
}

type childOnlyProvider struct {
	embedded.TracerProvider
	tp trace.TracerProvider
}

func (p childOnlyProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return childOnlyTracer{t: p.tp.Tracer(name, opts...)}
}

type childOnlyTracer struct {
	embedded.Tracer
	t trace.Tracer
}

func (t childOnlyTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, trace.SpanFromContext(ctx) // a no-op span
	}
	return t.t.Start(ctx, name, opts...)
}
