package app

import (
	"context"
	"fmt"
	"time"

	"github.com/quire/quire"
)

// Evaluations on a cluster: several nodes share the data root, and each
// evaluation runs on exactly one of them, the holder of its lease
// (quire.EvaluationLeases: a flock on the shared file system, dropped
// when its process dies). The node that starts an evaluation takes the
// lease before the evaluation is stored and keeps it until the job ends.
// Every node looks for pending evaluations no process runs, at start
// (ResumeEvaluations) and every evalSweepEvery after, and takes them up
// from their last stored case: a node that stops, gracefully or not,
// hands its evaluations to the others. A cancel asked on a node that
// does not run the evaluation is a request the running job looks for
// every evalCancelPoll; the cancel answers once the job has stopped.
//
// Without leases (a store that keeps none) every lease is granted: one
// process runs everything, as before.
const (
	// evalSweepEvery is how often a node looks for pending evaluations
	// no process runs.
	evalSweepEvery = 2 * time.Second
	// evalCancelPoll is how often a job looks for a cancel asked on
	// another node: the bound on when it stops sending after one.
	evalCancelPoll = 100 * time.Millisecond
	// evalCancelWait bounds how long a cancel waits for another node's
	// job to stop.
	evalCancelWait = 10 * time.Second
)

// evalCluster is the evaluator's part in a cluster.
type evalCluster struct {
	leases   quire.EvaluationLeases // nil: one process
	sweeping bool
}

func newEvalCluster(store quire.EvaluationStore) evalCluster {
	l, _ := store.(quire.EvaluationLeases)
	return evalCluster{leases: l}
}

// leaseEvaluation takes the lease of ref (quire.EvaluationLeases).
func (a *App) leaseEvaluation(ctx context.Context, ref quire.EvalRef, pending bool) (func(), bool, error) {
	if a.evals.cluster.leases == nil {
		return func() {}, true, nil
	}
	return a.evals.cluster.leases.LeaseEvaluation(ctx, ref, pending)
}

// createEvaluation stores new evaluation e of as and runs it here,
// holding its lease from before it is stored (so no other node's sweep
// takes it up from its pending mark) until its job ends. It returns e
// as it was stored, without its plan.
func (a *App) createEvaluation(ctx context.Context, by quire.Actor, as *quire.Asset, e *quire.Evaluation) (*quire.Evaluation, error) {
	release, ok, err := a.leaseEvaluation(ctx, quire.EvalRef{PromptID: as.ID, ID: e.ID}, false)
	if err != nil {
		return nil, err
	}
	if !ok { // a new id: only a clash of ids
		return nil, fmt.Errorf("evaluation %s: its lease is held", e.ID)
	}
	if err := a.evals.store.CreateEvaluation(ctx, by, as, e); err != nil {
		release()
		return nil, err
	}
	out := *e // the job changes e from now on
	out.Plan = nil
	a.evals.start(a, as, e, nil, release)
	return &out, nil
}

// resumePending takes up every pending evaluation that no process runs:
// it resumes the unfinished ones from their stored cases, records the
// events of those that finished without, and forgets those that cannot
// be resumed (their prompt or their ref is gone).
func (a *App) resumePending(ctx context.Context) error {
	st := a.evals.store
	refs, err := st.UnfinishedEvaluations(ctx)
	if err != nil {
		return err
	}
	for _, ref := range refs {
		if a.evals.job(ref.ID) != nil {
			continue
		}
		release, ok, err := a.leaseEvaluation(ctx, ref, true)
		if err != nil {
			return err
		}
		if !ok {
			continue // another node runs it, or it just finished
		}
		if err := a.resumeLeased(ctx, ref, release); err != nil {
			return err
		}
	}
	return nil
}

// resumeLeased takes up pending evaluation ref, whose lease is held: the
// job releases it, or this does when there is no job to run.
func (a *App) resumeLeased(ctx context.Context, ref quire.EvalRef, release func()) error {
	st := a.evals.store
	as, err := a.meta.Asset(ctx, quire.KindPrompt, ref.PromptID)
	var e *quire.Evaluation
	var cases []*quire.EvalCase
	if err == nil {
		e, cases, err = st.Evaluation(ctx, as, ref.ID)
	}
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		defer release()
		return st.DropPendingEvaluation(ctx, ref)
	}
	if err != nil {
		release()
		return err
	}
	if e.Finished() {
		defer release()
		return a.evaluationDone(ctx, as, e)
	}
	if l := a.evals.cluster.leases; l != nil {
		// Canceled while no process ran it (its node stopped): end it.
		if asked, err := l.EvaluationCancelRequested(ctx, ref); err != nil {
			release()
			return err
		} else if asked {
			defer release()
			a.finishEvaluation(ctx, as, e, nil, quire.EvalCanceled, "")
			return nil
		}
	}
	a.evals.start(a, as, e, cases, release)
	return nil
}

// sweep starts, once, the evaluator's look every evalSweepEvery for
// pending evaluations no process runs (another node's that stopped).
func (ev *evaluator) sweep(a *App) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.stopped || ev.cluster.sweeping || ev.cluster.leases == nil {
		return
	}
	ev.cluster.sweeping = true
	ev.wg.Add(1)
	go func() {
		defer ev.wg.Done()
		t := time.NewTicker(evalSweepEvery)
		defer t.Stop()
		for {
			select {
			case <-ev.ctx.Done():
				return
			case <-t.C:
			}
			if err := a.resumePending(ev.ctx); err != nil && ev.ctx.Err() == nil && a.ev.Logger != nil {
				a.ev.Logger.Error("evaluation: taking up the pending evaluations failed; the next look tries again", "error", err.Error())
			}
		}
	}()
}

// watchCancel cancels job, which runs ref, when a cancel of it is asked
// on another node; it looks every evalCancelPoll until ctx (the job's)
// is done. ev.mu is held.
func (ev *evaluator) watchCancel(ctx context.Context, ref quire.EvalRef, job *evalJob) {
	l := ev.cluster.leases
	if l == nil {
		return
	}
	ev.wg.Add(1)
	go func() {
		defer ev.wg.Done()
		t := time.NewTicker(evalCancelPoll)
		defer t.Stop()
		for {
			if asked, err := l.EvaluationCancelRequested(ctx, ref); err == nil && asked {
				job.canceled.Store(true)
				job.cancel()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// cancelElsewhere cancels evaluation e of as, which no job of this
// process runs. When no process runs it, it is ended here; when another
// node runs it, that node's job is asked to cancel it and this waits
// (at most evalCancelWait) until it has stopped, so nothing is sent once
// it returns. An evaluation that finished otherwise meanwhile is
// ECONFLICT, as a cancel of a finished one is.
func (a *App) cancelElsewhere(ctx context.Context, as *quire.Asset, e *quire.Evaluation) error {
	st := a.evals.store
	ref := quire.EvalRef{PromptID: as.ID, ID: e.ID}
	deadline := time.Now().Add(evalCancelWait)
	asked := false
	for {
		release, ok, err := a.leaseEvaluation(ctx, ref, true)
		if err != nil {
			return err
		}
		if ok { // no process runs it
			defer release()
			cur, _, err := st.Evaluation(ctx, as, e.ID)
			if err != nil {
				return err
			}
			if !cur.Finished() {
				a.finishEvaluation(ctx, as, cur, nil, quire.EvalCanceled, "")
				return nil
			}
			e = cur
		} else if e, _, err = st.Evaluation(ctx, as, e.ID); err != nil {
			return err
		}
		if e.Finished() {
			if e.State == quire.EvalCanceled {
				return nil
			}
			return quire.Errorf(quire.ECONFLICT, "evaluation %s is %s", e.ID, e.State).WithDetail("state", e.State)
		}
		// Another node runs it.
		if !asked {
			if err := a.evals.cluster.leases.RequestEvaluationCancel(ctx, ref); err != nil {
				return err
			}
			asked = true
		}
		if time.Now().After(deadline) {
			return quire.Errorf(quire.EUNAVAILABLE, "evaluation %s runs on another node, which has not stopped it yet: cancel it again", e.ID)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
