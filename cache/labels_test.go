package cache

import (
	"context"
	"sync"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/quire/quire"
)

// labelPrompts is a fakePrompts with labels: the test moves the label
// log's commit and what each label names by hand.
type labelPrompts struct {
	*fakePrompts
	mu     sync.Mutex
	at     string         // the label log's commit
	labels map[string]int // label -> version, as recorded at at
	loads  int
}

func (l *labelPrompts) move(at, name string, version int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at = at
	if version == 0 {
		delete(l.labels, name)
	} else {
		l.labels[name] = version
	}
}

func (l *labelPrompts) LabelsCommit(ctx context.Context, a *quire.Asset) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.at, nil
}

func (l *labelPrompts) LabelPromptAt(ctx context.Context, a *quire.Asset, name, at string) (*quire.PromptVersion, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loads++
	n, ok := l.labels[name]
	if !ok || at != l.at {
		return nil, quire.Errorf(quire.ENOTFOUND, "label %s not found", name)
	}
	t := "template of " + name + " at " + at
	return &quire.PromptVersion{Version: &quire.Version{Number: n, Commit: at, State: quire.StatePublished}, Content: &quire.PromptContent{Template: &t}}, nil
}

// byLabel reads label name through p and returns the version number and
// the label-log commit it was read at.
func byLabel(t *testing.T, p *Prompts, name string) (int, string) {
	t.Helper()
	pv, err := p.LabelPrompt(context.Background(), asset, name)
	if err != nil {
		t.Fatalf("label %s: %v", name, err)
	}
	return pv.Version.Number, pv.Version.Commit
}

// TestLabelTier: reads by label are served from the in-process tier and
// from Redis to another process, and a label move is seen by the next
// read of both processes though no invalidation is sent (a lost pub/sub
// message): every entry is checked against the label log's commit. An
// invalidation drops the prompt's label entries with its live one.
func TestLabelTier(t *testing.T) {
	m := miniredis.RunT(t)
	f := &labelPrompts{fakePrompts: &fakePrompts{live: "c1"}, at: "L1", labels: map[string]int{"staging": 1, "production": 1}}
	a, b := newTestPrompts(t, m, f), newTestPrompts(t, m, f)
	for range 3 {
		byLabel(t, a, "staging")
	}
	byLabel(t, b, "staging")
	if st := a.Stats(); st.LabelHits != 2 || st.LabelLoads != 1 {
		t.Fatalf("a: %+v", st)
	}
	if st := b.Stats(); st.RedisHits != 1 || st.LabelLoads != 0 || f.loads != 1 {
		t.Fatalf("b not served by Redis: %+v, loads %d", st, f.loads)
	}
	// Each label has its own entry.
	if n, _ := byLabel(t, b, "production"); n != 1 || f.loads != 2 {
		t.Fatalf("production: v%d, loads %d", n, f.loads)
	}

	f.move("L2", "staging", 2) // no Invalidate
	for _, p := range []*Prompts{a, b} {
		if n, at := byLabel(t, p, "staging"); n != 2 || at != "L2" {
			t.Fatalf("after the move: v%d at %s", n, at)
		}
		if n, at := byLabel(t, p, "production"); n != 1 || at != "L2" {
			t.Fatalf("the other label after the move: v%d at %s", n, at)
		}
	}
	f.move("L3", "staging", 0) // deleted, no Invalidate
	for _, p := range []*Prompts{a, b} {
		if _, err := p.LabelPrompt(context.Background(), asset, "staging"); quire.ErrorCode(err) != quire.ENOTFOUND {
			t.Fatalf("deleted label: %v", err)
		}
	}
	f.move("", "production", 0)
	if _, err := a.LabelPrompt(context.Background(), asset, "production"); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Fatalf("no label log: %v", err)
	}

	f.move("L4", "staging", 3)
	byLabel(t, a, "staging")
	if got := m.HGet("t:prompt:a1:labels", "staging"); got == "" {
		t.Fatal("no Redis entry for the label")
	}
	a.Invalidate(quire.KindPrompt, asset.ID)
	if m.Exists("t:prompt:a1:labels") {
		t.Fatal("the invalidation left the Redis label entries")
	}
	a.mu.RLock()
	n := len(a.labels)
	a.mu.RUnlock()
	if n != 0 {
		t.Fatal("the invalidation left the in-process label entries")
	}
	waitFor(t, func() bool { b.mu.RLock(); defer b.mu.RUnlock(); return len(b.labels) == 0 })
}

// TestLabelStoreWithoutLabels: over a store that cannot read by label,
// a read by label is EUNAVAILABLE, not a panic.
func TestLabelStoreWithoutLabels(t *testing.T) {
	p := newTestPrompts(t, miniredis.RunT(t), &fakePrompts{live: "c1"})
	if _, err := p.LabelPrompt(context.Background(), asset, "staging"); quire.ErrorCode(err) != quire.EUNAVAILABLE {
		t.Fatalf("got %v", err)
	}
}
