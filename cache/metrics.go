package cache

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
)

// redisBuckets are the buckets, in seconds, of Redis command durations:
// from 100µs to a second (the client's read timeout).
var redisBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}

// instrument adds metrics and tracing to the client, as Options ask.
func (r *Redis) instrument() error {
	if r.opts.Metrics != nil {
		h := &metricsHook{
			duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Namespace: "quire", Name: "redis_command_duration_seconds",
				Help:    "Duration of Redis commands by command (a pipeline counts once, as \"pipeline\").",
				Buckets: redisBuckets,
			}, []string{"command"}),
			errors: prometheus.NewCounterVec(prometheus.CounterOpts{
				Namespace: "quire", Name: "redis_errors_total",
				Help: "Redis commands that failed (a missing key is not a failure), by command.",
			}, []string{"command"}),
		}
		if err := r.opts.Metrics.Register(h.duration); err != nil {
			return err
		}
		if err := r.opts.Metrics.Register(h.errors); err != nil {
			return err
		}
		r.client.AddHook(h)
	}
	if r.opts.TracerProvider != nil {
		// Statements stay out of spans: they hold session records and
		// other values that must not leave the process.
		return redisotel.InstrumentTracing(r.client,
			redisotel.WithTracerProvider(r.opts.TracerProvider),
			redisotel.WithDBStatement(false),
		)
	}
	return nil
}

// metricsHook times every command and counts failures.
type metricsHook struct {
	duration *prometheus.HistogramVec
	errors   *prometheus.CounterVec
}

func (h *metricsHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			h.errors.WithLabelValues("dial").Inc()
		}
		return conn, err
	}
}

func (h *metricsHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		name := strings.ToLower(cmd.Name())
		h.duration.WithLabelValues(name).Observe(time.Since(start).Seconds())
		if failed(err) {
			h.errors.WithLabelValues(name).Inc()
		}
		return err
	}
}

func (h *metricsHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		h.duration.WithLabelValues("pipeline").Observe(time.Since(start).Seconds())
		for _, c := range cmds {
			if failed(c.Err()) {
				h.errors.WithLabelValues(strings.ToLower(c.Name())).Inc()
			}
		}
		if failed(err) && len(cmds) == 0 {
			h.errors.WithLabelValues("pipeline").Inc()
		}
		return err
	}
}

// failed reports whether err is a failure: not a missing key, and not the
// NOSCRIPT answer that makes the client send a script it had only named.
func failed(err error) bool {
	return err != nil && !errors.Is(err, redis.Nil) && !strings.HasPrefix(err.Error(), "NOSCRIPT")
}
