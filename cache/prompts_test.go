package cache

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/quire/quire"
)

// fakePrompts is a PromptStore whose live commit the test moves by hand;
// LivePrompt can be held to stage a slow reader.
type fakePrompts struct {
	mu     sync.Mutex
	live   string
	loads  int
	hold   chan struct{} // when set, LivePrompt waits on it
	loaded chan struct{} // signalled when LivePrompt has read the commit
}

func (f *fakePrompts) set(c string) { f.mu.Lock(); f.live = c; f.mu.Unlock() }

func (f *fakePrompts) LiveCommit(ctx context.Context, a *quire.Asset) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.live, nil
}

func (f *fakePrompts) LivePrompt(ctx context.Context, a *quire.Asset) (*quire.PromptVersion, error) {
	f.mu.Lock()
	c, hold, loaded := f.live, f.hold, f.loaded
	f.loads++
	f.mu.Unlock()
	if hold != nil {
		loaded <- struct{}{}
		<-hold
	}
	t := "template at " + c
	return &quire.PromptVersion{Version: &quire.Version{Number: 1, Commit: c, State: quire.StatePublished, Live: true}, Content: &quire.PromptContent{Template: &t}}, nil
}

func (f *fakePrompts) PromptContent(ctx context.Context, a *quire.Asset, commit string) (*quire.PromptContent, error) {
	t := "template at " + commit
	return &quire.PromptContent{Template: &t}, nil
}

func (f *fakePrompts) WritePrompt(ctx context.Context, by quire.Actor, a *quire.Asset, n int, c *quire.PromptContent, ifMatch string) (*quire.Version, error) {
	return nil, nil
}

func (f *fakePrompts) EditPrompt(ctx context.Context, by quire.Actor, a *quire.Asset, n int, edit func(*quire.PromptContent) *quire.PromptContent, ifMatch string) (*quire.Version, error) {
	return nil, nil
}

func newTestPrompts(t *testing.T, m *miniredis.Miniredis, f quire.PromptStore) *Prompts {
	t.Helper()
	r, err := Open(context.Background(), Options{URL: "redis://" + m.Addr(), Prefix: "t:"})
	if err != nil {
		t.Fatal(err)
	}
	p := NewPrompts(r, f, PromptOptions{RetryAfter: 50 * time.Millisecond})
	t.Cleanup(func() { p.Close(); r.Close() })
	return p
}

var asset = &quire.Asset{ID: "a1", Kind: quire.KindPrompt}

func liveCommit(t *testing.T, p *Prompts) string {
	t.Helper()
	pv, err := p.LivePrompt(context.Background(), asset)
	if err != nil {
		t.Fatal(err)
	}
	if *pv.Content.Template != "template at "+pv.Version.Commit {
		t.Fatalf("content of %s is %q", pv.Version.Commit, *pv.Content.Template)
	}
	return pv.Version.Commit
}

// A change whose invalidation never arrives (lost message, Redis down)
// is still seen: entries are checked against the live commit.
func TestLostInvalidation(t *testing.T) {
	m := miniredis.RunT(t)
	f := &fakePrompts{live: "c1"}
	a, b := newTestPrompts(t, m, f), newTestPrompts(t, m, f)
	liveCommit(t, a)
	liveCommit(t, b)
	if st := b.Stats(); st.RedisHits != 1 || f.loads != 1 {
		t.Fatalf("b not served by Redis: %+v, loads %d", st, f.loads)
	}
	f.set("c2") // no Invalidate
	if c := liveCommit(t, a); c != "c2" {
		t.Fatalf("a served %s", c)
	}
	if c := liveCommit(t, b); c != "c2" {
		t.Fatalf("b served %s", c)
	}
}

// A reader that read the old live version fills the tiers after the
// change and its invalidation: the stale entry is never served.
func TestStaleFillAfterInvalidation(t *testing.T) {
	m := miniredis.RunT(t)
	f := &fakePrompts{live: "c1", hold: make(chan struct{}), loaded: make(chan struct{})}
	p := newTestPrompts(t, m, f)
	done := make(chan string)
	go func() { done <- liveCommit(t, p) }()
	<-f.loaded // the slow reader has read c1 from "git"
	f.mu.Lock()
	hold := f.hold
	f.live, f.hold = "c2", nil
	f.mu.Unlock()
	p.Invalidate(quire.KindPrompt, asset.ID)
	close(hold)
	if c := <-done; c != "c1" {
		t.Fatalf("slow reader got %s", c)
	}
	if got, _ := m.Get("t:prompt:a1:live"); got == "" {
		t.Fatal("the slow reader did not fill Redis (the case under test)")
	}
	if c := liveCommit(t, p); c != "c2" {
		t.Fatalf("served %s after the change", c)
	}
	q := newTestPrompts(t, m, f)
	if c := liveCommit(t, q); c != "c2" {
		t.Fatalf("another process served %s", c)
	}
}

func TestPubSubDropsLocal(t *testing.T) {
	m := miniredis.RunT(t)
	f := &fakePrompts{live: "c1"}
	a, b := newTestPrompts(t, m, f), newTestPrompts(t, m, f)
	liveCommit(t, a)
	liveCommit(t, b)
	a.Invalidate(quire.KindPrompt, asset.ID)
	a.Invalidate(quire.KindSkill, asset.ID) // skills are not cached
	waitFor(t, func() bool { return b.Stats().Invalidations == 1 })
	b.mu.RLock()
	n := len(b.live)
	b.mu.RUnlock()
	if n != 0 {
		t.Fatal("b kept its entry")
	}
	if err := a.PurgeAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return b.Stats().Invalidations == 2 })
}

func TestRedisDown(t *testing.T) {
	m := miniredis.RunT(t)
	f := &fakePrompts{live: "c1"}
	p := newTestPrompts(t, m, f)
	liveCommit(t, p)
	m.Close()
	f.set("c2")
	start := time.Now()
	for range 20 {
		if c := liveCommit(t, p); c != "c2" {
			t.Fatalf("served %s", c)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("reads took %v with Redis down", d)
	}
	if st := p.Stats(); st.RedisErrors == 0 || st.RedisErrors > 2 {
		t.Fatalf("Redis should be tried once, then left alone: %+v", st)
	}
	if err := p.Purge(context.Background(), asset); quire.ErrorCode(err) != quire.EUNAVAILABLE {
		t.Fatalf("purge with Redis down: %v", err)
	}
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p.redisUp) // Redis is left alone for a while after a failure
	f.set("c3")
	liveCommit(t, p)
	waitFor(t, func() bool { v, _ := m.Get("t:prompt:a1:live"); return v != "" })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// genPrompts is a fakePrompts with a ref generation the test moves.
type genPrompts struct {
	*fakePrompts
	gen atomic.Uint64
}

func (g *genPrompts) RefGeneration() (uint64, bool) { return g.gen.Load(), true }

// TestGeneration: the generation follows the store's and moves with
// every invalidation this process hears of, its own or another's over
// pub/sub; over a store that cannot tell there is none.
func TestGeneration(t *testing.T) {
	m := miniredis.RunT(t)
	f := &genPrompts{fakePrompts: &fakePrompts{live: "c1"}}
	a, b := newTestPrompts(t, m, f), newTestPrompts(t, m, f)
	a0, ok := a.Generation()
	if !ok {
		t.Fatal("no generation over a store that has one")
	}
	if a1, _ := a.Generation(); a1 != a0 {
		t.Fatalf("generation moved from %d to %d with nothing changed", a0, a1)
	}
	f.gen.Add(1)
	a1, _ := a.Generation()
	if a1 == a0 {
		t.Fatal("generation unchanged after the store's moved")
	}
	b1, _ := b.Generation()
	a.Invalidate(quire.KindPrompt, asset.ID)
	if a2, _ := a.Generation(); a2 == a1 {
		t.Fatal("generation unchanged after an invalidation")
	}
	// b subscribes in the background: say it again until it hears.
	waitFor(t, func() bool {
		a.Invalidate(quire.KindPrompt, asset.ID)
		g, _ := b.Generation()
		return g != b1
	})
	if _, ok := newTestPrompts(t, m, &fakePrompts{}).Generation(); ok {
		t.Fatal("a generation over a store without one")
	}
}
