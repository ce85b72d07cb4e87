package telemetry

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quire/quire"
)

// WebhookMetrics registers the webhook delivery metrics on reg and returns
// the hook app calls after each attempt (app.EventsConfig.Delivered),
// which counts it and then calls next, if set. backlog reports the events
// owed to active webhooks and the oldest one's age, for the queue gauges.
func WebhookMetrics(reg prometheus.Registerer, log *slog.Logger, backlog func(context.Context) (int, time.Duration), next func(*quire.Delivery, time.Duration)) func(*quire.Delivery, time.Duration) {
	outcomes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quire_webhook_deliveries_total",
		Help: "Webhook delivery attempts by outcome: success, failure (a non-2xx answer) or error (no answer: refused, timeout, reset).",
	}, []string{"outcome"})
	latency := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "quire_webhook_attempt_duration_seconds",
		Help:    "Time of one webhook delivery attempt.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	})
	lag := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "quire_webhook_delivery_lag_seconds",
		Help:    "Time from an event to its successful delivery.",
		Buckets: []float64{.01, .05, .1, .25, .5, 1, 2, 5, 10, 60, 600, 3600},
	})
	gauge := func(pick func(n int, oldest time.Duration) float64) func() float64 {
		return func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return pick(backlog(ctx))
		}
	}
	for _, c := range []prometheus.Collector{
		outcomes, latency, lag,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "quire_webhook_queue_depth",
			Help: "Events owed to active webhooks: not yet attempted, or waiting for a retry.",
		}, gauge(func(n int, _ time.Duration) float64 { return float64(n) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "quire_webhook_oldest_undelivered_seconds",
			Help: "Age of the oldest event owed to an active webhook; 0 when none.",
		}, gauge(func(_ int, oldest time.Duration) float64 { return oldest.Seconds() })),
	} {
		if err := reg.Register(c); err != nil && log != nil {
			log.Error("webhook metrics not registered", "error", err.Error())
		}
	}
	return func(d *quire.Delivery, since time.Duration) {
		switch {
		case d.Error != "" && d.StatusCode == 0:
			outcomes.WithLabelValues("error").Inc()
		case d.StatusCode/100 == 2:
			outcomes.WithLabelValues("success").Inc()
			lag.Observe(since.Seconds())
		default:
			outcomes.WithLabelValues("failure").Inc()
		}
		latency.Observe(float64(d.DurationMS) / 1000)
		if next != nil {
			next(d, since)
		}
	}
}
