package cache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/quire/quire"
	"github.com/redis/go-redis/v9"
)

// RateLimits is a quire.RateLimiter keeping one GCRA bucket per key in
// Redis ("<prefix>rate:<key>"), through go-redis/redis_rate, so every
// quire process sharing the Redis shares the limits. The buckets run on
// Redis's clock (TIME), so processes need not agree on the time; tests
// move it with miniredis (SetTime).
//
// A process may take several tokens from a bucket in one call and spend
// them locally (a lease): the hot path then pays one Redis round trip per
// lease, not per request. Leases never let more events through than the
// limit, across any number of processes; at worst a process's unspent
// lease expires and those tokens are lost.
type RateLimits struct {
	limiter *redis_rate.Limiter
	opts    RateLimitOptions

	mu     sync.Mutex
	leases map[string]*lease

	downUntil atomic.Int64 // unix ns; Redis is not asked before then
}

// RateLimitOptions configure RateLimits.
type RateLimitOptions struct {
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
	limiter := redis_rate.NewLimiter(prefixed{r.client, r.opts.Prefix})
	return &RateLimits{limiter: limiter, opts: opts, leases: map[string]*lease{}}
}

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
		// Another request of this process may have leased meanwhile: its
		// tokens are paid for, so they join this lease rather than vanish.
		if ls := rl.leases[key]; ls != nil && now.Before(ls.expires) {
			ls.tokens += taken - 1
			ls.expires = now.Add(rl.opts.LeaseTTL)
		} else {
			rl.leases[key] = &lease{tokens: taken - 1, expires: now.Add(rl.opts.LeaseTTL)}
		}
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
	if err := rl.limiter.Reset(ctx, key); err != nil {
		return rl.failed(err)
	}
	return nil
}

// run takes up to want tokens (0: only looks) from key's bucket. It
// returns the tokens taken, those left after, and, when none could be
// taken, how long until one can. When fewer than want are left,
// redis_rate takes all that is left, the fraction of a token too: a lease
// may cost up to a token it does not get, never one more than the limit.
func (rl *RateLimits) run(ctx context.Context, key string, l quire.Limit, want int) (taken, left int, retry time.Duration, err error) {
	if err := rl.guard(); err != nil {
		return 0, 0, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, rl.opts.Timeout)
	defer cancel()
	res, err := rl.limiter.AllowAtMost(ctx, key, redis_rate.Limit{Rate: l.Rate, Period: l.Period, Burst: l.Capacity()}, want)
	if err != nil {
		return 0, 0, 0, rl.failed(err)
	}
	if res.Allowed > 0 || res.Remaining > 0 {
		retry = 0 // redis_rate says -1: nothing to wait for
	} else {
		retry = max(res.RetryAfter, 0)
	}
	return res.Allowed, res.Remaining, retry, nil
}

// prefixed is the client redis_rate sees: it puts the cache's key prefix
// before redis_rate's own ("rate:"), so the buckets stay under the prefix
// (Redis.DeleteAll removes them with the rest).
type prefixed struct {
	c      redis.UniversalClient
	prefix string
}

func (p prefixed) keys(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = p.prefix + k
	}
	return out
}

func (p prefixed) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return p.c.Eval(ctx, script, p.keys(keys), args...)
}

func (p prefixed) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return p.c.EvalSha(ctx, sha1, p.keys(keys), args...)
}

func (p prefixed) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return p.c.EvalRO(ctx, script, p.keys(keys), args...)
}

func (p prefixed) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return p.c.EvalShaRO(ctx, sha1, p.keys(keys), args...)
}

func (p prefixed) ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd {
	return p.c.ScriptExists(ctx, hashes...)
}

func (p prefixed) ScriptLoad(ctx context.Context, script string) *redis.StringCmd {
	return p.c.ScriptLoad(ctx, script)
}

func (p prefixed) Del(ctx context.Context, keys ...string) *redis.IntCmd {
	return p.c.Del(ctx, p.keys(keys)...)
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
