package app

import (
	"context"
	"sync"
	"time"

	"github.com/quire/quire"
	"golang.org/x/time/rate"
)

// localLimiter is a quire.RateLimiter kept in this process: the login
// throttle while the Redis one cannot be consulted. Each key is a token
// bucket (golang.org/x/time/rate) of the limit's rate and capacity, as the
// Redis buckets are.
type localLimiter struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	max     int
	now     func() time.Time
}

func newLocalLimiter(maxKeys int, now func() time.Time) *localLimiter {
	if now == nil {
		now = time.Now
	}
	return &localLimiter{buckets: map[string]*rate.Limiter{}, max: maxKeys, now: now}
}

// bucket returns key's bucket, or nil when the table is full even after
// dropping the buckets that are full again (idle keys).
func (l *localLimiter) bucket(key string, lim quire.Limit, now time.Time) *rate.Limiter {
	if b := l.buckets[key]; b != nil {
		return b
	}
	if len(l.buckets) >= l.max {
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(b.Burst()) {
				delete(l.buckets, k)
			}
		}
		if len(l.buckets) >= l.max {
			return nil
		}
	}
	b := rate.NewLimiter(rate.Every(lim.Interval()), lim.Capacity())
	l.buckets[key] = b
	return b
}

// Allow counts one event for key. With the table full of busy keys it
// refuses: the table is only used while Redis is down, when a login
// cannot succeed anyway.
func (l *localLimiter) Allow(_ context.Context, key string, lim quire.Limit) (quire.Decision, error) {
	if !lim.Enabled() {
		return quire.Decision{Allowed: true}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.bucket(key, lim, now)
	if b == nil {
		return quire.Decision{RetryAfter: lim.Interval()}, nil
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return quire.Decision{RetryAfter: d}, nil
	}
	return quire.Decision{Allowed: true, Remaining: int(b.TokensAt(now))}, nil
}

// Peek reports whether one more event for key would be allowed.
func (l *localLimiter) Peek(_ context.Context, key string, lim quire.Limit) (quire.Decision, error) {
	if !lim.Enabled() {
		return quire.Decision{Allowed: true}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		return quire.Decision{Allowed: true, Remaining: lim.Capacity()}, nil
	}
	now := l.now()
	if t := b.TokensAt(now); t < 1 {
		return quire.Decision{RetryAfter: time.Duration((1 - t) * float64(lim.Interval()))}, nil
	}
	return quire.Decision{Allowed: true, Remaining: int(b.TokensAt(now))}, nil
}

// Reset forgets key's count.
func (l *localLimiter) Reset(_ context.Context, key string) error {
	l.mu.Lock()
	delete(l.buckets, key)
	l.mu.Unlock()
	return nil
}

var _ quire.RateLimiter = (*localLimiter)(nil)
