package gitstore

import (
	"context"
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
