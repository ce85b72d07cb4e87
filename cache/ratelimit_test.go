package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/quire/quire"
)

// testRedis is a Redis a rate limit test runs against. clock is set for
// a miniredis, whose clock (the buckets' clock: TIME) the test moves; it
// is nil for the real Redis, whose clock a test cannot move.
type testRedis struct {
	url   string
	clock *redisClock
}

// redisClock is a miniredis's clock, stopped, moved by hand.
type redisClock struct {
	m *miniredis.Miniredis
	t time.Time
}

func (c *redisClock) Advance(d time.Duration) { c.t = c.t.Add(d); c.m.SetTime(c.t) }

// redisURLs are the Redis servers a rate limit test runs against: a fresh
// miniredis with its clock stopped, and the real one when
// QUIRE_TEST_REDIS_URL is set.
func redisURLs(t *testing.T) map[string]testRedis {
	m := miniredis.RunT(t)
	clock := &redisClock{m: m, t: time.Unix(1_800_000_000, 0)}
	m.SetTime(clock.t)
	m.ClockTTL(true) // keys expire by that clock too
	urls := map[string]testRedis{"miniredis": {url: "redis://" + m.Addr(), clock: clock}}
	if u := os.Getenv("QUIRE_TEST_REDIS_URL"); u != "" {
		urls["redis"] = testRedis{url: u}
	}
	return urls
}

// openShared opens n connections to url under one fresh key prefix, as n
// quire processes sharing a Redis would.
func openShared(t *testing.T, url string, n int) []*Redis {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	prefix := "quiretest:rl:" + hex.EncodeToString(b) + ":"
	var out []*Redis
	for range n {
		r, err := Open(context.Background(), Options{URL: url, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.DeleteAll(context.Background()); r.Close() })
		out = append(out, r)
	}
	return out
}

// TestRateLimitBucket fills a bucket and empties it. The timing (what
// comes back when) is checked on miniredis only, whose clock the test
// moves; against the real Redis the clock runs, so a refusal's wait is
// only checked to be about right.
func TestRateLimitBucket(t *testing.T) {
	for name, tr := range redisURLs(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			rl := NewRateLimits(openShared(t, tr.url, 1)[0], RateLimitOptions{})
			l := quire.Limit{Rate: 3, Period: time.Minute} // one back every 20s
			// retryIs tells a refusal's wait: exact on the stopped clock,
			// within a few seconds short of it on a running one.
			retryIs := func(got, want time.Duration) bool {
				if tr.clock != nil {
					return got == want
				}
				return got > want-5*time.Second && got <= want
			}

			for i := range 3 {
				d, err := rl.Allow(ctx, "k", l)
				if err != nil || !d.Allowed || d.Remaining != 2-i {
					t.Fatalf("event %d: %+v, %v; want allowed with %d left", i+1, d, err, 2-i)
				}
			}
			d, err := rl.Allow(ctx, "k", l)
			if err != nil || d.Allowed || !retryIs(d.RetryAfter, 20*time.Second) {
				t.Fatalf("4th event: %+v, %v; want refused, retry after 20s", d, err)
			}
			if d, _ := rl.Allow(ctx, "other", l); !d.Allowed {
				t.Fatal("another key is limited by k's bucket")
			}
			if d, _ := rl.Peek(ctx, "k", l); d.Allowed || !retryIs(d.RetryAfter, 20*time.Second) {
				t.Fatalf("peek at a full bucket: %+v", d)
			}

			if clock := tr.clock; clock != nil {
				clock.Advance(19 * time.Second)
				if d, _ := rl.Allow(ctx, "k", l); d.Allowed || d.RetryAfter != time.Second {
					t.Fatalf("after 19s: %+v; want refused, retry after 1s", d)
				}
				clock.Advance(time.Second)
				if d, _ := rl.Allow(ctx, "k", l); !d.Allowed {
					t.Fatalf("after 20s: %+v; want allowed", d)
				}
				if d, _ := rl.Allow(ctx, "k", l); d.Allowed {
					t.Fatalf("two events after 20s: %+v", d)
				}

				clock.Advance(time.Hour)
				for i := range 3 {
					if d, _ := rl.Peek(ctx, "k", l); !d.Allowed || d.Remaining != 3 {
						t.Fatalf("peek %d after an hour: %+v; want 3 left, nothing counted", i, d)
					}
				}
				for range 3 {
					rl.Allow(ctx, "k", l)
				}
			}
			if err := rl.Reset(ctx, "k"); err != nil {
				t.Fatal(err)
			}
			if d, _ := rl.Allow(ctx, "k", l); !d.Allowed || d.Remaining != 2 {
				t.Fatalf("after reset: %+v", d)
			}
		})
	}
}

// TestRateLimitKeys: the buckets live under the cache's key prefix, so
// DeleteAll removes them.
func TestRateLimitKeys(t *testing.T) {
	m, r, rl := miniLimits(t)
	if d, err := rl.Allow(context.Background(), "k", quire.Limit{Rate: 1, Period: time.Hour}); err != nil || !d.Allowed {
		t.Fatal(d, err)
	}
	if keys := m.Keys(); len(keys) != 1 || keys[0] != "t:rate:k" {
		t.Fatalf("keys %q, want the bucket under the prefix", keys)
	}
	if err := r.DeleteAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if keys := m.Keys(); len(keys) != 0 {
		t.Fatalf("keys %q left after DeleteAll", keys)
	}
}

// TestRateLimitRedisClock runs on a running clock: Redis's TIME, as in
// production.
func TestRateLimitRedisClock(t *testing.T) {
	urls := map[string]string{"miniredis": "redis://" + miniredis.RunT(t).Addr()}
	if u := os.Getenv("QUIRE_TEST_REDIS_URL"); u != "" {
		urls["redis"] = u
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			rl := NewRateLimits(openShared(t, url, 1)[0], RateLimitOptions{})
			l := quire.Limit{Rate: 5, Period: time.Hour, Burst: 2}
			for i := range 2 {
				if d, err := rl.Allow(ctx, "k", l); err != nil || !d.Allowed {
					t.Fatalf("event %d: %+v, %v", i+1, d, err)
				}
			}
			d, err := rl.Allow(ctx, "k", l)
			if err != nil || d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > 12*time.Minute {
				t.Fatalf("3rd event: %+v, %v; want refused, retry within 12m", d, err)
			}
		})
	}
}

// TestRateLimitShared is several processes with leases on one Redis: all
// together they never let more through than the bucket holds. On the
// real Redis the clock runs, but a token comes back only every 36s.
func TestRateLimitShared(t *testing.T) {
	for name, tr := range redisURLs(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var procs []*RateLimits
			for _, r := range openShared(t, tr.url, 3) {
				procs = append(procs, NewRateLimits(r, RateLimitOptions{LeaseTTL: time.Hour}))
			}
			l := quire.Limit{Rate: 100, Period: time.Hour} // leases of 10
			var mu sync.Mutex
			allowed := 0
			var wg sync.WaitGroup
			for _, rl := range procs {
				for range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 100 {
							d, err := rl.Allow(ctx, "k", l)
							if err != nil {
								t.Error(err)
								return
							}
							if d.Allowed {
								mu.Lock()
								allowed++
								mu.Unlock()
							}
						}
					}()
				}
			}
			wg.Wait()
			if allowed != 100 {
				t.Fatalf("%d events allowed across 3 processes, want exactly the 100 the bucket holds", allowed)
			}
		})
	}
}

func TestRateLimitRedisDown(t *testing.T) {
	m, _, rl := miniLimits(t)
	m.Close()
	l := quire.Limit{Rate: 1, Period: time.Hour}
	for i := range 3 {
		d, err := rl.Allow(context.Background(), "k", l)
		if quire.ErrorCode(err) != quire.EUNAVAILABLE || !d.Allowed {
			t.Fatalf("event %d with Redis down: %+v, %v; want allowed (fail open) and an unavailable error", i+1, d, err)
		}
	}
}

// BenchmarkRateLimitAllow is the cost of one request's check: from a
// lease (one Redis call per 100 requests) or from Redis every time.
func BenchmarkRateLimitAllow(b *testing.B) {
	m := miniredis.RunT(b)
	urls := map[string]string{"miniredis": "redis://" + m.Addr()}
	if u := os.Getenv("QUIRE_TEST_REDIS_URL"); u != "" {
		urls["redis"] = u
	}
	for name, url := range urls {
		r, err := Open(context.Background(), Options{URL: url, Prefix: "quiretest:rlbench:"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.DeleteAll(context.Background()); r.Close() })
		for lease, maxLease := range map[string]int{"lease": 0, "per-request": 1} {
			b.Run(name+"/"+lease, func(b *testing.B) {
				rl := NewRateLimits(r, RateLimitOptions{MaxLease: maxLease})
				l := quire.Limit{Rate: 1_000_000_000, Period: time.Second}
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if d, err := rl.Allow(ctx, "bench", l); err != nil || !d.Allowed {
						b.Fatal(d, err)
					}
				}
			})
		}
	}
}

// miniLimits is a rate limiter on a fresh miniredis, its keys under "t:".
func miniLimits(t *testing.T) (*miniredis.Miniredis, *Redis, *RateLimits) {
	t.Helper()
	m := miniredis.RunT(t)
	r, err := Open(context.Background(), Options{URL: "redis://" + m.Addr(), Prefix: "t:"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return m, r, NewRateLimits(r, RateLimitOptions{})
}
