// Package cache holds everything quire keeps in Redis: login sessions,
// cached prompt reads, the pub/sub channel that keeps the in-process
// tiers of several quire processes coherent, usage counts and rate limit
// buckets. It is the only package that imports go-redis (and redis_rate)
// or miniredis.
package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/quire/quire"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
)

// Options configures the Redis connection.
type Options struct {
	// URL is a redis:// URL. Empty runs an embedded in-process Redis.
	URL string
	// Prefix is put before every key, so several tests or deployments can
	// share one Redis.
	Prefix string
	// SnapshotPath is where the embedded Redis saves sessions on Close
	// and restores them from on start. Ignored with a real Redis.
	SnapshotPath string
	// Metrics, when set, receives quire_redis_* metrics (metrics.go).
	Metrics prometheus.Registerer
	// TracerProvider, when set, traces every Redis command.
	TracerProvider trace.TracerProvider
}

// Redis is quire's connection to Redis, real or embedded.
type Redis struct {
	opts     Options
	client   *redis.Client
	embedded *miniredis.Miniredis
}

// Open connects to Redis (or starts the embedded one) and, when embedded,
// restores the sessions snapshot.
func Open(ctx context.Context, opts Options) (*Redis, error) {
	r := &Redis{opts: opts}
	if opts.URL == "" {
		m := miniredis.NewMiniRedis()
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("start embedded redis: %w", err)
		}
		r.embedded = m
		r.client = redis.NewClient(&redis.Options{Addr: m.Addr()})
		if err := r.instrument(); err != nil {
			r.Close()
			return nil, err
		}
		if err := r.restore(ctx); err != nil {
			r.Close()
			return nil, err
		}
		return r, nil
	}
	o, err := redis.ParseURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("parse redis url: %w", err)
	}
	o.DialTimeout = 2 * time.Second
	o.ReadTimeout = time.Second
	o.WriteTimeout = time.Second
	o.MaxRetries = 1
	// A Redis that refuses connections is down: say so at once (callers
	// fail open or answer 503) rather than redial for half a second on
	// every command, which would stall every request during an outage.
	o.DialerRetries = 1
	r.client = redis.NewClient(o)
	if err := r.instrument(); err != nil {
		r.client.Close()
		return nil, err
	}
	return r, nil
}

// Embedded reports whether this is the in-process Redis.
func (r *Redis) Embedded() bool { return r.embedded != nil }

// Ping checks that Redis answers.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return unavailable(err)
	}
	return nil
}

// Close snapshots sessions (embedded only) and closes the connection.
func (r *Redis) Close() error {
	var err error
	if r.embedded != nil {
		err = r.snapshot(context.Background())
	}
	if cerr := r.client.Close(); err == nil {
		err = cerr
	}
	if r.embedded != nil {
		r.embedded.Close()
	}
	return err
}

func (r *Redis) key(parts ...string) string {
	k := r.opts.Prefix
	for i, p := range parts {
		if i > 0 {
			k += ":"
		}
		k += p
	}
	return k
}

// unavailable wraps a Redis failure as a 503.
func unavailable(err error) error {
	return &quire.Error{Code: quire.EUNAVAILABLE, Message: "session store unavailable", Err: err}
}

// snapshot writes every session to SnapshotPath, atomically.
func (r *Redis) snapshot(ctx context.Context) error {
	if r.opts.SnapshotPath == "" {
		return nil
	}
	var all []*quire.Session
	for _, k := range r.embedded.Keys() {
		if !isSessionKey(r.opts.Prefix, k) {
			continue
		}
		v, err := r.embedded.Get(k)
		if err != nil {
			continue
		}
		s := &quire.Session{}
		if json.Unmarshal([]byte(v), s) == nil {
			all = append(all, s)
		}
	}
	b, err := json.Marshal(all)
	if err != nil {
		return err
	}
	tmp := r.opts.SnapshotPath + ".tmp"
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, r.opts.SnapshotPath)
}

func isSessionKey(prefix, k string) bool {
	p := prefix + "sess:"
	return len(k) > len(p) && k[:len(p)] == p
}

// restore loads the sessions snapshot into the embedded Redis.
func (r *Redis) restore(ctx context.Context) error {
	if r.opts.SnapshotPath == "" {
		return nil
	}
	b, err := os.ReadFile(r.opts.SnapshotPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read sessions snapshot: %w", err)
	}
	var all []*quire.Session
	if err := json.Unmarshal(b, &all); err != nil {
		return fmt.Errorf("decode sessions snapshot: %w", err)
	}
	for _, s := range all {
		if time.Until(s.ExpiresAt) > 0 {
			if err := r.CreateSession(ctx, s); err != nil {
				return err
			}
		}
	}
	// The snapshot is consumed: were it kept, a crash (no new snapshot)
	// would bring back sessions revoked since this start.
	if err := os.Remove(r.opts.SnapshotPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove sessions snapshot: %w", err)
	}
	return nil
}

// DeleteAll removes every key under the configured prefix. Tests sharing
// one Redis use it to clean up after themselves (never FLUSHALL).
func (r *Redis) DeleteAll(ctx context.Context) error {
	if r.opts.Prefix == "" {
		return errors.New("cache: refusing to delete all keys without a prefix")
	}
	iter := r.client.Scan(ctx, 0, r.opts.Prefix+"*", 500).Iterator()
	for iter.Next(ctx) {
		if err := r.client.Del(ctx, iter.Val()).Err(); err != nil {
			return err
		}
	}
	return iter.Err()
}
