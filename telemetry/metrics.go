package telemetry

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/quire/quire"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Namespace prefixes every quire metric.
const Namespace = "quire"

// DurationBuckets are the histogram buckets, in seconds, of request and git
// operation durations: from half a millisecond to ten seconds.
var DurationBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// NewRegistry returns a registry holding the Go runtime and process
// collectors and quire_build_info for version.
func NewRegistry(version string) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	revision := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info",
		Help:        "Always 1; the labels say which quire is running.",
		ConstLabels: prometheus.Labels{"version": version, "go_version": runtime.Version(), "revision": revision},
	})
	info.Set(1)
	reg.MustRegister(info)
	return reg
}

// GitObserver returns the quire.ObserveFunc that gitstore calls around its
// operations. It records quire_git_operation_duration_seconds{op,result}
// and, when the context carries a span (a request's), a child span named
// "git <name>". Operations outside any trace (background flushes) are
// timed but not traced, so they do not start traces of their own.
func GitObserver(reg prometheus.Registerer, tp trace.TracerProvider) quire.ObserveFunc {
	hist := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "git_operation_duration_seconds",
		Help:    "Duration of git operations by op (commit, read, clone, push) and result (ok, error).",
		Buckets: DurationBuckets,
	}, []string{"op", "result"})
	reg.MustRegister(hist)
	for _, op := range []string{quire.GitOpCommit, quire.GitOpRead, quire.GitOpClone, quire.GitOpPush} {
		for _, res := range []string{"ok", "error"} {
			hist.WithLabelValues(op, res) // export every series from the start
		}
	}
	tracer := tracerOf(tp).Tracer("github.com/quire/quire/gitstore")
	return func(ctx context.Context, op, name string) (context.Context, func(error)) {
		start := time.Now()
		var span trace.Span
		if trace.SpanContextFromContext(ctx).IsValid() {
			ctx, span = tracer.Start(ctx, "git "+name, trace.WithAttributes(
				attribute.String("quire.git.op", op),
			))
		}
		return ctx, func(err error) {
			result := "ok"
			if err != nil && quire.ErrorCode(err) == quire.EINTERNAL {
				// Client mistakes (a missing version, a conflict) are
				// answers, not failures of git.
				result = "error"
			}
			hist.WithLabelValues(op, result).Observe(time.Since(start).Seconds())
			if span != nil {
				if result == "error" {
					span.RecordError(err)
					span.SetStatus(codes.Error, err.Error())
				}
				span.End()
			}
		}
	}
}

func tracerOf(tp trace.TracerProvider) trace.TracerProvider {
	if tp == nil {
		return noopProvider
	}
	return tp
}

// cacheCollector reports a quire.CacheStats as counters.
type cacheCollector struct {
	stats        quire.CacheStats
	hits, misses *prometheus.Desc
}

// RegisterCacheStats makes /metrics report quire_cache_hits_total and
// quire_cache_misses_total by tier, read from stats at each scrape.
func RegisterCacheStats(reg prometheus.Registerer, stats quire.CacheStats) error {
	return reg.Register(&cacheCollector{
		stats:  stats,
		hits:   prometheus.NewDesc(Namespace+"_cache_hits_total", "Cache hits by tier.", []string{"tier"}, nil),
		misses: prometheus.NewDesc(Namespace+"_cache_misses_total", "Cache misses by tier.", []string{"tier"}, nil),
	})
}

func (c *cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.hits
	ch <- c.misses
}

func (c *cacheCollector) Collect(ch chan<- prometheus.Metric) {
	for _, t := range c.stats.CacheStats() {
		ch <- prometheus.MustNewConstMetric(c.hits, prometheus.CounterValue, float64(t.Hits), t.Tier)
		ch <- prometheus.MustNewConstMetric(c.misses, prometheus.CounterValue, float64(t.Misses), t.Tier)
	}
}

// sessionsCollector reports the number of live login sessions.
type sessionsCollector struct {
	count func(ctx context.Context) (int64, error)
	desc  *prometheus.Desc
}

// RegisterSessions makes /metrics report quire_sessions_active, counted by
// count at each scrape. While the count fails (Redis is down) the series is
// left out rather than reported wrong; quire_redis_errors_total shows why.
func RegisterSessions(reg prometheus.Registerer, count func(ctx context.Context) (int64, error)) error {
	return reg.Register(&sessionsCollector{
		count: count,
		desc:  prometheus.NewDesc(Namespace+"_sessions_active", "Login sessions that have not expired or been revoked.", nil, nil),
	})
}

func (c *sessionsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *sessionsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := c.count(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n))
}
