package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quire/quire"
	"github.com/redis/go-redis/v9"
)

// RateLimits is a quire.RateLimiter keeping one GCRA bucket per key in
// Redis ("rl:<key>" holds the theoretical arrival time, in µs), so every
// quire process sharing the Redis shares the limits.
//
// A process may take several tokens from a bucket in one call and spend
// them locally (a lease): the hot path then pays one Redis round trip per
// lease, not per request. Leases never let more events through than the
// limit, across any number of processes; at worst a process's unspent
// lease expires and those tokens are lost.
type RateLimits struct {
	r    *Redis
	opts RateLimitOptions

	mu     sync.Mutex
	leases map[string]*lease

	downUntil atomic.Int64 // unix ns; Redis is not asked before then
}

// RateLimitOptions configure RateLimits.
type RateLimitOptions struct {
	// Now, when set, is the clock of the buckets; otherwise Redis's own
	// clock (TIME) is used, so processes need not agree on the time.
	Now func() time.Time
	// MaxLease caps the tokens one process takes at once (default 100; 1
	// asks Redis for every event).
	MaxLease int
	// LeaseTTL is how long a lease may be spent (default 1s).
	LeaseTTL time.Duration
	// Timeout bounds one Redis call (default 250ms); after a failure Redis
	// is not asked again for RetryAfter (default 1s), so an outage costs
	// requests nothing.
	Timeout    time.Duration
	RetryAfter time.Duration
	// MaxKeys bounds the leases kept in process (default 10,000).
	MaxKeys int
}

type lease struct {
	tokens  int
	expires time.Time
}

// NewRateLimits returns a rate limiter keeping its buckets in r.
func NewRateLimits(r *Redis, opts RateLimitOptions) *RateLimits {
	if opts.MaxLease <= 0 {
		opts.MaxLease = 100
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 250 * time.Millisecond
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = time.Second
	}
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = 10000
	}
	return &RateLimits{r: r, opts: opts, leases: map[string]*lease{}}
}

// gcra takes up to ARGV[3] tokens (0: only looks) from the bucket KEYS[1]
// of capacity ARGV[2], one token coming back every ARGV[1] µs. ARGV[4] is
// now in µs, or -1 for Redis's clock. It returns {taken, left, retry µs}.
var gcra = redis.NewScript(`
local interval = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local avail = math.floor((now + capacity * interval - tat) / interval)
if avail < 1 then
  return {0, 0, tat - (capacity - 1) * interval - now}
end
local n = want
if n > avail then n = avail end
if n > 0 then
  tat = tat + n * interval
  redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', math.ceil((tat - now) / 1000) + 1000)
end
return {n, avail - n, 0}`)

// Allow counts one event for key, from the process's lease when it has
// one.
func (rl *RateLimits) Allow(ctx context.Context, key string, l quire.Limit) (quire.Decision, error) {
	if !l.Enabled() {
		return quire.Decision{Allowed: true}, nil
	}
	now := time.Now()
	rl.mu.Lock()
	if ls := rl.leases[key]; ls != nil && ls.tokens > 0 && now.Before(ls.expires) {
		ls.tokens--
		left := ls.tokens
		rl.mu.Unlock()
		return quire.Decision{Allowed: true, Remaining: left}, nil
	}
	rl.mu.Unlock()

	// A lease holds at most a tenth of the bucket and what the bucket
	// regains while the lease lives, so slow limits (logins) stay exact.
	want := max(1, min(rl.opts.MaxLease, l.Capacity()/10, int(rl.opts.LeaseTTL/l.Interval())))
	taken, left, retry, err := rl.run(ctx, key, l, want)
	if err != nil {
		return quire.Decision{Allowed: true}, err
	}
	if taken == 0 {
		return quire.Decision{RetryAfter: retry}, nil
	}
	if taken > 1 {
		rl.mu.Lock()
		if len(rl.leases) >= rl.opts.MaxKeys {
			clear(rl.leases)
		}
		rl.leases[key] = &lease{tokens: taken - 1, expires: now.Add(rl.opts.LeaseTTL)}
		rl.mu.Unlock()
	}
	return quire.Decision{Allowed: true, Remaining: left + taken - 1}, nil
}

// Peek reports whether one more event for key would be allowed.
func (rl *RateLimits) Peek(ctx context.Context, key string, l quire.Limit) (quire.Decision, error) {
	if !l.Enabled() {
		return quire.Decision{Allowed: true}, nil
	}
	_, left, retry, err := rl.run(ctx, key, l, 0)
	if err != nil {
		return quire.Decision{Allowed: true}, err
	}
	return quire.Decision{Allowed: left > 0, Remaining: left, RetryAfter: retry}, nil
}

// Reset empties key's bucket.
func (rl *RateLimits) Reset(ctx context.Context, key string) error {
	rl.mu.Lock()
	delete(rl.leases, key)
	rl.mu.Unlock()
	if err := rl.guard(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, rl.opts.Timeout)
	defer cancel()
	if err := rl.r.client.Del(ctx, rl.r.key("rl", key)).Err(); err != nil {
		return rl.failed(err)
	}
	return nil
}

func (rl *RateLimits) run(ctx context.Context, key string, l quire.Limit, want int) (taken, left int, retry time.Duration, err error) {
	if err := rl.guard(); err != nil {
		return 0, 0, 0, err
	}
	now := int64(-1)
	if rl.opts.Now != nil {
		now = rl.opts.Now().UnixMicro()
	}
	ctx, cancel := context.WithTimeout(ctx, rl.opts.Timeout)
	defer cancel()
	res, err := gcra.Run(ctx, rl.r.client, []string{rl.r.key("rl", key)},
		l.Interval().Microseconds(), l.Capacity(), want, now).Int64Slice()
	if err != nil {
		return 0, 0, 0, rl.failed(err)
	}
	if len(res) != 3 {
		return 0, 0, 0, fmt.Errorf("rate limit script returned %d values", len(res))
	}
	return int(res[0]), int(res[1]), time.Duration(res[2]) * time.Microsecond, nil
}

// errRedisDown is returned while Redis is left alone after a failure.
var errRedisDown = errors.New("redis failed recently; not asked")

func (rl *RateLimits) guard() error {
	if time.Now().UnixNano() < rl.downUntil.Load() {
		return rateLimitUnavailable(errRedisDown)
	}
	return nil
}

func (rl *RateLimits) failed(err error) error {
	rl.downUntil.Store(time.Now().Add(rl.opts.RetryAfter).UnixNano())
	return rateLimitUnavailable(err)
}

func rateLimitUnavailable(err error) error {
	return &quire.Error{Code: quire.EUNAVAILABLE, Message: "rate limit store unavailable", Err: err}
}

var _ quire.RateLimiter = (*RateLimits)(nil)
