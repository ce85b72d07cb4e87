package app_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// TestWriteRecordsItsEventOnce: each write of the version life cycle
// announces its event before the write and records it exactly once
// after, about the version written, by its caller; the store holds what
// the write did.
func TestWriteRecordsItsEventOnce(t *testing.T) {
	ctx := context.Background()
	one := 1
	for _, tc := range []struct {
		name    string
		do      func(*app.Handle) error
		event   quire.EventType
		version int
		state   []string // the versions afterwards, commits aside
	}{
		{"open a draft", func(h *app.Handle) error { _, err := h.CreateVersion(ctx, quire.Base{Live: true}); return err },
			quire.EventVersionCreated, 3, []string{"1 published live=true", "2 draft live=false", "3 draft live=false"}},
		{"write a file", func(h *app.Handle) error {
			_, _, err := h.UpsertFile(ctx, 2, app.FileWrite{Path: "b.txt", Content: []byte("b")})
			return err
		}, quire.EventVersionUpdated, 2, []string{"1 published live=true", "2 draft live=false"}},
		{"delete a file", func(h *app.Handle) error { _, err := h.DeleteFile(ctx, 2, "a.txt", ""); return err },
			quire.EventVersionUpdated, 2, []string{"1 published live=true", "2 draft live=false"}},
		{"delete a draft", func(h *app.Handle) error { return h.DeleteVersion(ctx, 2) },
			quire.EventVersionDeleted, 2, []string{"1 published live=true"}},
		{"publish", func(h *app.Handle) error { _, err := h.PublishVersion(ctx, 2, app.PublishOptions{}); return err },
			quire.EventVersionPublished, 2, []string{"1 published live=false", "2 published live=true"}},
		{"promote", func(h *app.Handle) error { _, err := h.PromoteVersion(ctx, 1); return err },
			quire.EventVersionPromoted, 1, []string{"1 published live=true", "2 draft live=false"}},
		{"archive", func(h *app.Handle) error { _, err := h.ArchiveVersion(ctx, 2); return err },
			quire.EventVersionArchived, 2, []string{"1 published live=true", "2 archived live=false"}},
		{"label", func(h *app.Handle) error {
			_, err := h.SetLabel(ctx, "stable", app.LabelEdit{Version: &one})
			return err
		},
			quire.EventLabelMoved, 1, []string{"1 published live=true", "2 draft live=false"}},
	} {
		w := newWorld(t, worldOpts{})
		if err := tc.do(w.open(t, w.editor)); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		evs := w.events.Recorded(w.project.ID)
		if len(evs) != 1 || evs[0].Type != tc.event {
			t.Errorf("%s: recorded %v, want one %s", tc.name, types(evs), tc.event)
			continue
		}
		ev := evs[0]
		if ev.Version != tc.version || ev.Asset == nil || ev.Asset.ID != w.skill.ID || ev.Actor.ID != "editor" || ev.ProjectID != w.project.ID {
			t.Errorf("%s: event %+v, want version %d of %s by editor", tc.name, ev, tc.version, w.skill.ID)
		}
		if f, p, v := w.events.Intents(w.project.ID, "fulfilled"), w.events.Intents(w.project.ID, ""), w.events.Intents(w.project.ID, "void"); !slices.Equal(f, []quire.EventType{tc.event}) || len(p) != 0 || len(v) != 0 {
			t.Errorf("%s: intents fulfilled %v, pending %v, void %v; want the one fulfilled", tc.name, f, p, v)
		}
		if got := w.stateNoCommits(t); !slices.Equal(got, tc.state) {
			t.Errorf("%s: store holds %v, want %v", tc.name, got, tc.state)
		}
	}
}

// TestRefusedWrite: a write the rules refuse returns the refusal's code
// as it is, records no event, voids the intent it announced (nothing is
// left for recovery to settle) and leaves the store as it was. The
// publish check (a skill's SKILL.md, named for its slug) is app's; the
// life cycle's refusals are the store's, passed through.
func TestRefusedWrite(t *testing.T) {
	ctx := context.Background()
	two := 2
	for _, tc := range []struct {
		name  string
		setup func(*app.Handle) error // nil for none
		do    func(*app.Handle) error
		code  quire.Code
	}{
		{"write a published version", nil, func(h *app.Handle) error {
			_, _, err := h.UpsertFile(ctx, 1, app.FileWrite{Path: "b.txt", Content: []byte("b")})
			return err
		}, quire.ECONFLICT},
		{"write a draft that moved", nil, func(h *app.Handle) error {
			_, _, err := h.UpsertFile(ctx, 2, app.FileWrite{Path: "b.txt", Content: []byte("b"), IfMatch: "0123abcd"})
			return err
		}, quire.EPRECONDITION},
		{"delete a missing file", nil, func(h *app.Handle) error { _, err := h.DeleteFile(ctx, 2, "nope.txt", ""); return err }, quire.ENOTFOUND},
		{"delete a published version", nil, func(h *app.Handle) error { return h.DeleteVersion(ctx, 1) }, quire.ECONFLICT},
		{"publish a published version", nil, func(h *app.Handle) error {
			_, err := h.PublishVersion(ctx, 1, app.PublishOptions{})
			return err
		}, quire.ECONFLICT},
		{"publish a missing version", nil, func(h *app.Handle) error {
			_, err := h.PublishVersion(ctx, 9, app.PublishOptions{})
			return err
		}, quire.ENOTFOUND},
		{"publish a draft without SKILL.md",
			func(h *app.Handle) error { _, err := h.DeleteFile(ctx, 2, "SKILL.md", ""); return err },
			func(h *app.Handle) error { _, err := h.PublishVersion(ctx, 2, app.PublishOptions{}); return err },
			quire.EUNPROCESSABLE},
		{"publish a draft named for another skill",
			func(h *app.Handle) error {
				md := []byte("---\nname: docx\ndescription: Reads Word files.\n---\n")
				_, _, err := h.UpsertFile(ctx, 2, app.FileWrite{Path: "SKILL.md", Content: md})
				return err
			},
			func(h *app.Handle) error { _, err := h.PublishVersion(ctx, 2, app.PublishOptions{}); return err },
			quire.EUNPROCESSABLE},
		{"promote a draft", nil, func(h *app.Handle) error { _, err := h.PromoteVersion(ctx, 2); return err }, quire.ECONFLICT},
		{"archive the live version", nil, func(h *app.Handle) error { _, err := h.ArchiveVersion(ctx, 1); return err }, quire.ECONFLICT},
		{"archive an archived version",
			func(h *app.Handle) error { _, err := h.ArchiveVersion(ctx, 2); return err },
			func(h *app.Handle) error { _, err := h.ArchiveVersion(ctx, 2); return err },
			quire.ECONFLICT},
		{"label a draft", nil, func(h *app.Handle) error {
			_, err := h.SetLabel(ctx, "stable", app.LabelEdit{Version: &two})
			return err
		}, quire.ECONFLICT},
	} {
		w := newWorld(t, worldOpts{})
		h := w.open(t, w.owner)
		if tc.setup != nil {
			if err := tc.setup(h); err != nil {
				t.Fatalf("%s: setup: %v", tc.name, err)
			}
		}
		before, events := w.state(t), w.events.Recorded(w.project.ID)
		fulfilled, void := w.events.Intents(w.project.ID, "fulfilled"), w.events.Intents(w.project.ID, "void")
		if err := tc.do(h); code(err) != tc.code {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.code)
			continue
		}
		if after := w.state(t); !slices.Equal(after, before) {
			t.Errorf("%s: the store holds %v, was %v", tc.name, after, before)
		}
		if evs := w.events.Recorded(w.project.ID); len(evs) != len(events) {
			t.Errorf("%s: recorded %v, had %v", tc.name, types(evs), types(events))
		}
		if f, v, p := w.events.Intents(w.project.ID, "fulfilled"), w.events.Intents(w.project.ID, "void"), w.events.Intents(w.project.ID, ""); !slices.Equal(f, fulfilled) || len(v) != len(void)+1 || len(p) != 0 {
			t.Errorf("%s: intents fulfilled %v (had %v), void %v (had %v), pending %v: want one more void", tc.name, f, fulfilled, v, void, p)
		}
	}
}

// TestDraftUpdatesCoalesce: a burst of edits to one draft records its
// first version.updated at once and holds the last; another event about
// the draft (its publish) releases the held one first, so the log never
// shows an update after the publish. Every write's intent is settled.
func TestDraftUpdatesCoalesce(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	h := w.open(t, w.editor)
	start := time.Now()
	for _, name := range []string{"b.txt", "c.txt", "d.txt"} {
		if _, _, err := h.UpsertFile(ctx, 2, app.FileWrite{Path: name, Content: []byte(name)}); err != nil {
			t.Fatal(err)
		}
	}
	if time.Since(start) > 500*time.Millisecond {
		t.Skip("three in-memory writes took over half the burst window: the machine is too busy to make a burst")
	}
	if got := types(w.events.Recorded(w.project.ID)); !slices.Equal(got, []quire.EventType{quire.EventVersionUpdated}) {
		t.Fatalf("recorded %v, want the first update alone", got)
	}
	if held := w.events.HeldEvents(w.project.ID); len(held) != 1 || held[0].Type != quire.EventVersionUpdated || held[0].Version != 2 {
		t.Fatalf("held %v, want the burst's last update of draft 2", types(held))
	}
	if _, err := h.PublishVersion(ctx, 2, app.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []quire.EventType{quire.EventVersionUpdated, quire.EventVersionUpdated, quire.EventVersionPublished}
	if got := types(w.events.Recorded(w.project.ID)); !slices.Equal(got, want) {
		t.Errorf("recorded %v, want %v", got, want)
	}
	if held := w.events.HeldEvents(w.project.ID); len(held) != 0 {
		t.Errorf("still held after the publish: %v", types(held))
	}
	if p, v := w.events.Intents(w.project.ID, ""), w.events.Intents(w.project.ID, "void"); len(p) != 0 || len(v) != 0 {
		t.Errorf("intents pending %v, void %v: want every one fulfilled", p, v)
	}
}
