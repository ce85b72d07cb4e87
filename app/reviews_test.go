package app_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// reviewWorld is a world with review 1 of draft 2 opened by alice.
func reviewWorld(t *testing.T) *world {
	t.Helper()
	w := newWorld(t, worldOpts{})
	title := "t"
	if _, err := w.open(t, w.alice).OpenReview(context.Background(), 2, app.ReviewEdit{Title: &title}); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestReviewAccess: viewers and read keys read reviews; editors comment
// and give verdicts; closing and reopening is for the review's author or
// a project owner; a comment's body is its author's to edit, and anyone
// who may comment resolves it. (httpapi's authorization matrix keeps
// each review route's status for each kind of caller.)
func TestReviewAccess(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	title, body := "t", "x"
	if _, err := w.open(t, w.readKey).OpenReview(ctx, 2, app.ReviewEdit{Title: &title}); code(err) != quire.EFORBIDDEN {
		t.Fatalf("a read key opens a review: %v", err)
	}
	if _, err := w.open(t, w.viewer).OpenReview(ctx, 2, app.ReviewEdit{}); code(err) != quire.EFORBIDDEN {
		t.Fatalf("a viewer opens a review with no title: %v, want forbidden before invalid", err)
	}
	if _, err := w.open(t, w.alice).OpenReview(ctx, 2, app.ReviewEdit{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.app.Open(ctx, w.stranger, quire.KindSkill, "pdf", quire.AccessRead); code(err) != quire.ENOTFOUND {
		t.Fatalf("a stranger opens the skill: %v", err)
	}
	read := func(h *app.Handle) error { _, err := h.Review(ctx, 1); return err }
	list := func(h *app.Handle) error { _, err := h.Reviews(ctx, ""); return err }
	comment := func(h *app.Handle) error { _, err := h.Comment(ctx, 1, app.CommentEdit{Body: &body}); return err }
	verdict := func(kind string) func(h *app.Handle) error {
		return func(h *app.Handle) error { _, err := h.Verdict(ctx, 1, kind, app.VerdictEdit{Body: &body}); return err }
	}
	closeIt := func(h *app.Handle) error { _, err := h.CloseReview(ctx, 1); return err }
	reopen := func(h *app.Handle) error { _, err := h.ReopenReview(ctx, 1); return err }
	for _, tc := range []struct {
		name string
		p    *quire.Principal
		do   func(*app.Handle) error
		code quire.Code
	}{
		{"viewer reads", w.viewer, read, ""},
		{"viewer lists", w.viewer, list, ""},
		{"read key reads", w.readKey, read, ""},
		{"viewer cannot comment", w.viewer, comment, quire.EFORBIDDEN},
		{"read key cannot comment", w.readKey, comment, quire.EFORBIDDEN},
		{"viewer cannot approve", w.viewer, verdict(quire.VerdictApprove), quire.EFORBIDDEN},
		{"viewer cannot request changes", w.viewer, verdict(quire.VerdictRequestChanges), quire.EFORBIDDEN},
		{"viewer cannot close", w.viewer, closeIt, quire.EFORBIDDEN},
		{"other editor cannot close", w.editor, closeIt, quire.EFORBIDDEN},
		{"author closes", w.alice, closeIt, ""},
		{"closed twice", w.alice, closeIt, quire.ECONFLICT},
		{"verdict on a closed review", w.editor, verdict(quire.VerdictApprove), quire.ECONFLICT},
		{"other editor cannot reopen", w.editor, reopen, quire.EFORBIDDEN},
		{"owner reopens", w.owner, reopen, ""},
		{"reopen an open review", w.owner, reopen, quire.ECONFLICT},
		{"editor approves", w.editor, verdict(quire.VerdictApprove), ""},
		{"owner closes another's review", w.owner, closeIt, ""},
	} {
		if err := tc.do(w.open(t, tc.p)); code(err) != tc.code {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.code)
		}
	}
	// Each action that went through recorded its event, once.
	want := []quire.EventType{"review.opened", "review.closed", "review.reopened", "review.approved", "review.closed"}
	if got := types(w.events.Recorded(w.project.ID)); !slices.Equal(got, want) {
		t.Errorf("recorded %v, want %v", got, want)
	}

	if _, err := w.open(t, w.owner).ReopenReview(ctx, 1); err != nil {
		t.Fatal(err)
	}
	c, err := w.open(t, w.editor).Comment(ctx, 1, app.CommentEdit{Body: &body})
	if err != nil {
		t.Fatal(err)
	}
	y, yes, no := "y", true, false
	if _, err := w.open(t, w.alice).UpdateComment(ctx, 1, c.ID, app.CommentPatch{Body: &y}); code(err) != quire.EFORBIDDEN || !strings.Contains(err.Error(), "author") {
		t.Errorf("alice edits the editor's comment: %v, want forbidden to all but its author", err)
	}
	if got, err := w.open(t, w.editor).UpdateComment(ctx, 1, c.ID, app.CommentPatch{Body: &y}); err != nil || got.Body != "y" {
		t.Errorf("the editor edits their comment: %+v, %v", got, err)
	}
	if got, err := w.open(t, w.alice).UpdateComment(ctx, 1, c.ID, app.CommentPatch{Resolved: &yes}); err != nil || !got.Resolved {
		t.Errorf("alice resolves the editor's comment: %+v, %v", got, err)
	}
	if _, err := w.open(t, w.viewer).UpdateComment(ctx, 1, c.ID, app.CommentPatch{Resolved: &no}); code(err) != quire.EFORBIDDEN {
		t.Errorf("a viewer unresolves it: %v, want forbidden", err)
	}
	rv, err := w.open(t, w.viewer).Review(ctx, 1)
	if err != nil || len(rv.Comments) != 1 || rv.Comments[0].Body != "y" || !rv.Comments[0].Resolved {
		t.Errorf("comments as stored: %+v, %v", rv.Comments, err)
	}
}

// TestReviewRules: every malformed or impossible review action is
// refused with its code before anything is written, and a verdict given
// on a head the review has moved past is refused so that nobody approves
// what they did not read.
func TestReviewRules(t *testing.T) {
	ctx := context.Background()
	w := reviewWorld(t)
	h := w.open(t, w.editor)
	s := func(s string) *string { return &s }
	before, events := w.state(t), len(w.events.Recorded(w.project.ID))
	for _, tc := range []struct {
		name string
		do   func() error
		code quire.Code
	}{
		{"no title", func() error { _, err := h.OpenReview(ctx, 2, app.ReviewEdit{}); return err }, quire.EINVALID},
		{"blank title", func() error { _, err := h.OpenReview(ctx, 2, app.ReviewEdit{Title: s("  ")}); return err }, quire.EINVALID},
		{"bad state filter", func() error { _, err := h.Reviews(ctx, "done"); return err }, quire.EINVALID},
		{"comment without body", func() error { _, err := h.Comment(ctx, 1, app.CommentEdit{Path: "a.txt"}); return err }, quire.EINVALID},
		{"comment with empty body", func() error { _, err := h.Comment(ctx, 1, app.CommentEdit{Body: s("")}); return err }, quire.EINVALID},
		{"comment too large", func() error {
			_, err := h.Comment(ctx, 1, app.CommentEdit{Body: s(strings.Repeat("x", 64<<10+1))})
			return err
		}, quire.ETOOLARGE},
		{"comment on a missing path", func() error {
			_, err := h.Comment(ctx, 1, app.CommentEdit{Body: s("x"), Path: "nope.txt", Line: 1})
			return err
		}, quire.EUNPROCESSABLE},
		{"comment on a missing line", func() error {
			_, err := h.Comment(ctx, 1, app.CommentEdit{Body: s("x"), Path: "a.txt", Line: 3})
			return err
		}, quire.EUNPROCESSABLE},
		{"comment on a path missing at the base", func() error {
			_, err := h.Comment(ctx, 1, app.CommentEdit{Body: s("x"), Path: "a.txt", Line: 1, Side: quire.SideBase})
			return err
		}, quire.EUNPROCESSABLE},
		{"negative line", func() error {
			_, err := h.Comment(ctx, 1, app.CommentEdit{Body: s("x"), Path: "a.txt", Line: -1})
			return err
		}, quire.EINVALID},
		{"line without path", func() error { _, err := h.Comment(ctx, 1, app.CommentEdit{Body: s("x"), Line: 1}); return err }, quire.EINVALID},
		{"bad side", func() error {
			_, err := h.Comment(ctx, 1, app.CommentEdit{Body: s("x"), Path: "a.txt", Line: 1, Side: "left"})
			return err
		}, quire.EINVALID},
		{"bad path", func() error { _, err := h.Comment(ctx, 1, app.CommentEdit{Body: s("x"), Path: "../a.txt"}); return err }, quire.EINVALID},
		{"reply to an unknown comment", func() error {
			_, err := h.Comment(ctx, 1, app.CommentEdit{Body: s("x"), InReplyTo: "nope"})
			return err
		}, quire.EUNPROCESSABLE},
		{"case anchor on a skill", func() error { _, err := h.Comment(ctx, 1, app.CommentEdit{Body: s("x"), Case: "p1"}); return err }, quire.EINVALID},
		{"comment on an unknown review", func() error { _, err := h.Comment(ctx, 9, app.CommentEdit{Body: s("x")}); return err }, quire.ENOTFOUND},
		{"patch an unknown comment", func() error {
			_, err := h.UpdateComment(ctx, 1, "nope", app.CommentPatch{Resolved: new(bool)})
			return err
		}, quire.ENOTFOUND},
		{"patch nothing", func() error { _, err := h.UpdateComment(ctx, 1, "nope", app.CommentPatch{}); return err }, quire.EINVALID},
		{"request changes without body", func() error {
			_, err := h.Verdict(ctx, 1, quire.VerdictRequestChanges, app.VerdictEdit{})
			return err
		}, quire.EINVALID},
		{"verdict on a bad commit id", func() error {
			_, err := h.Verdict(ctx, 1, quire.VerdictApprove, app.VerdictEdit{Commit: "not a commit"})
			return err
		}, quire.EINVALID},
		{"verdict on a head moved past", func() error {
			_, err := h.Verdict(ctx, 1, quire.VerdictApprove, app.VerdictEdit{Commit: strings.Repeat("ab", 20)})
			return err
		}, quire.EHEADMOVED},
		{"reopen an open review", func() error { _, err := w.open(t, w.alice).ReopenReview(ctx, 1); return err }, quire.ECONFLICT},
	} {
		if err := tc.do(); code(err) != tc.code {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.code)
		}
	}
	rv, err := h.Review(ctx, 1)
	if err != nil || len(rv.Comments) != 0 || len(rv.Verdicts) != 0 || rv.Review.State != quire.ReviewOpen {
		t.Errorf("refused actions left %+v, %v", rv, err)
	}
	if after := w.state(t); !slices.Equal(after, before) {
		t.Errorf("the store holds %v, was %v", after, before)
	}
	if evs := w.events.Recorded(w.project.ID); len(evs) != events {
		t.Errorf("refused actions recorded %v", types(evs[events:]))
	}
	if p := w.events.Intents(w.project.ID, ""); len(p) != 0 {
		t.Errorf("intents left pending: %v", p)
	}
}

// TestReviewOfAGoneDraft: deleting or archiving a draft closes its open
// review, by whoever did it, with its review.closed event after the
// version's; a closed review is not reopened while another review of its
// draft is open.
func TestReviewOfAGoneDraft(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		do    func(*app.Handle) error
		event quire.EventType
	}{
		{"delete", func(h *app.Handle) error { return h.DeleteVersion(ctx, 2) }, quire.EventVersionDeleted},
		{"archive", func(h *app.Handle) error { _, err := h.ArchiveVersion(ctx, 2); return err }, quire.EventVersionArchived},
	} {
		w := reviewWorld(t)
		n := len(w.events.Recorded(w.project.ID))
		if err := tc.do(w.open(t, w.editor)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		rv, err := w.open(t, w.viewer).Review(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if r := rv.Review; r.State != quire.ReviewClosed || r.ClosedBy == nil || r.ClosedBy.ID != "editor" {
			t.Errorf("%s: review of the gone draft: %+v", tc.name, r)
		}
		want := []quire.EventType{quire.EventType(app.ReviewClosedEvent), tc.event}
		if got := types(w.events.Recorded(w.project.ID)[n:]); !slices.Equal(got, want) {
			t.Errorf("%s: recorded %v, want %v", tc.name, got, want)
		}
	}

	w := reviewWorld(t)
	title := "again"
	if _, err := w.open(t, w.alice).CloseReview(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := w.open(t, w.alice).OpenReview(ctx, 2, app.ReviewEdit{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.open(t, w.owner).ReopenReview(ctx, 1); code(err) != quire.ECONFLICT || !strings.Contains(err.Error(), "another open review") {
		t.Errorf("reopen beside another open review of the draft: %v, want conflict", err)
	}
}

// TestProtectedLabelTakesAReviewedVersion: a protected label moves, by
// an editor, to a version published through a review that met the
// policy or was overridden by an owner, and to no other.
func TestProtectedLabelTakesAReviewedVersion(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, worldOpts{policy: &quire.ReviewPolicy{RequiredApprovals: 1, ProtectedLabels: []string{"production"}}})
	title, body := "t", "ok"
	if _, err := w.open(t, w.alice).OpenReview(ctx, 2, app.ReviewEdit{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.open(t, w.editor).Verdict(ctx, 1, quire.VerdictApprove, app.VerdictEdit{Body: &body}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.open(t, w.alice).PublishVersion(ctx, 2, app.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	// Draft 3, published on an owner's override.
	h := w.open(t, w.owner)
	if _, err := h.CreateVersion(ctx, quire.Base{Live: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.OpenReview(ctx, 3, app.ReviewEdit{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.PublishVersion(ctx, 3, app.PublishOptions{Override: true, Reason: "hotfix"}); err != nil {
		t.Fatal(err)
	}
	he := w.open(t, w.editor)
	for _, tc := range []struct {
		version int
		code    quire.Code
	}{{1, quire.EREVIEW}, {2, ""}, {3, ""}} {
		l, err := he.SetLabel(ctx, "production", app.LabelEdit{Version: &tc.version})
		if code(err) != tc.code {
			t.Errorf("editor labels version %d production: %v, want %q", tc.version, err, tc.code)
		}
		if err == nil && l.Version != tc.version {
			t.Errorf("label at %d, want %d", l.Version, tc.version)
		}
	}
}
