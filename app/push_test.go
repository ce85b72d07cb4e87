package app_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/app/apptest"
)

// TestAdmitDraftMove: a push moves a draft only when the version exists
// and is a draft, is still at the commit the client saw, and the push
// moves it forward; a repository that cannot be read refuses it with
// its error.
func TestAdmitDraftMove(t *testing.T) {
	zero := strings.Repeat("0", 40)
	refs := apptest.DraftRefs{
		Versions: map[int]apptest.DraftRef{
			1: {State: quire.StatePublished, Commit: "c1"},
			2: {State: quire.StateDraft, Commit: "c2"},
			3: {State: quire.StateArchived, Commit: "c3"},
		},
		Parents: map[string]string{"c2": "c1", "c2a": "c2", "c2b": "c2a", "x": "c1"},
	}
	broken := errors.New("disk gone")
	for _, tc := range []struct {
		name string
		refs apptest.DraftRefs
		move quire.DraftMove
		code quire.Code
		msg  string
	}{
		{"fast-forward", refs, quire.DraftMove{Version: 2, Old: "c2", New: "c2a"}, "", ""},
		{"fast-forward by two", refs, quire.DraftMove{Version: 2, Old: "c2", New: "c2b"}, "", ""},
		{"no version", refs, quire.DraftMove{Version: 9, Old: zero, New: "c2a"}, quire.ENOTFOUND, "create it through the API"},
		{"a published version", refs, quire.DraftMove{Version: 1, Old: "c1", New: "c2"}, quire.ECONFLICT, "version 1 is published; only a draft accepts pushes"},
		{"an archived version", refs, quire.DraftMove{Version: 3, Old: "c3", New: "x"}, quire.ECONFLICT, "only a draft accepts pushes"},
		{"the draft moved since", refs, quire.DraftMove{Version: 2, Old: "c1", New: "c2a"}, quire.ECONFLICT, "draft 2 is at c2, not c1: fetch and retry"},
		{"a new ref for an existing draft", refs, quire.DraftMove{Version: 2, Old: zero, New: "c2a"}, quire.ECONFLICT, "not nothing"},
		{"not a fast-forward", refs, quire.DraftMove{Version: 2, Old: "c2", New: "x"}, quire.ECONFLICT, "non-fast-forward"},
		{"the draft cannot be read", apptest.DraftRefs{DraftErr: broken}, quire.DraftMove{Version: 2, Old: "c2", New: "c2a"}, quire.EINTERNAL, "disk gone"},
		{"ancestry cannot be read", apptest.DraftRefs{Versions: refs.Versions, AncestorErr: broken}, quire.DraftMove{Version: 2, Old: "c2", New: "c2a"}, quire.EINTERNAL, "disk gone"},
	} {
		err := app.AdmitDraftMove(tc.refs, tc.move)
		if code(err) != tc.code || err != nil && !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %q %q", tc.name, err, tc.code, tc.msg)
		}
	}
}

// TestPushRefused: a push needs write access to the skill's project, and
// a project's own repository takes no push at all, even an owner's.
func TestPushRefused(t *testing.T) {
	w := newWorld(t, worldOpts{})
	for _, tc := range []struct {
		name string
		p    *quire.Principal
		kind quire.Kind
		code quire.Code
	}{
		{"owner", w.owner, quire.KindSkill, ""},
		{"editor", w.editor, quire.KindSkill, ""},
		{"viewer", w.viewer, quire.KindSkill, quire.EFORBIDDEN},
		{"read key of an editor", w.readKey, quire.KindSkill, quire.EFORBIDDEN},
		{"write key of a viewer", w.viewerWriteKey, quire.KindSkill, quire.EFORBIDDEN},
		{"owner, to the project's repository", w.owner, quire.KindProject, quire.EFORBIDDEN},
	} {
		as := w.skill
		if tc.kind == quire.KindProject {
			as = &quire.Asset{ID: w.project.ID, ProjectID: w.project.ID, Kind: quire.KindProject, Slug: w.project.Slug}
		}
		h := w.open(t, tc.p)
		push := w.app.Push(tc.p, as, h.Project, func(int) string { return "" })
		if err := push.Hooks.Refused(); code(err) != tc.code {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.code)
		}
	}
}

// TestPushEvents: a push announces an intent for each draft it is about
// to move and records one version.updated, at the pushed commit, for
// each that moved; the intent of a draft it did not move is void.
func TestPushEvents(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	if _, err := w.open(t, w.editor).CreateVersion(ctx, quire.Base{Live: true}); err != nil {
		t.Fatal(err) // draft 3
	}
	n := len(w.events.Recorded(w.project.ID))
	h := w.open(t, w.editor)
	hooks := w.app.Push(w.editor, w.skill, h.Project, func(int) string { return "" }).Hooks
	moves := []quire.DraftMove{{Version: 2, Old: "a", New: "b"}, {Version: 3, Old: "c", New: "d"}}
	if err := hooks.Moving(ctx, moves); err != nil {
		t.Fatal(err)
	}
	if p := w.events.Intents(w.project.ID, ""); len(p) != 2 {
		t.Fatalf("intents pending %v, want one per draft", p)
	}
	if err := hooks.Moved(ctx, moves[:1], nil); err != nil {
		t.Fatal(err)
	}
	evs := w.events.Recorded(w.project.ID)[n:]
	if len(evs) != 1 || evs[0].Type != quire.EventVersionUpdated || evs[0].Version != 2 || evs[0].Data["commit"] != "b" || evs[0].Actor.ID != "editor" {
		t.Errorf("recorded %+v, want draft 2's update at b by the editor", evs)
	}
	if f, v, p := w.events.Intents(w.project.ID, "fulfilled"), w.events.Intents(w.project.ID, "void"), w.events.Intents(w.project.ID, ""); len(f) != 2 || len(v) != 1 || len(p) != 0 {
		t.Errorf("intents fulfilled %v, void %v, pending %v: want draft 3's create and draft 2's move fulfilled, draft 3's move void", f, v, p)
	}
}

// TestPushReviewOptions: git push -o review opens a review of each draft
// the push moved, titled by review.title= or after the draft, or keeps
// its open one and retitles it; each says so in the lines git shows. A
// push without the option does nothing to reviews.
func TestPushReviewOptions(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	h := w.open(t, w.editor)
	link := func(n int) string { return fmt.Sprintf("https://quire.test/reviews/%d", n) }
	hooks := w.app.Push(w.editor, w.skill, h.Project, link).Hooks
	if lines := hooks.Options(ctx, []string{"ci.skip"}, []int{2}); len(lines) != 0 {
		t.Errorf("no review option: %q", lines)
	}
	if lines := hooks.Options(ctx, []string{"review"}, []int{2}); !slices.Equal(lines, []string{"quire: review 1 of draft 2 opened: https://quire.test/reviews/1"}) {
		t.Errorf("-o review: %q", lines)
	}
	if lines := hooks.Options(ctx, []string{"review.title=Fix the parser"}, []int{2}); !slices.Equal(lines, []string{"quire: review 1 of draft 2 updated: https://quire.test/reviews/1"}) {
		t.Errorf("-o review.title on the open review: %q", lines)
	}
	if lines := hooks.Options(ctx, []string{"review"}, []int{1}); len(lines) != 1 || !strings.Contains(lines[0], "no review of draft 1") {
		t.Errorf("-o review of a published version: %q", lines)
	}
	rvs, err := h.Reviews(ctx, "")
	if err != nil || len(rvs) != 1 || rvs[0].Title != "Fix the parser" || rvs[0].Author.ID != "editor" || rvs[0].Version != 2 {
		t.Errorf("reviews %+v, %v: want review 1 of draft 2, retitled", rvs, err)
	}
	want := []quire.EventType{quire.EventType(app.ReviewOpened), quire.EventType(app.ReviewRetitled)}
	if got := types(w.events.Recorded(w.project.ID)); !slices.Equal(got, want) {
		t.Errorf("recorded %v, want %v", got, want)
	}
	viewer := w.app.Push(w.viewer, w.skill, h.Project, link).Hooks
	if lines := viewer.Options(ctx, []string{"review"}, []int{2}); len(lines) != 1 || !strings.Contains(lines[0], "no review") {
		t.Errorf("-o review by a viewer: %q", lines)
	}
}
