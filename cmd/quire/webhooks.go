package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/quire/quire/internal/server"
)

// webhookFlags adds the event delivery flags, each with its QUIRE_*
// variable.
func webhookFlags(fs *flag.FlagSet, w *server.WebhookOptions) error {
	if v := os.Getenv("QUIRE_WEBHOOK_ALLOW_PRIVATE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("QUIRE_WEBHOOK_ALLOW_PRIVATE: %w", err)
		}
		w.AllowPrivate = b
	}
	fs.BoolVar(&w.AllowPrivate, "webhook-allow-private", w.AllowPrivate, "let webhooks reach loopback, private and link-local addresses (on-premise receivers, tests); off, the SSRF guard refuses them ($QUIRE_WEBHOOK_ALLOW_PRIVATE)")
	sched := (*schedule)(&w.RetrySchedule)
	if v := os.Getenv("QUIRE_WEBHOOK_RETRY_SCHEDULE"); v != "" {
		if err := sched.Set(v); err != nil {
			return fmt.Errorf("QUIRE_WEBHOOK_RETRY_SCHEDULE: %w", err)
		}
	}
	fs.Var(sched, "webhook-retry-schedule", "waits before each retry of a failed webhook delivery, comma-separated Go durations, e.g. 1s,1s,2s; empty is 5s,5m,30m,2h,5h,10h,10h ($QUIRE_WEBHOOK_RETRY_SCHEDULE)")
	if v := os.Getenv("QUIRE_WEBHOOK_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("QUIRE_WEBHOOK_TIMEOUT: %w", err)
		}
		w.Timeout = d
	}
	fs.DurationVar(&w.Timeout, "webhook-timeout", w.Timeout, "how long one webhook delivery attempt may take; 0 is 10s ($QUIRE_WEBHOOK_TIMEOUT)")
	if v := os.Getenv("QUIRE_EVENT_STREAM_MAX"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("QUIRE_EVENT_STREAM_MAX: %q is not a non-negative Go duration such as 1h", v)
		}
		w.StreamMax = d
	}
	fs.DurationVar(&w.StreamMax, "event-stream-max", w.StreamMax, "how long one event stream (GET .../events) lasts before it ends with a retry: hint and the client reconnects with Last-Event-ID; 0 is 1h ($QUIRE_EVENT_STREAM_MAX)")
	return nil
}

// schedule is a retry schedule as a flag: comma-separated durations.
type schedule []time.Duration

func (s *schedule) String() string {
	if s == nil {
		return ""
	}
	parts := make([]string, len(*s))
	for i, d := range *s {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

func (s *schedule) Set(v string) error {
	var out []time.Duration
	for _, p := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d < 0 {
			return fmt.Errorf("retry schedule %q: each part must be a non-negative Go duration such as 5s", v)
		}
		out = append(out, d)
	}
	*s = out
	return nil
}
