package eventlog

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quire/quire"
)

func ev(t quire.EventType) *quire.Event {
	return &quire.Event{Type: t, OccurredAt: time.Now().UTC(), ProjectID: "p1"}
}

// TestTornWrite: a line a killed writer left half-written is never read
// as an event, and the next append replaces it; a second process (a new
// Store) reads the same log.
func TestTornWrite(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, err := Open(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "p1", ev(quire.EventAssetCreated), ev(quire.EventVersionCreated)); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(filepath.Join(root, "p1", "events.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"event":{"id":"zzz","type":"asset.del`)
	f.Close()

	other, _ := Open(Options{Root: root})
	evs, oldest, err := other.Events(ctx, "p1", "", 0)
	if err != nil || len(evs) != 2 || oldest != evs[0].ID {
		t.Fatalf("read with a torn tail: %v %v", evs, err)
	}
	if err := other.Append(ctx, "p1", ev(quire.EventAssetDeleted)); err != nil {
		t.Fatal(err)
	}
	evs, _, _ = s.Events(ctx, "p1", "", 0)
	if len(evs) != 3 || evs[2].Type != quire.EventAssetDeleted || evs[2].ID <= evs[1].ID {
		t.Fatalf("after the repair: %+v", evs)
	}
	after, _, _ := s.Events(ctx, "p1", evs[0].ID, 1)
	if len(after) != 1 || after[0].ID != evs[1].ID {
		t.Errorf("after the first, limit 1: %+v", after)
	}
}

// TestHoldRelease: a held event is no event until released, survives a
// restart (Held finds it), and is released once.
func TestHoldRelease(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, _ := Open(Options{Root: root})
	s.Append(ctx, "p1", ev(quire.EventVersionUpdated))
	s.Hold(ctx, "p1", "k", "", &quire.Event{Type: quire.EventVersionUpdated, ProjectID: "p1", Data: map[string]any{"commit": "a"}})
	s.Hold(ctx, "p1", "k", "", &quire.Event{Type: quire.EventVersionUpdated, ProjectID: "p1", Data: map[string]any{"commit": "b"}})
	if evs, _, _ := s.Events(ctx, "p1", "", 0); len(evs) != 1 {
		t.Fatalf("held events are visible: %d", len(evs))
	}
	restarted, _ := Open(Options{Root: root})
	held, err := restarted.Held(ctx)
	if err != nil || len(held["p1"]) != 1 || held["p1"][0] != "k" {
		t.Fatalf("Held: %v %v", held, err)
	}
	got, err := restarted.Release(ctx, "p1", "k")
	if err != nil || got == nil || got.Data["commit"] != "b" {
		t.Fatalf("Release: %+v %v", got, err)
	}
	if again, _ := restarted.Release(ctx, "p1", "k"); again != nil {
		t.Errorf("released twice")
	}
	if held, _ := restarted.Held(ctx); len(held) != 0 {
		t.Errorf("still held: %v", held)
	}
}

// TestTrim: the log keeps at least Keep events, and older ones only
// while they are younger than KeepFor.
func TestTrim(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s, _ := Open(Options{Root: t.TempDir(), Keep: 10, KeepFor: time.Hour, Now: func() time.Time { return now }})
	for i := range 30 {
		e := ev(quire.EventAssetCreated)
		if i < 25 {
			e.OccurredAt = now.Add(-2 * time.Hour)
		}
		if err := s.Append(ctx, "p1", e); err != nil {
			t.Fatal(err)
		}
	}
	evs, oldest, _ := s.Events(ctx, "p1", "", 0)
	if len(evs) < 10 || len(evs) >= 30 || oldest != evs[0].ID {
		t.Errorf("after trimming, %d events", len(evs))
	}
	if _, err := s.Projects(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Events(ctx, "../x", "", 0); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("a project id with a path in it: %v", err)
	}
}
