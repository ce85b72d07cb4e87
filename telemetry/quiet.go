package telemetry

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// QuietLog lets a warning through at most every 10s: while a dependency is
// down, a few lines say so instead of one per request. The zero value is
// ready.
type QuietLog struct {
	last    atomic.Int64 // unix ns of the last line written
	skipped atomic.Int64 // lines held back since
}

// Warn logs msg to log unless a line went out in the last 10s; the line
// says how many were held back.
func (q *QuietLog) Warn(ctx context.Context, log *slog.Logger, msg string, args ...any) {
	now := time.Now().UnixNano()
	last := q.last.Load()
	if now-last < int64(10*time.Second) || !q.last.CompareAndSwap(last, now) {
		q.skipped.Add(1)
		return
	}
	log.WarnContext(ctx, msg, append(args, "similar_lines_skipped", q.skipped.Swap(0))...)
}

// RateLimitMetrics counts rate-limit refusals by limit and the checks that
// failed and let a request through, for every door and the login
// throttle alike. Allowed requests are not counted, to keep the hot path
// free.
type RateLimitMetrics struct {
	limited  *prometheus.CounterVec
	failOpen prometheus.Counter
	log      *slog.Logger
	warn     QuietLog
}

// NewRateLimitMetrics registers the counters on reg (none when nil) and
// logs limiter failures to log.
func NewRateLimitMetrics(reg prometheus.Registerer, log *slog.Logger) *RateLimitMetrics {
	m := &RateLimitMetrics{
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "quire", Name: "rate_limited_total",
			Help: "Requests refused with 429, by limit (request, login_account, login_address).",
		}, []string{"limit"}),
		failOpen: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "quire", Name: "rate_limit_errors_total",
			Help: "Rate limit checks that failed (Redis down) and let the request through.",
		}),
		log: log,
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if reg != nil {
		reg.MustRegister(m.limited, m.failOpen)
	}
	return m
}

// Limited counts one refusal under limit.
func (m *RateLimitMetrics) Limited(limit string) { m.limited.WithLabelValues(limit).Inc() }

// Failed counts a check that failed and logs it (quietly).
func (m *RateLimitMetrics) Failed(ctx context.Context, err error) {
	m.failOpen.Inc()
	m.warn.Warn(ctx, m.log, "rate limit unknown, request let through", "error", err.Error())
}
