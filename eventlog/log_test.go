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

// TestIntents: an intent neither fulfilled nor voided is an orphan only
// once its process is gone (its owner lock free); settled intents are
// compacted away.
func TestIntents(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s1, _ := Open(Options{Root: root})
	intend := func(s *Store) *quire.Intent {
		in := &quire.Intent{Event: ev(quire.EventVersionPublished), Before: "draft"}
		if err := s.Intend(ctx, "p1", in); err != nil {
			t.Fatal(err)
		}
		return in
	}
	open, fulfilled, voided := intend(s1), intend(s1), intend(s1)
	if err := s1.Fulfil(ctx, "p1", fulfilled.ID, ev(quire.EventVersionPublished)); err != nil {
		t.Fatal(err)
	}
	s1.Void(ctx, "p1", voided.ID)

	s2, _ := Open(Options{Root: root})
	orphans := func() []*quire.Intent {
		t.Helper()
		o, release, err := s2.Orphans(ctx)
		if err != nil {
			t.Fatal(err)
		}
		release()
		return o["p1"]
	}
	if o := orphans(); len(o) != 0 {
		t.Fatalf("orphans of a live process: %v", o)
	}
	s1.Close()
	o := orphans()
	if len(o) != 1 || o[0].ID != open.ID || o[0].Before != "draft" || o[0].Event.Type != quire.EventVersionPublished {
		t.Fatalf("orphans once the process ended: %+v", o)
	}
	s2.Fulfil(ctx, "p1", open.ID, o[0].Event)
	if o := orphans(); len(o) != 0 {
		t.Fatalf("a fulfilled orphan is still one: %v", o)
	}
	evs, _, _ := s2.Events(ctx, "p1", "", 0)
	if len(evs) != 2 {
		t.Errorf("events: %d", len(evs))
	}

	p := filepath.Join(root, "p1", "intents.jsonl")
	for {
		fi, _ := os.Stat(p)
		if fi.Size() > compactIntents/2 {
			break
		}
		s2.Void(ctx, "p1", intend(s2).ID)
	}
	kept := intend(s2)
	for range 1000 {
		s2.Void(ctx, "p1", intend(s2).ID)
	}
	if fi, _ := os.Stat(p); fi.Size() > compactIntents {
		t.Errorf("intents.jsonl holds %d bytes: never compacted", fi.Size())
	}
	s2.Close()
	s3, _ := Open(Options{Root: root})
	om, release, _ := s3.Orphans(ctx)
	release()
	if len(om["p1"]) != 1 || om["p1"][0].ID != kept.ID {
		t.Errorf("after compactions, the orphans are %+v", om["p1"])
	}

	// A torn last line (a killed writer) is dropped by the next append.
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"void":"01a2`)
	f.Close()
	s3.Void(ctx, "p1", kept.ID)
	om, release, _ = s3.Orphans(ctx)
	release()
	if len(om["p1"]) != 0 {
		t.Errorf("voided after a torn line, still: %+v", om["p1"])
	}
}
