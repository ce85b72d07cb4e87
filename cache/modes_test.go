package cache

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestParseOptions: each way of naming a Redis picks its mode, and a
// malformed one fails at Open with a message that says what is wrong.
func TestParseOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		mode    Mode
		addrs   []string
		master  string
		pass    string
		db      int
		wantErr string
	}{
		{name: "embedded", mode: ModeEmbedded},
		{name: "single", opts: Options{URL: "redis://:pw@10.0.0.1:6380/2"}, mode: ModeSingle, addrs: []string{"10.0.0.1:6380"}, pass: "pw", db: 2},
		{name: "sentinel url", opts: Options{URL: "redis+sentinel://h1:26379,h2:26379,h3:26379/mymaster"}, mode: ModeSentinel,
			addrs: []string{"h1:26379", "h2:26379", "h3:26379"}, master: "mymaster"},
		{name: "sentinel url with password and db", opts: Options{URL: "redis+sentinel://:s3cret@h1:26379/m/3"}, mode: ModeSentinel,
			addrs: []string{"h1:26379"}, master: "m", pass: "s3cret", db: 3},
		{name: "sentinel flags", opts: Options{SentinelMaster: "m", SentinelAddrs: []string{"h1:1", " h2:2 ", ""}, Password: "p"}, mode: ModeSentinel,
			addrs: []string{"h1:1", "h2:2"}, master: "m", pass: "p"},
		{name: "cluster", opts: Options{ClusterAddrs: []string{"a:7000", "b:7001"}}, mode: ModeCluster, addrs: []string{"a:7000", "b:7001"}},
		{name: "cluster of one seed", opts: Options{ClusterAddrs: []string{"a:7000"}}, mode: ModeCluster, addrs: []string{"a:7000"}},

		{name: "sentinel url without master", opts: Options{URL: "redis+sentinel://h1:26379"}, wantErr: "no master name"},
		{name: "sentinel url without address", opts: Options{URL: "redis+sentinel:///m"}, wantErr: "no Sentinel address"},
		{name: "sentinel url without port", opts: Options{URL: "redis+sentinel://h1/m"}, wantErr: `"h1" is not host:port`},
		{name: "sentinel url bad db", opts: Options{URL: "redis+sentinel://h1:1/m/x"}, wantErr: "bad database number"},
		{name: "sentinel url with query", opts: Options{URL: "redis+sentinel://h1:1/m?x=1"}, wantErr: "query parameters"},
		{name: "master without sentinels", opts: Options{SentinelMaster: "m"}, wantErr: "needs both"},
		{name: "sentinels without master", opts: Options{SentinelAddrs: []string{"h:1"}}, wantErr: "needs both"},
		{name: "url and cluster", opts: Options{URL: "redis://h:1", ClusterAddrs: []string{"a:1"}}, wantErr: "give one of"},
		{name: "cluster bad address", opts: Options{ClusterAddrs: []string{"a"}}, wantErr: `"a" is not host:port`},
		{name: "bad scheme", opts: Options{URL: "http://h:1"}, wantErr: "parse redis url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uo, mode, err := universalOptions(tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				if _, err := Open(context.Background(), tc.opts); err == nil {
					t.Fatal("Open accepted it")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if mode != tc.mode {
				t.Fatalf("mode %s, want %s", mode, tc.mode)
			}
			if mode == ModeEmbedded {
				return
			}
			if fmt.Sprint(uo.Addrs) != fmt.Sprint(tc.addrs) || uo.MasterName != tc.master || uo.Password != tc.pass || uo.DB != tc.db {
				t.Fatalf("options %v %q %q %d, want %v %q %q %d", uo.Addrs, uo.MasterName, uo.Password, uo.DB, tc.addrs, tc.master, tc.pass, tc.db)
			}
			if tc.mode == ModeCluster && !uo.IsClusterMode {
				t.Fatal("cluster mode not set: one seed would be taken for a single server")
			}
		})
	}
}

// fakeUsageLog is a durable usage log in memory.
type fakeUsageLog struct {
	mu  sync.Mutex
	got *quire.UsageDelta
}

func (f *fakeUsageLog) AddUsage(ctx context.Context, d *quire.UsageDelta) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.got == nil {
		f.got = newDelta()
	}
	merge(f.got, d)
	return nil
}

func (f *fakeUsageLog) PromptUsage(ctx context.Context, id string) (*quire.PromptUsage, error) {
	return &quire.PromptUsage{PromptID: id}, nil
}

func (f *fakeUsageLog) KeysLastUsed(ctx context.Context) (map[string]time.Time, error) {
	return map[string]time.Time{}, nil
}

// TestRedisModes runs every use quire makes of Redis against a real
// server in each mode: one server, a Sentinel-watched primary with a
// replica, and a Cluster of three primaries. Two connections stand for
// two quire processes.
func TestRedisModes(t *testing.T) {
	redistest.Binary(t)
	modes := map[string]func(t *testing.T) Options{
		"single": func(t *testing.T) Options {
			return Options{URL: "redis://" + redistest.StartServer(t).Addr}
		},
		"sentinel url": func(t *testing.T) Options {
			r := redistest.StartSentinel(t, "qm", 1, 1, 5*time.Second)
			return Options{URL: "redis+sentinel://" + strings.Join(r.SentinelAddrs(), ",") + "/qm"}
		},
		"cluster": func(t *testing.T) Options {
			return Options{ClusterAddrs: redistest.StartCluster(t, 3).Addrs()}
		},
	}
	for name, start := range modes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts := start(t)
			opts.Prefix = "quire:"
			a, b := openMode(t, opts), openMode(t, opts)
			exerciseRedis(t, a, b)
		})
	}
}

func openMode(t *testing.T, opts Options) *Redis {
	t.Helper()
	r, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if err := r.Ping(context.Background()); err != nil {
		t.Fatalf("ping: %v", err)
	}
	return r
}

func exerciseRedis(t *testing.T, a, b *Redis) {
	ctx := context.Background()
	t.Run("sessions", func(t *testing.T) {
		exp := time.Now().Add(time.Hour).Truncate(time.Second)
		for i := range 3 {
			s := &quire.Session{ID: fmt.Sprintf("s%d", i), UserID: "u1", ExpiresAt: exp, CreatedAt: time.Now().Add(time.Duration(i) * time.Second)}
			if err := a.CreateSession(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		got, err := b.Session(ctx, "s1")
		if err != nil || got.UserID != "u1" {
			t.Fatalf("session from the other process: %v %v", got, err)
		}
		list, err := b.Sessions(ctx, "u1")
		if err != nil || len(list) != 3 || list[0].ID != "s2" {
			t.Fatalf("sessions: %v %v", list, err)
		}
		if err := b.DeleteSession(ctx, "s0"); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Session(ctx, "s0"); quire.ErrorCode(err) != quire.ENOTFOUND {
			t.Fatalf("revoked session: %v", err)
		}
		if n, err := a.ActiveSessions(ctx); err != nil || n != 2 {
			t.Fatalf("active sessions %d %v, want 2", n, err)
		}
	})
	t.Run("usage", func(t *testing.T) {
		durable := &fakeUsageLog{}
		ua, err := NewUsage(a, durable, UsageOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ub, err := NewUsage(b, durable, UsageOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			ua.RecordRender(ctx, "p1", 1)
			ub.RecordRender(ctx, "p1", 1)
		}
		ub.RecordRender(ctx, "p2", 3)
		ua.RecordKeyUse(ctx, "k1")
		for _, u := range []*Usage{ua, ub} {
			if err := u.Push(ctx); err != nil {
				t.Fatalf("push: %v", err)
			}
		}
		if err := ua.Flush(ctx); err != nil {
			t.Fatalf("flush (one script over the usage keys): %v", err)
		}
		durable.mu.Lock()
		defer durable.mu.Unlock()
		if durable.got == nil || durable.got.Renders[quire.VersionKey{PromptID: "p1", Version: 1}] != 10 ||
			durable.got.Renders[quire.VersionKey{PromptID: "p2", Version: 3}] != 1 || durable.got.KeysUsed["k1"].IsZero() {
			t.Fatalf("flushed %+v", durable.got)
		}
	})
	t.Run("rate limits", func(t *testing.T) {
		la, lb := NewRateLimits(a, RateLimitOptions{MaxLease: 1}), NewRateLimits(b, RateLimitOptions{MaxLease: 1})
		l := quire.Limit{Rate: 4, Period: time.Hour, Burst: 4}
		allowed := 0
		for i := range 10 {
			rl := la
			if i%2 == 1 {
				rl = lb
			}
			d, err := rl.Allow(ctx, "user:x", l)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				allowed++
			}
		}
		if allowed != 4 {
			t.Fatalf("%d of 10 allowed across two processes, want the burst of 4", allowed)
		}
	})
	t.Run("prompt invalidation over pub/sub", func(t *testing.T) {
		f := &fakePrompts{live: "c1"}
		pa := NewPrompts(a, f, PromptOptions{})
		defer pa.Close()
		pb := NewPrompts(b, f, PromptOptions{})
		defer pb.Close()
		for _, id := range []string{"x1", "x2", "x3", "x4"} {
			if _, err := pb.LivePrompt(ctx, &quire.Asset{ID: id, Kind: quire.KindPrompt}); err != nil {
				t.Fatal(err)
			}
		}
		// The subscription is confirmed asynchronously: publish until b
		// hears it (a message sent before it subscribed is lost, by design).
		redistest.WaitFor(t, 10*time.Second, "an invalidation published by a to reach b", func() bool {
			before := pb.Stats().Invalidations
			pa.Invalidate(quire.KindPrompt, "x1")
			deadline := time.Now().Add(200 * time.Millisecond)
			for time.Now().Before(deadline) {
				if pb.Stats().Invalidations > before {
					return true
				}
				time.Sleep(5 * time.Millisecond)
			}
			return false
		})
		pb.mu.RLock()
		_, kept := pb.live["x1"]
		pb.mu.RUnlock()
		if kept {
			t.Fatal("b kept the entry a invalidated")
		}
		if err := pa.PurgeAll(ctx); err != nil {
			t.Fatalf("purge all: %v", err)
		}
		if n := countKeys(t, a, a.key("prompt", "*")); n != 0 {
			t.Fatalf("%d prompt keys left after PurgeAll", n)
		}
	})
	t.Run("delete all", func(t *testing.T) {
		if n := countKeys(t, a, a.opts.Prefix+"*"); n == 0 {
			t.Fatal("no keys to delete: the test wrote nothing")
		}
		if err := a.DeleteAll(ctx); err != nil {
			t.Fatal(err)
		}
		if n := countKeys(t, a, a.opts.Prefix+"*"); n != 0 {
			t.Fatalf("%d keys left after DeleteAll", n)
		}
	})
}

// countKeys counts the keys matching pattern on every primary.
func countKeys(t *testing.T, r *Redis, pattern string) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	count := func(ctx context.Context, c redis.Cmdable) error {
		keys, err := c.Keys(ctx, pattern).Result()
		n += len(keys)
		return err
	}
	var err error
	if cc, ok := r.client.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return count(ctx, c)
		})
	} else {
		err = count(ctx, r.client)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSessionWritesWaitForReplica: with Sentinel, a login or revocation is
// acknowledged once the replica has it (so a failover cannot undo a
// revocation), and a replica that does not answer delays it by at most
// replicaWait instead of failing it.
func TestSessionWritesWaitForReplica(t *testing.T) {
	redistest.Binary(t)
	rd := redistest.StartSentinel(t, "qw", 1, 1, 5*time.Second)
	r := openMode(t, Options{SentinelMaster: "qw", SentinelAddrs: rd.SentinelAddrs(), Prefix: "wait:"})
	ctx := context.Background()
	replica := rd.Replicas[0].Client()
	s := &quire.Session{ID: "w1", UserID: "u", ExpiresAt: time.Now().Add(time.Hour)}
	if err := r.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	if n, err := replica.Exists(ctx, r.key(sessionsTag, "sess", "w1")).Result(); err != nil || n != 1 {
		t.Fatalf("the replica lacks the acknowledged session: %d %v", n, err)
	}
	rd.Replicas[0].Pause()
	defer rd.Replicas[0].Resume()
	start := time.Now()
	if err := r.DeleteSession(ctx, "w1"); err != nil {
		t.Fatalf("revocation with the replica hung: %v", err)
	}
	if d := time.Since(start); d < replicaWait/2 || d > 10*replicaWait {
		t.Fatalf("the revocation took %s: it did not wait for the replica (up to %s)", d, replicaWait)
	}
	if _, err := r.Session(ctx, "w1"); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Fatalf("revoked session still there: %v", err)
	}
}
