package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/quire/quire"
)

// Evaluations in prompt reviews: what a review shows of its head's
// latest evaluation against its base, the policy's evaluate (start one
// when a review opens and when its head moves) and
// require_passing_evaluation (the publish gate), and comments anchored
// on a case.

// ReviewEvaluation is a prompt review's head's latest evaluation.
type ReviewEvaluation struct {
	ID      string           `json:"id"`
	State   string           `json:"state" enum:"queued,running,completed,failed,canceled"`
	Commit  string           `json:"commit"`
	Against string           `json:"against,omitempty"`
	Counts  quire.EvalCounts `json:"counts"`
	// NewlyFailing counts the assertions that pass on the base and fail
	// on the head; Summary says it in a line.
	NewlyFailing int    `json:"newly_failing"`
	Summary      string `json:"summary"`
	// AgainstVersion and Cases (its cases done, in plan order) are for
	// the review page; the API serves them at GET …/evaluations/{id}.
	AgainstVersion int               `json:"-"`
	Cases          []*quire.EvalCase `json:"-"`
	// Tip is the commit of the evaluation's ref read (quire.Evaluation's
	// Tip): the same Tip, the same cases.
	Tip string `json:"-"`
}

// headEvaluation is the newest evaluation of version n at commit: one
// against base when base is given and there is one, else any.
func (a *App) headEvaluation(ctx context.Context, as *quire.Asset, n int, commit, base string) (*quire.Evaluation, error) {
	all, err := a.evals.store.Evaluations(ctx, as)
	if err != nil {
		return nil, err
	}
	var other *quire.Evaluation
	for _, e := range all {
		if e.Version != n || e.Commit != commit {
			continue
		}
		if base == "" || e.AgainstCommit == base {
			return e, nil
		}
		if other == nil {
			other = e
		}
	}
	return other, nil
}

// reviewEvaluation is what review rv of prompt as shows of its head's
// latest evaluation; nil for a skill's review or when there is none.
func (a *App) reviewEvaluation(ctx context.Context, as *quire.Asset, rv *quire.Review) (*ReviewEvaluation, error) {
	if as.Kind != quire.KindPrompt || a.evals.store == nil {
		return nil, nil
	}
	e, err := a.headEvaluation(ctx, as, rv.Version, rv.Head.Commit, rv.Base.Commit)
	if err != nil || e == nil {
		return nil, err
	}
	// The evaluation as read with its cases: the list's copy may be
	// older by a batch.
	e, cases, err := a.evals.store.Evaluation(ctx, as, e.ID)
	if err != nil {
		return nil, err
	}
	out := &ReviewEvaluation{ID: e.ID, State: e.State, Commit: e.Commit, Against: e.Against, Counts: e.Counts, AgainstVersion: e.AgainstVersion, Cases: cases, Tip: e.Tip}
	for _, c := range cases {
		if c.Against == nil {
			continue
		}
		for i, r := range c.Head.Assertions {
			if !r.Passed && i < len(c.Against.Assertions) && c.Against.Assertions[i].Passed {
				out.NewlyFailing++
			}
		}
	}
	out.Summary = evalSummary(e, out.NewlyFailing)
	return out, nil
}

// evalSummary says an evaluation in a line, e.g. "3 of 12 outputs
// changed, 1 assertion newly failing".
func evalSummary(e *quire.Evaluation, newly int) string {
	n := e.Counts
	var parts []string
	if e.AgainstCommit != "" {
		parts = append(parts, fmt.Sprintf("%d of %d outputs changed", n.Changed, n.Cases))
		parts = append(parts, plural(newly, "assertion")+" newly failing")
	} else {
		parts = append(parts, fmt.Sprintf("%d of %d cases passed", n.Passed, n.Cases))
	}
	if n.Failed > 0 {
		parts = append(parts, plural(n.Failed, "case")+" failing")
	}
	if n.Errored > 0 {
		parts = append(parts, plural(n.Errored, "case")+" in error")
	}
	s := strings.Join(parts, ", ")
	if e.State != quire.EvalCompleted {
		s += " (" + e.State + ")"
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// evaluationGate adds to inner, the review gate of a publish of draft n
// of as, the project's require_passing_evaluation: the draft's head
// needs a completed evaluation with no failed or errored case, unless
// an owner overrides (inner checks and records the override).
func (a *App) evaluationGate(ctx context.Context, as *quire.Asset, pr *quire.Project, n int, o PublishOptions, inner quire.ReviewGate) quire.ReviewGate {
	if !pr.Policy().RequirePassingEvaluation || as.Kind != quire.KindPrompt || o.Override || a.evals.store == nil {
		return inner
	}
	return func(rt *quire.ReviewThread) (*quire.ReviewMerge, error) {
		merge, err := inner(rt)
		if err != nil {
			return nil, err
		}
		v, err := a.versions.Version(ctx, as, n)
		if err != nil {
			return nil, err
		}
		base := ""
		if rt != nil {
			base = rt.Review.Base.Commit
		}
		e, err := a.headEvaluation(ctx, as, n, v.Commit, base)
		if err != nil {
			return nil, err
		}
		var why string
		var id any
		var failed, errored int
		switch {
		case e == nil:
			why = "the draft's head has no evaluation: start one with POST …/versions/" + itoa(n) + "/evaluations"
		case e.State != quire.EvalCompleted:
			why = "the evaluation of the draft's head is " + e.State
		case e.Counts.Failed > 0 || e.Counts.Errored > 0:
			why = fmt.Sprintf("the evaluation of the draft's head has %s failing and %s in error", plural(e.Counts.Failed, "case"), plural(e.Counts.Errored, "case"))
		default:
			return merge, nil
		}
		if e != nil {
			id, failed, errored = e.ID, e.Counts.Failed, e.Counts.Errored
		}
		return nil, (&quire.Error{Code: quire.EEVALUATION, Message: "publishing needs a passing evaluation: " + why}).
			WithDetail("evaluation", id).WithDetail("failed", failed).WithDetail("errored", errored)
	}
}

// evaluateReview starts, when project pr's policy says evaluate, an
// evaluation of open prompt review rv's head against its base, unless
// one of that head is under way or done. It acts for by; what fails is
// logged, never the caller's error (the review action succeeded).
func (a *App) evaluateReview(ctx context.Context, by quire.Actor, as *quire.Asset, pr *quire.Project, rv *quire.Review) {
	if as.Kind != quire.KindPrompt || !pr.Policy().Evaluate || a.llm == nil || a.evals.store == nil || rv.State != quire.ReviewOpen {
		return
	}
	ctx = context.WithoutCancel(ctx)
	req := EvaluationRequest{Against: "base"}
	if rv.Base.Commit == "" {
		req.Against = ""
	}
	e, err := a.planEvaluation(ctx, as, VersionRef{Number: rv.Version}, req)
	if err != nil {
		a.evalLog(fmt.Errorf("review %d: %w", rv.Number, err))
		return
	}
	if prev, err := a.headEvaluation(ctx, as, rv.Version, e.Commit, e.AgainstCommit); err != nil {
		a.evalLog(err)
		return
	} else if prev != nil && prev.AgainstCommit == e.AgainstCommit && prev.State != quire.EvalCanceled {
		return
	}
	e.Review, e.CreatedBy = rv.Number, quire.ReviewUserOf(by)
	if _, err := a.createEvaluation(ctx, by, as, e); err != nil {
		a.evalLog(err)
	}
}

// draftMoved hears of every change to a draft (emitUpdate): when its
// prompt's project evaluates reviews and the draft has an open review,
// the review's new head is evaluated, in the background.
func (a *App) draftMoved(ctx context.Context, ev *quire.Event) {
	if ev.Asset == nil || ev.Asset.Kind != quire.KindPrompt || a.llm == nil || a.evals.store == nil || a.reviews == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	// The write's actor, as its event names it, starts the evaluation.
	by := quire.Actor{Email: ev.Actor.Email}
	switch ev.Actor.Type {
	case "user":
		by.UserID = ev.Actor.ID
	case "api_key":
		by.KeyID = ev.Actor.ID
	}
	a.evals.background(func() {
		pr, err := a.meta.Project(ctx, ev.ProjectID)
		if err != nil || !pr.Policy().Evaluate {
			return
		}
		as, err := a.meta.Asset(ctx, ev.Asset.Kind, ev.Asset.ID)
		if err != nil {
			return
		}
		open, err := a.reviews.Reviews(ctx, as, quire.ReviewOpen)
		if err != nil {
			return
		}
		for _, rv := range open {
			if rv.Version == ev.Version {
				a.evaluateReview(ctx, by, as, pr, rv)
			}
		}
	})
}

// background runs fn unless the evaluator stopped; StopEvaluations waits
// for it.
func (ev *evaluator) background(fn func()) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.stopped {
		return
	}
	ev.wg.Add(1)
	go func() {
		defer ev.wg.Done()
		fn()
	}()
}

// checkCaseAnchor checks a comment's case anchor: a payload of prompt
// as, on a comment anchored to no file.
func (a *App) checkCaseAnchor(ctx context.Context, as *quire.Asset, e CommentEdit) error {
	if e.Case == "" {
		return nil
	}
	if as.Kind != quire.KindPrompt {
		return quire.Errorf(quire.EINVALID, "case anchors comments on prompt reviews only").WithDetail("field", "case")
	}
	if e.Path != "" {
		return quire.Errorf(quire.EINVALID, "a comment is anchored to a file or to a case, not both").WithDetail("field", "case")
	}
	if _, err := a.payload(ctx, as, e.Case); quire.ErrorCode(err) == quire.ENOTFOUND {
		return quire.Errorf(quire.EUNPROCESSABLE, "case: payload %s not found", e.Case).WithDetail("field", "case")
	} else if err != nil {
		return err
	}
	return nil
}
