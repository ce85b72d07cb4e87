package gitstore

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/quire/quire"
)

func newTestPrompt(t testing.TB, s *Store) *quire.Asset {
	t.Helper()
	ctx := context.Background()
	p := &quire.Project{Name: "P", Slug: "p"}
	if err := s.CreateProject(ctx, tester, p); err != nil {
		t.Fatal(err)
	}
	a := &quire.Asset{ProjectID: p.ID, Kind: quire.KindPrompt, Name: "Greet", Slug: "greet"}
	if err := s.CreateAsset(ctx, tester, a); err != nil {
		t.Fatal(err)
	}
	return a
}

func newTestEvaluation(t testing.TB, s *Store, a *quire.Asset, cases int) *quire.Evaluation {
	t.Helper()
	now := time.Now().UTC()
	e := &quire.Evaluation{ID: uuid.NewString(), PromptID: a.ID, State: quire.EvalQueued, Version: 1, Commit: "c", Repeat: 1, CreatedAt: now, UpdatedAt: now}
	for i := range cases {
		e.Plan = append(e.Plan, quire.EvalPlanCase{PayloadID: uuid.NewString(), PayloadName: string(rune('a' + i)), Repeat: 1})
	}
	e.Counts.Cases = cases
	if err := s.CreateEvaluation(context.Background(), tester, a, e); err != nil {
		t.Fatal(err)
	}
	return e
}

// Evaluations are kept by the commit they were read at: a read at the
// same tip gives the same evaluation and cases, a new commit (by this
// store or another on the data root) is read anew, and what a caller
// changes in what it got never reaches the next reader.
func TestEvaluationMemo(t *testing.T) {
	ctx := context.Background()
	s, other := twoStores(t)
	a := newTestPrompt(t, s)
	e := newTestEvaluation(t, s, a, 3)

	got, cases, err := s.Evaluation(ctx, a, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tip == "" || len(cases) != 0 || len(got.Plan) != 3 {
		t.Fatalf("new evaluation: tip %q, %d cases, plan %d", got.Tip, len(cases), len(got.Plan))
	}
	first := got.Tip
	// A caller's changes stay its own.
	got.State, got.Plan = "mangled", nil
	if again, _, err := s.Evaluation(ctx, a, e.ID); err != nil || again.State != quire.EvalQueued || len(again.Plan) != 3 || again.Tip != first {
		t.Fatalf("read again: %+v, %v", again, err)
	}

	// Another store (another node) stores two cases: both stores read them.
	done := []*quire.EvalCase{
		{PayloadID: e.Plan[1].PayloadID, PayloadName: "b", Repeat: 1, Head: &quire.EvalSide{Output: "two"}},
		{PayloadID: e.Plan[0].PayloadID, PayloadName: "a", Repeat: 1, Head: &quire.EvalSide{Output: "one"}},
	}
	e.State = quire.EvalRunning
	if err := other.SaveEvaluation(ctx, tester, a, e, done, "two cases"); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*Store{s, other} {
		got, cases, err := st.Evaluation(ctx, a, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Tip == first || got.State != quire.EvalRunning || len(cases) != 2 || cases[0].Head.Output != "one" || cases[1].Head.Output != "two" {
			t.Fatalf("after the save: tip %s (was %s), state %s, %d cases", got.Tip, first, got.State, len(cases))
		}
		cases[0] = nil
		_ = append(cases[:1], &quire.EvalCase{})
	}
	if _, cases, _ := s.Evaluation(ctx, a, e.ID); len(cases) != 2 || cases[0] == nil || cases[1].Head.Output != "two" {
		t.Fatalf("a caller's change to the cases reached the memo: %v", cases)
	}

	// The list: headers without plans, at their tips, a caller's change
	// its own.
	e2 := newTestEvaluation(t, s, a, 1)
	for range 2 {
		list, err := other.Evaluations(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 {
			t.Fatalf("%d evaluations listed", len(list))
		}
		for _, l := range list {
			if l.Tip == "" || l.Plan != nil || (l.ID != e.ID && l.ID != e2.ID) || l.State == "mangled" {
				t.Fatalf("listed %+v", l)
			}
			l.State = "mangled"
		}
	}
}

// An evaluation's lease is held by one store at a time among those on
// a data root (two stores stand for two nodes): taken before the
// evaluation is created, refused to the other while held, free once
// given back while the evaluation is pending, and refused (pending) once
// its mark is dropped, when its files go. A cancel asked through one is
// seen through the other.
func TestEvaluationLease(t *testing.T) {
	ctx := context.Background()
	s, other := twoStores(t)
	a := newTestPrompt(t, s)
	id := uuid.NewString()
	ref := quire.EvalRef{PromptID: a.ID, ID: id}
	release, ok, err := s.LeaseEvaluation(ctx, ref, false)
	if err != nil || !ok {
		t.Fatalf("first lease: %v %v", ok, err)
	}
	if _, ok, _ := s.LeaseEvaluation(ctx, ref, false); ok {
		t.Fatal("a second job of the same store took a held lease")
	}
	if _, ok, _ := other.LeaseEvaluation(ctx, ref, false); ok {
		t.Fatal("another store took a held lease")
	}
	now := time.Now().UTC()
	e := &quire.Evaluation{ID: id, PromptID: a.ID, State: quire.EvalQueued, Version: 1, Commit: "c", Repeat: 1, CreatedAt: now, UpdatedAt: now,
		Plan: []quire.EvalPlanCase{{PayloadID: uuid.NewString(), PayloadName: "a", Repeat: 1}}}
	if err := s.CreateEvaluation(ctx, tester, a, e); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := other.LeaseEvaluation(ctx, ref, true); ok {
		t.Fatal("another store took the lease of an evaluation under way")
	}
	// The holder stops with the evaluation pending: another takes it up.
	release()
	r2, ok, err := other.LeaseEvaluation(ctx, ref, true)
	if err != nil || !ok {
		t.Fatalf("the lease of a pending evaluation nobody runs: %v %v", ok, err)
	}
	if asked, _ := other.EvaluationCancelRequested(ctx, ref); asked {
		t.Fatal("a cancel is asked before any was")
	}
	if err := s.RequestEvaluationCancel(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if asked, err := other.EvaluationCancelRequested(ctx, ref); err != nil || !asked {
		t.Fatalf("the cancel asked through one store is not seen through the other: %v %v", asked, err)
	}
	// Finished: the mark dropped, then the lease given back; its files go.
	if err := other.DropPendingEvaluation(ctx, ref); err != nil {
		t.Fatal(err)
	}
	r2()
	for _, ext := range []string{".lock", ".cancel"} {
		if _, err := os.Stat(s.evalLeasePath(ref, ext)); !os.IsNotExist(err) {
			t.Errorf("%s of a finished evaluation: %v", ext, err)
		}
	}
	if _, ok, err := s.LeaseEvaluation(ctx, ref, true); ok || err != nil {
		t.Fatalf("the lease of a finished evaluation: %v %v", ok, err)
	}
	if _, err := os.Stat(s.evalLeasePath(ref, ".lock")); !os.IsNotExist(err) {
		t.Errorf("a refused lease left its file: %v", err)
	}
}
