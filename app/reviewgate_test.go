package app_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// TestPublishReviewGate: the project's review policy gates publishing a
// draft. Approvals count when given on the draft's head by users who may
// write now and did not write the draft (unless the policy allows
// self-approval); stale ones only when the policy keeps them; a request
// for changes blocks. An owner may override with a reason, recorded on
// the merged review; an editor may not, nor anyone without a reason. A
// refusal says why in its details and changes nothing; a publish merges
// the draft's review and records its events. With no approvals required
// a request for changes does not block, but the merge does not meet the
// policy.
//
// In the world alice wrote draft 2 and opens its review; editor and
// owner review it.
func TestPublishReviewGate(t *testing.T) {
	ctx := context.Background()
	no := false
	required := func(n int) *quire.ReviewPolicy { return &quire.ReviewPolicy{RequiredApprovals: n} }
	approve := func(who string) step { return step{who: who, verdict: quire.VerdictApprove} }
	for _, tc := range []struct {
		name   string
		policy *quire.ReviewPolicy
		review bool   // open a review of draft 2
		steps  []step // before the publish
		by     string // who publishes
		opts   app.PublishOptions
		code   quire.Code
		// details of a review_required refusal: required, approvals,
		// stale, changes requested by.
		details string
		// unmet: the publish passes, but its merge does not meet the
		// policy (a protected label then needs an override).
		unmet bool
	}{
		{name: "no policy, no review", by: "alice"},
		{name: "no policy, a review", review: true, by: "alice"},
		{name: "no review", policy: required(1), by: "alice", code: quire.EREVIEW, details: "1 0 0 []"},
		{name: "no approval", policy: required(1), review: true, by: "alice", code: quire.EREVIEW, details: "1 0 0 []"},
		{name: "an editor approves", policy: required(1), review: true, steps: []step{approve("editor")}, by: "alice"},
		{name: "the author approves", policy: required(1), review: true, steps: []step{approve("alice")}, by: "alice",
			code: quire.EREVIEW, details: "1 0 0 []"},
		{name: "the author approves, self-approval allowed", policy: &quire.ReviewPolicy{RequiredApprovals: 1, AllowSelfApproval: true},
			review: true, steps: []step{approve("alice")}, by: "alice"},
		{name: "an approver who wrote to the draft", policy: required(1), review: true,
			steps: []step{{who: "editor", write: true}, approve("editor")}, by: "alice", code: quire.EREVIEW, details: "1 0 0 []"},
		{name: "the draft changed after the approval", policy: required(1), review: true,
			steps: []step{approve("editor"), {who: "alice", write: true}}, by: "alice", code: quire.EREVIEW, details: "1 0 1 []"},
		{name: "the draft changed, stale approvals kept", policy: &quire.ReviewPolicy{RequiredApprovals: 1, DismissStale: &no},
			review: true, steps: []step{approve("editor"), {who: "alice", write: true}}, by: "alice"},
		{name: "the approver became a viewer", policy: required(1), review: true,
			steps: []step{approve("editor"), {who: "editor", role: quire.ProjectViewer}}, by: "alice", code: quire.EREVIEW, details: "1 0 0 []"},
		{name: "the approver was disabled", policy: required(1), review: true,
			steps: []step{approve("editor"), {who: "editor", disable: true}}, by: "alice", code: quire.EREVIEW, details: "1 0 0 []"},
		{name: "changes requested", policy: required(1), review: true,
			steps: []step{approve("editor"), {who: "owner", verdict: quire.VerdictRequestChanges}}, by: "alice",
			code: quire.EREVIEW, details: "1 1 0 [owner@example.com]"},
		{name: "changes requested, then approved", policy: required(1), review: true,
			steps: []step{{who: "editor", verdict: quire.VerdictRequestChanges}, approve("editor")}, by: "alice"},
		{name: "two required, one given", policy: required(2), review: true, steps: []step{approve("editor")}, by: "alice",
			code: quire.EREVIEW, details: "2 1 0 []"},
		{name: "two required, two given", policy: required(2), review: true, steps: []step{approve("editor"), approve("owner")}, by: "alice"},
		{name: "changes requested, no policy", review: true, steps: []step{{who: "owner", verdict: quire.VerdictRequestChanges}}, by: "alice", unmet: true},
		{name: "the owner overrides", policy: required(1), review: true, by: "owner", opts: app.PublishOptions{Override: true, Reason: "hotfix"}},
		{name: "the owner overrides with no review", policy: required(1), by: "owner", opts: app.PublishOptions{Override: true, Reason: "hotfix"}},
		{name: "an editor overrides", policy: required(1), review: true, by: "editor", opts: app.PublishOptions{Override: true, Reason: "hotfix"},
			code: quire.EFORBIDDEN},
		{name: "the owner overrides without a reason", policy: required(1), review: true, by: "owner", opts: app.PublishOptions{Override: true, Reason: " "},
			code: quire.EUNPROCESSABLE},
	} {
		w := newWorld(t, worldOpts{policy: tc.policy})
		if tc.review {
			title := "Second print"
			if _, err := w.open(t, w.alice).OpenReview(ctx, 2, app.ReviewEdit{Title: &title}); err != nil {
				t.Fatalf("%s: open the review: %v", tc.name, err)
			}
		}
		for _, s := range tc.steps {
			s.run(t, w)
		}
		before, events := w.state(t), len(w.events.Recorded(w.project.ID))
		v, err := w.open(t, w.user(tc.by)).PublishVersion(ctx, 2, tc.opts)
		if code(err) != tc.code {
			t.Errorf("%s: publish: %v, want %q", tc.name, err, tc.code)
			continue
		}
		if err != nil {
			if tc.details != "" {
				var qe *quire.Error
				errors.As(err, &qe)
				d := qe.Details
				if got := fmt.Sprint(d["required"], d["approvals"], d["stale"], d["changes_requested_by"]); got != tc.details {
					t.Errorf("%s: details %s, want %s", tc.name, got, tc.details)
				}
			}
			if after := w.state(t); !slices.Equal(after, before) {
				t.Errorf("%s: the refused publish changed the store: %v, was %v", tc.name, after, before)
			}
			if evs := w.events.Recorded(w.project.ID); len(evs) != events {
				t.Errorf("%s: the refused publish recorded %v", tc.name, types(evs[events:]))
			}
			continue
		}
		if v.State != quire.StatePublished || !v.Live {
			t.Errorf("%s: published %+v", tc.name, v)
		}
		want := []quire.EventType{quire.EventVersionPublished}
		if tc.review {
			want = []quire.EventType{quire.EventType(app.ReviewMergedEvent), quire.EventVersionPublished}
		}
		if got := types(w.events.Recorded(w.project.ID)[events:]); !slices.Equal(got, want) {
			t.Errorf("%s: recorded %v, want %v", tc.name, got, want)
		}
		if !tc.review {
			continue
		}
		rv, err := w.open(t, w.viewer).Review(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		r := rv.Review
		if r.State != quire.ReviewMerged || r.MergedBy == nil || r.MergedBy.ID != tc.by {
			t.Errorf("%s: review after the publish: %+v", tc.name, r)
		}
		switch {
		case tc.opts.Override:
			if r.Override == nil || r.Override.Reason != tc.opts.Reason || r.Override.By.ID != tc.by {
				t.Errorf("%s: override recorded %+v", tc.name, r.Override)
			}
		case r.Override != nil || r.PolicyMet == tc.unmet:
			t.Errorf("%s: merged with override %+v, policy met %v: want no override, met %v", tc.name, r.Override, r.PolicyMet, !tc.unmet)
		}
	}
}

// step is something done to the world before a publish: a verdict on
// review 1, a write to draft 2, a change of a member's role, or a user
// disabled.
type step struct {
	who     string
	verdict string
	write   bool
	role    quire.ProjectRole
	disable bool
}

func (s step) run(t *testing.T, w *world) {
	t.Helper()
	ctx := context.Background()
	switch {
	case s.verdict != "":
		body := "because"
		if _, err := w.open(t, w.user(s.who)).Verdict(ctx, 1, s.verdict, app.VerdictEdit{Body: &body}); err != nil {
			t.Fatalf("%s %s: %v", s.who, s.verdict, err)
		}
	case s.write:
		if _, _, err := w.open(t, w.user(s.who)).UpsertFile(ctx, 2, app.FileWrite{Path: s.who + ".txt", Content: []byte(s.who)}); err != nil {
			t.Fatalf("%s writes: %v", s.who, err)
		}
	case s.role != "":
		pr, err := w.meta.Project(ctx, w.project.ID)
		if err != nil {
			t.Fatal(err)
		}
		for i := range pr.Members {
			if pr.Members[i].UserID == s.who {
				pr.Members[i].Role = s.role
			}
		}
		w.meta.AddProject(pr)
	case s.disable:
		u, err := w.meta.User(ctx, s.who)
		if err != nil {
			t.Fatal(err)
		}
		u.Disabled = true
		w.meta.AddUser(u)
	}
}

// TestReviewPolicyIsTheOwners: only a project owner sets the review
// policy, within its bounds; the project then reads with the policy's
// defaults filled in.
func TestReviewPolicyIsTheOwners(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	update := func(p *quire.Principal, pol quire.ReviewPolicy) error {
		h, err := w.app.OpenProject(ctx, p, "demo", quire.AccessRead)
		if err != nil {
			return err
		}
		_, err = h.Update(ctx, app.ProjectEdit{ReviewPolicy: &pol})
		return err
	}
	for _, tc := range []struct {
		name string
		p    *quire.Principal
		pol  quire.ReviewPolicy
		code quire.Code
	}{
		{"an editor", w.editor, quire.ReviewPolicy{RequiredApprovals: 1}, quire.EFORBIDDEN},
		{"a viewer", w.viewer, quire.ReviewPolicy{RequiredApprovals: 1}, quire.EFORBIDDEN},
		{"over 10 approvals", w.owner, quire.ReviewPolicy{RequiredApprovals: 11}, quire.EUNPROCESSABLE},
		{"negative approvals", w.owner, quire.ReviewPolicy{RequiredApprovals: -1}, quire.EUNPROCESSABLE},
		{"a bad protected label", w.owner, quire.ReviewPolicy{ProtectedLabels: []string{"Prod"}}, quire.EUNPROCESSABLE},
	} {
		if err := update(tc.p, tc.pol); code(err) != tc.code {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.code)
		}
	}
	if pr, err := w.meta.Project(ctx, "demo"); err != nil || pr.ReviewPolicy != nil {
		t.Fatalf("refused updates stored a policy: %+v, %v", pr.ReviewPolicy, err)
	}
	if err := update(w.owner, quire.ReviewPolicy{RequiredApprovals: 1}); err != nil {
		t.Fatal(err)
	}
	pr, err := w.app.Project(ctx, w.viewer, "demo", quire.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	if pol := pr.Policy(); pol.RequiredApprovals != 1 || pol.ProtectedLabels == nil || len(pol.ProtectedLabels) != 0 || !pol.Dismisses() || pol.AllowSelfApproval {
		t.Errorf("policy as read: %+v", pol)
	}
}
