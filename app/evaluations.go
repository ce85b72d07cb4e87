package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/quire/quire"
	"github.com/quire/quire/render"
)

// Evaluations: a prompt version's payloads sent to its model (and to
// another version's, to compare), each output checked by the payload's
// assertions. An evaluation is a job: StartEvaluation stores it with its
// plan and answers at once; a runner sends its cases, a bounded number at
// a time per provider (llm's background slots, apart from the runs of
// API requests), and stores what is done one batch per commit
// (quire.EvaluationStore, on refs/evaluations/<id>). A restart resumes
// every unfinished evaluation from its stored cases (ResumeEvaluations),
// so an acknowledged evaluation survives a crash, and a case stored is
// never sent again.
//
// Outputs are cached by what was sent (provider, model, parameters,
// messages) and the repetition: an unchanged case costs nothing unless
// the request says fresh.

// Bounds of one evaluation.
const (
	MaxEvalRepeat = 5
	MaxEvalCases  = 1000
	// evalWorkers bounds the cases of one evaluation sent and not yet
	// stored: what a crash can make it send again. The provider's
	// background slots bound the calls in flight.
	evalWorkers = 16
	// evalCacheSize is how many outputs the cache keeps.
	evalCacheSize = 1 << 14
)

// EvaluationRequest asks for an evaluation of a version.
type EvaluationRequest struct {
	// Against is "" (nothing), a version number, "live" or "base" (the
	// base of the version's open review; the live version when it has
	// none).
	Against string
	// Payloads are the payloads to evaluate; none: all of them.
	Payloads []string
	// Repeat sends each payload that many times (1 when 0).
	Repeat int
	// Fresh sends every case to the provider, cached or not.
	Fresh bool
}

// EvaluationView is an evaluation and its cases done.
type EvaluationView struct {
	Evaluation *quire.Evaluation `json:"evaluation"`
	Cases      []*quire.EvalCase `json:"cases"`
}

// evaluator runs evaluations: the store, the output cache and the jobs
// under way.
type evaluator struct {
	store quire.EvaluationStore // nil: the version store keeps none
	cache *lru.Cache[string, *cachedOutput]

	mu      sync.Mutex
	jobs    map[string]*evalJob // by evaluation id
	ctx     context.Context     // every job's; done once stopped
	stop    context.CancelFunc
	wg      sync.WaitGroup
	stopped bool
	cluster evalCluster // which node runs what (evalleases.go)
}

// evalJob is one evaluation under way.
type evalJob struct {
	cancel   context.CancelFunc
	canceled atomic.Bool // by a user: the job ends canceled
	done     chan struct{}
}

// cachedOutput is a provider's answer as the cache keeps it.
type cachedOutput struct {
	res     quire.CompletionResult
	latency int64
}

func newEvaluator(versions quire.VersionStore) *evaluator {
	ev := &evaluator{jobs: map[string]*evalJob{}}
	ev.store, _ = versions.(quire.EvaluationStore)
	ev.cluster = newEvalCluster(ev.store)
	ev.cache, _ = lru.New[string, *cachedOutput](evalCacheSize)
	ev.ctx, ev.stop = context.WithCancel(context.Background())
	return ev
}

// evalStore is the evaluation store when the caller has want on the
// prompt.
func (h *Handle) evalStore(want quire.Access) (quire.EvaluationStore, error) {
	if err := h.needPrompt(want); err != nil {
		return nil, err
	}
	return h.app.evalStore()
}

// evalStore returns the evaluation store, or EUNAVAILABLE.
func (a *App) evalStore() (quire.EvaluationStore, error) {
	if a.evals.store == nil {
		return nil, quire.Errorf(quire.EUNAVAILABLE, "evaluations are not kept by this server")
	}
	return a.evals.store, nil
}

// StartEvaluation evaluates version ref of the prompt (write access: it
// spends the operator's money): it stores the evaluation, queued, and
// starts it.
func (h *Handle) StartEvaluation(ctx context.Context, ref VersionRef, req EvaluationRequest) (*quire.Evaluation, error) {
	a, p, as := h.app, h.P, h.Asset
	_, err := h.evalStore(quire.AccessWrite)
	if err != nil {
		return nil, err
	}
	if a.llm == nil {
		return nil, quire.Errorf(quire.ENOPROVIDER, "no model provider is configured: the operator sets one with quire serve --llm NAME=BASE_URL")
	}
	e, err := a.planEvaluation(ctx, as, ref, req)
	if err != nil {
		return nil, err
	}
	e.CreatedBy = quire.ReviewUserOf(p.Actor())
	return a.createEvaluation(ctx, p.Actor(), as, e)
}

// planEvaluation resolves the head and what it is compared with, and
// fixes the cases: the payloads as they are now, each Repeat times.
func (a *App) planEvaluation(ctx context.Context, as *quire.Asset, ref VersionRef, req EvaluationRequest) (*quire.Evaluation, error) {
	if req.Repeat == 0 {
		req.Repeat = 1
	}
	if req.Repeat < 1 || req.Repeat > MaxEvalRepeat {
		return nil, quire.Errorf(quire.EINVALID, "repeat must be from 1 to %d", MaxEvalRepeat).WithDetail("field", "repeat")
	}
	head, content, err := a.versionAt(ctx, as, ref)
	if err != nil {
		return nil, err
	}
	if content.Model == "" {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "version %d names no model: set model in its config.json", head.Number)
	}
	now := a.now().UTC()
	e := &quire.Evaluation{
		ID: uuid.NewString(), PromptID: as.ID, State: quire.EvalQueued,
		Version: head.Number, Commit: head.Commit, Against: req.Against,
		Repeat: req.Repeat, Fresh: req.Fresh, CreatedAt: now, UpdatedAt: now,
	}
	switch req.Against {
	case "":
	case "live":
		pv, err := a.prompts.LivePrompt(ctx, as)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return nil, quire.Errorf(quire.EUNPROCESSABLE, "the prompt has no live version to compare with").WithDetail("field", "against")
		} else if err != nil {
			return nil, err
		}
		e.AgainstVersion, e.AgainstCommit = pv.Version.Number, pv.Version.Commit
	case "base":
		if e.AgainstVersion, e.AgainstCommit, err = a.baseOf(ctx, as, head.Number); err != nil {
			return nil, err
		}
	default:
		n, err := strconv.Atoi(req.Against)
		if err != nil || n <= 0 {
			return nil, quire.Errorf(quire.EINVALID, "against must be a version number, \"live\" or \"base\"").WithDetail("field", "against")
		}
		v, err := a.versions.Version(ctx, as, n)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return nil, quire.Errorf(quire.EUNPROCESSABLE, "against: version %d not found", n).WithDetail("field", "against")
		} else if err != nil {
			return nil, err
		}
		e.AgainstVersion, e.AgainstCommit = v.Number, v.Commit
	}
	all, err := a.payloads.Payloads(ctx, as)
	if err != nil {
		return nil, err
	}
	chosen := all
	if req.Payloads != nil {
		byID := map[string]*quire.Payload{}
		for _, pl := range all {
			byID[pl.ID] = pl
		}
		chosen = nil
		seen := map[string]bool{}
		for i, id := range req.Payloads {
			pl := byID[id]
			if pl == nil {
				return nil, quire.Errorf(quire.EUNPROCESSABLE, "payloads/%d: payload %q not found", i, id).WithDetail("pointer", "/payloads/"+strconv.Itoa(i))
			}
			if !seen[id] {
				seen[id] = true
				chosen = append(chosen, pl)
			}
		}
	}
	if len(chosen) == 0 {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "the prompt has no payloads to evaluate: add some with POST …/payloads")
	}
	if len(chosen)*req.Repeat > MaxEvalCases {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "%d payloads × %d repeats is over the %d cases an evaluation may have", len(chosen), req.Repeat, MaxEvalCases)
	}
	for _, pl := range chosen {
		for r := 1; r <= req.Repeat; r++ {
			e.Plan = append(e.Plan, quire.EvalPlanCase{PayloadID: pl.ID, PayloadName: pl.Name, Repeat: r, Variables: pl.Variables, Assertions: pl.Assertions})
		}
	}
	e.Counts.Cases = len(e.Plan)
	return e, nil
}

// versionAt is version ref of as with its prompt content.
func (a *App) versionAt(ctx context.Context, as *quire.Asset, ref VersionRef) (*quire.Version, *quire.PromptContent, error) {
	switch {
	case ref.Live:
		pv, err := a.prompts.LivePrompt(ctx, as)
		if err != nil {
			return nil, nil, err
		}
		return pv.Version, pv.Content, nil
	case ref.Label != "":
		return a.labelPrompt(ctx, as, ref.Label)
	}
	v, err := a.versions.Version(ctx, as, ref.Number)
	if err != nil {
		return nil, nil, err
	}
	c, err := a.prompts.PromptContent(ctx, as, v.Commit)
	if err != nil {
		return nil, nil, err
	}
	return v, c, nil
}

// baseOf is what version n is compared with as "base": the base of its
// open review, else the live version.
func (a *App) baseOf(ctx context.Context, as *quire.Asset, n int) (int, string, error) {
	if a.reviews != nil {
		open, err := a.reviews.Reviews(ctx, as, quire.ReviewOpen)
		if err != nil {
			return 0, "", err
		}
		for _, rv := range open {
			if rv.Version == n && rv.Base.Commit != "" {
				return rv.Base.Version, rv.Base.Commit, nil
			}
		}
	}
	pv, err := a.prompts.LivePrompt(ctx, as)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return 0, "", quire.Errorf(quire.EUNPROCESSABLE, "version %d has no base to compare with: no open review with a base, and no live version", n).WithDetail("field", "against")
	} else if err != nil {
		return 0, "", err
	}
	return pv.Version.Number, pv.Version.Commit, nil
}

// Evaluation reads evaluation evalID of the prompt with its cases done
// (read access).
func (h *Handle) Evaluation(ctx context.Context, ref VersionRef, evalID string) (*EvaluationView, error) {
	st, err := h.evalStore(quire.AccessRead)
	if err != nil {
		return nil, err
	}
	e, cases, err := h.app.evaluationOf(ctx, st, h.Asset, ref, evalID)
	if err != nil {
		return nil, err
	}
	e.Plan = nil
	if cases == nil {
		cases = []*quire.EvalCase{}
	}
	return &EvaluationView{Evaluation: e, Cases: cases}, nil
}

// Evaluations lists a page of the evaluations of the prompt, newest
// first (read access).
func (h *Handle) Evaluations(ctx context.Context, ref VersionRef, o quire.ListOptions) ([]*quire.Evaluation, string, error) {
	a, as := h.app, h.Asset
	st, err := h.evalStore(quire.AccessRead)
	if err != nil {
		return nil, "", err
	}
	v, _, err := a.versionAt(ctx, as, ref)
	if err != nil {
		return nil, "", err
	}
	all, err := st.Evaluations(ctx, as)
	if err != nil {
		return nil, "", err
	}
	mine := all[:0]
	for _, e := range all {
		if e.Version == v.Number {
			mine = append(mine, e)
		}
	}
	return Page(mine, o)
}

// CancelEvaluation stops evaluation evalID of the prompt (write access):
// no case is sent after it returns; the cases done stay. Canceling a
// finished evaluation is ECONFLICT.
func (h *Handle) CancelEvaluation(ctx context.Context, ref VersionRef, evalID string) (*quire.Evaluation, error) {
	a, as := h.app, h.Asset
	st, err := h.evalStore(quire.AccessWrite)
	if err != nil {
		return nil, err
	}
	e, _, err := a.evaluationOf(ctx, st, as, ref, evalID)
	if err != nil {
		return nil, err
	}
	if e.Finished() {
		return nil, quire.Errorf(quire.ECONFLICT, "evaluation %s is %s", e.ID, e.State).WithDetail("state", e.State)
	}
	if job := a.evals.job(e.ID); job != nil {
		job.canceled.Store(true)
		job.cancel()
		select {
		case <-job.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	} else if err := a.cancelElsewhere(ctx, as, e); err != nil {
		// Not under way here: on another node, or on none.
		return nil, err
	}
	e, _, err = st.Evaluation(ctx, as, evalID)
	if err != nil {
		return nil, err
	}
	e.Plan = nil
	return e, nil
}

// evaluationOf reads evaluation evalID of version ref of as: another
// version's is not found.
func (a *App) evaluationOf(ctx context.Context, st quire.EvaluationStore, as *quire.Asset, ref VersionRef, evalID string) (*quire.Evaluation, []*quire.EvalCase, error) {
	e, cases, err := st.Evaluation(ctx, as, evalID)
	if err != nil {
		return nil, nil, err
	}
	n := ref.Number
	if ref.Live || ref.Label != "" {
		v, _, err := a.versionAt(ctx, as, ref)
		if err != nil {
			return nil, nil, err
		}
		n = v.Number
	}
	if e.Version != n {
		return nil, nil, quire.Errorf(quire.ENOTFOUND, "evaluation not found")
	}
	return e, cases, nil
}

// ResumeEvaluations starts again every evaluation a stop interrupted,
// from its last stored case, and records the events of those that
// finished without: the server calls it before serving. Another node's
// evaluations under way are left to it; from then on the node looks
// for those a stopped node left (evalleases.go).
func (a *App) ResumeEvaluations(ctx context.Context) error {
	if a.evals.store == nil {
		return nil
	}
	err := a.resumePending(ctx)
	a.evals.sweep(a)
	return err
}

// StopEvaluations stops every evaluation under way and waits for each to
// store what it finished; they stay unfinished, for the next start to
// resume. The server calls it on Close.
func (a *App) StopEvaluations() {
	ev := a.evals
	ev.mu.Lock()
	ev.stopped = true
	ev.mu.Unlock()
	ev.stop()
	ev.wg.Wait()
}

// EvaluationsIdle waits until no evaluation is under way (tests).
func (a *App) EvaluationsIdle(ctx context.Context) error {
	for {
		a.evals.mu.Lock()
		n := len(a.evals.jobs)
		a.evals.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (ev *evaluator) job(id string) *evalJob {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.jobs[id]
}

// start runs evaluation e of as in the background; done are its cases
// already stored. release gives back its lease, once the job ended.
func (ev *evaluator) start(a *App, as *quire.Asset, e *quire.Evaluation, done []*quire.EvalCase, release func()) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.stopped || ev.jobs[e.ID] != nil {
		release()
		return
	}
	ctx, cancel := context.WithCancel(ev.ctx)
	job := &evalJob{cancel: cancel, done: make(chan struct{})}
	ev.jobs[e.ID] = job
	ev.wg.Add(1)
	go func() {
		defer ev.wg.Done()
		defer close(job.done)
		defer func() {
			ev.mu.Lock()
			delete(ev.jobs, e.ID)
			ev.mu.Unlock()
			cancel()
			release()
		}()
		a.runEvaluation(ctx, as, e, done, job)
	}()
	ev.watchCancel(ctx, quire.EvalRef{PromptID: as.ID, ID: e.ID}, job)
}

// runEvaluation sends the cases of e not yet done and stores them as
// they finish: every result that arrived while the last commit was
// written goes into the next (group commit), so a case is stored at most
// one commit after it finished.
func (a *App) runEvaluation(ctx context.Context, as *quire.Asset, e *quire.Evaluation, done []*quire.EvalCase, job *evalJob) {
	st := a.evals.store
	by := quire.Actor{Name: e.CreatedBy.Name, Email: e.CreatedBy.Email, UserID: e.CreatedBy.ID}
	store := context.WithoutCancel(ctx)
	have := map[string]*quire.EvalCase{}
	for _, c := range done {
		have[c.Key()] = c
	}
	var todo []quire.EvalPlanCase
	for _, pc := range e.Plan {
		if have[pc.Key()] == nil {
			todo = append(todo, pc)
		}
	}
	if e.State == quire.EvalQueued {
		e.State, e.UpdatedAt = quire.EvalRunning, a.now().UTC()
		if err := st.SaveEvaluation(store, by, as, e, nil, "Run evaluation"); err != nil {
			a.finishEvaluation(store, as, e, nil, quire.EvalFailed, "could not store the evaluation: "+err.Error())
			return
		}
	}
	cases := make(chan quire.EvalPlanCase)
	results := make(chan *quire.EvalCase, len(todo))
	// unstored holds a token per case fed and not yet stored that called
	// a provider: a case answered from the cache gives its token back at
	// once, since sending it again would cost nothing.
	unstored := make(chan struct{}, evalWorkers)
	var workers sync.WaitGroup
	for range min(evalWorkers, len(todo)) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for pc := range cases {
				c := a.evalCase(ctx, as, e, pc)
				if ctx.Err() != nil {
					return // cut short: not a result, sent again on resume
				}
				if !madeCalls(c) {
					<-unstored
				}
				results <- c
			}
		}()
	}
	go func() {
		defer close(cases)
		for _, pc := range todo {
			select {
			case unstored <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case cases <- pc:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		workers.Wait()
		close(results)
	}()
	var batch []*quire.EvalCase
	save := func(msg string) error {
		if len(batch) == 0 {
			return nil
		}
		for _, c := range batch {
			have[c.Key()] = c
		}
		tally(e, have)
		e.UpdatedAt = a.now().UTC()
		err := st.SaveEvaluation(store, by, as, e, batch, msg)
		for _, c := range batch {
			if madeCalls(c) {
				<-unstored
			}
		}
		batch = batch[:0]
		return err
	}
	for c := range results {
		batch = append(batch, c)
	drain:
		for {
			select {
			case c, ok := <-results:
				if !ok {
					break drain
				}
				batch = append(batch, c)
			default:
				break drain
			}
		}
		if len(have)+len(batch) == len(e.Plan) {
			break // the last batch goes with the final state
		}
		if err := save(fmt.Sprintf("Evaluate %d case(s): %d of %d done", len(batch), len(have)+len(batch), len(e.Plan))); err != nil {
			job.cancel()
			for range results {
			}
			a.finishEvaluation(store, as, e, nil, quire.EvalFailed, "could not store the cases: "+err.Error())
			return
		}
	}
	switch {
	case job.canceled.Load():
		a.finishEvaluation(store, as, e, batch, quire.EvalCanceled, "")
	case ctx.Err() != nil: // quire is stopping: store what is done, resume later
		if err := save(fmt.Sprintf("Evaluate %d case(s) before a stop", len(batch))); err != nil {
			a.evalLog(err)
		}
	default:
		for _, c := range batch {
			have[c.Key()] = c
		}
		tally(e, have)
		state, why := quire.EvalCompleted, ""
		if e.Counts.Errored == e.Counts.Cases {
			state, why = quire.EvalFailed, "every case failed: "+firstError(have, e.Plan)
		}
		a.finishEvaluation(store, as, e, batch, state, why)
	}
}

// madeCalls reports whether case c called a provider (rather than
// taking every output from the cache or failing to render).
func madeCalls(c *quire.EvalCase) bool {
	for _, s := range []*quire.EvalSide{c.Head, c.Against} {
		if s == nil {
			continue
		}
		if !s.Cached && !strings.HasPrefix(s.Error, "render: ") {
			return true
		}
		for _, j := range s.Judges {
			if !j.Cached {
				return true
			}
		}
		if strings.HasPrefix(s.Error, "llm_judge: ") {
			return true
		}
	}
	return false
}

// finishEvaluation stores e ended in state, with the last cases, and
// records its event.
func (a *App) finishEvaluation(ctx context.Context, as *quire.Asset, e *quire.Evaluation, last []*quire.EvalCase, state, why string) {
	by := quire.Actor{Name: e.CreatedBy.Name, Email: e.CreatedBy.Email, UserID: e.CreatedBy.ID}
	now := a.now().UTC()
	e.State, e.Error, e.UpdatedAt, e.EndedAt = state, why, now, &now
	msg := "Complete evaluation"
	switch state {
	case quire.EvalCanceled:
		msg = "Cancel evaluation"
	case quire.EvalFailed:
		msg = "Fail evaluation: " + firstLine(why)
	}
	if len(last) > 0 {
		msg += fmt.Sprintf(" with %d case(s)", len(last))
	}
	if err := a.evals.store.SaveEvaluation(ctx, by, as, e, last, msg); err != nil {
		a.evalLog(err) // stays unfinished on disk: the next start resumes it
		return
	}
	if err := a.evaluationDone(ctx, as, e); err != nil {
		a.evalLog(err)
	}
}

// evaluationDone is where a finished evaluation ends: its event recorded
// (completed or failed; a cancel has none), then its pending mark
// dropped. A crash between the two records the event again on restart.
func (a *App) evaluationDone(ctx context.Context, as *quire.Asset, e *quire.Evaluation) error {
	t := quire.EventEvaluationCompleted
	switch e.State {
	case quire.EvalFailed:
		t = quire.EventEvaluationFailed
	case quire.EvalCanceled:
		t = ""
	}
	if t != "" {
		by := quire.Actor{Name: e.CreatedBy.Name, Email: e.CreatedBy.Email, UserID: e.CreatedBy.ID}
		ev := a.assetEvent(t, by, as, e.Version, e.Commit)
		ev.Data["evaluation"], ev.Data["state"], ev.Data["counts"] = e.ID, e.State, e.Counts
		if e.Review > 0 {
			ev.Review = e.Review
		}
		if e.Error != "" {
			ev.Data["error"] = e.Error
		}
		if err := a.emit(ctx, ev); err != nil {
			return err
		}
	}
	return a.evals.store.DropPendingEvaluation(ctx, quire.EvalRef{PromptID: as.ID, ID: e.ID})
}

// evalLog reports an error of background work nobody waits for.
func (a *App) evalLog(err error) {
	if a.ev.Logger != nil {
		a.ev.Logger.Error("evaluation: not stored; the next start resumes it", "error", err.Error())
	}
}

func firstLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// tally counts the cases done into e.
func tally(e *quire.Evaluation, have map[string]*quire.EvalCase) {
	n := quire.EvalCounts{Cases: len(e.Plan)}
	var u quire.EvalUsage
	for _, c := range have {
		switch {
		case c.Head.Error != "":
			n.Errored++
		case c.Head.Failed():
			n.Failed++
		default:
			n.Passed++
		}
		if c.Changed {
			n.Changed++
		}
		for _, s := range []*quire.EvalSide{c.Head, c.Against} {
			if s == nil {
				continue
			}
			addUsage(&u, s.Usage, s.Cached, s.Error == "" || s.Output != "")
			for _, j := range s.Judges {
				addUsage(&u, j.Usage, j.Cached, true)
			}
		}
	}
	e.Counts, e.Usage = n, u
}

func addUsage(u *quire.EvalUsage, s quire.EvalSideUsage, cached, called bool) {
	switch {
	case cached:
		u.CachedCalls++
	case called:
		u.Calls++
		u.InputTokens += s.InputTokens
		u.OutputTokens += s.OutputTokens
	}
}

func firstError(have map[string]*quire.EvalCase, plan []quire.EvalPlanCase) string {
	for _, pc := range plan {
		if c := have[pc.Key()]; c != nil && c.Head.Error != "" {
			return c.Head.Error
		}
	}
	return ""
}

// evalCase runs one case: the head's output and the other version's.
func (a *App) evalCase(ctx context.Context, as *quire.Asset, e *quire.Evaluation, pc quire.EvalPlanCase) *quire.EvalCase {
	c := &quire.EvalCase{PayloadID: pc.PayloadID, PayloadName: pc.PayloadName, Repeat: pc.Repeat}
	c.Head = a.evalSide(ctx, as, e.Version, e.Commit, pc, e.Fresh)
	if e.AgainstCommit != "" {
		c.Against = a.evalSide(ctx, as, e.AgainstVersion, e.AgainstCommit, pc, e.Fresh)
		c.Changed = c.Head.Error == "" && c.Against.Error == "" && c.Head.Output != c.Against.Output
	}
	return c
}

// evalSide renders version n at commit with the case's variables, sends
// it (or takes the cached output) and checks the assertions.
func (a *App) evalSide(ctx context.Context, as *quire.Asset, n int, commit string, pc quire.EvalPlanCase, fresh bool) *quire.EvalSide {
	s := &quire.EvalSide{Assertions: []quire.AssertionResult{}}
	content, err := a.prompts.PromptContent(ctx, as, commit)
	var r Rendered
	if err == nil {
		var cp *compiledPrompt
		if cp, err = a.templates.get(commit, content); err == nil {
			var vars render.Vars
			if vars, err = render.DecodeVars(pc.Variables); err == nil {
				r, err = a.renderCompiled(ctx, as, &quire.Version{Number: n, Commit: commit}, content, cp, vars)
			}
		}
	}
	if err != nil {
		s.Error = "render: " + quire.ErrorMessage(err)
		return s
	}
	provider, comp := completionOf(r, "", "")
	out, cached, latency, err := a.complete(ctx, provider, comp, pc.Repeat, fresh)
	if err != nil {
		s.Error = quire.ErrorMessage(err)
		return s
	}
	s.Output, s.Cached, s.LatencyMS = out.Output, cached, latency
	s.Usage = quire.EvalSideUsage{InputTokens: out.InputTokens, OutputTokens: out.OutputTokens}
	for _, as := range pc.Assertions {
		res, judge, err := a.checkAssertion(ctx, as, s.Output, out, fresh)
		if judge != nil {
			s.Judges = append(s.Judges, *judge)
		}
		if err != nil && s.Error == "" {
			s.Error = "llm_judge: " + quire.ErrorMessage(err)
		}
		s.Assertions = append(s.Assertions, res)
	}
	return s
}

// complete sends comp to provider in the background lane, or answers
// from the cache: the same call and repetition answered before, unless
// fresh.
func (a *App) complete(ctx context.Context, provider string, comp quire.Completion, repeat int, fresh bool) (*quire.CompletionResult, bool, int64, error) {
	key := cacheKey(provider, comp, repeat)
	if !fresh {
		if c, ok := a.evals.cache.Get(key); ok {
			res := c.res
			return &res, true, c.latency, nil
		}
	}
	comp.Background = true
	start := time.Now()
	res, err := a.llm.Complete(ctx, provider, comp)
	if err != nil {
		return nil, false, 0, err
	}
	latency := time.Since(start).Milliseconds()
	a.evals.cache.Add(key, &cachedOutput{res: *res, latency: latency})
	return res, false, latency, nil
}

// cacheKey names a call: provider, model, parameters, messages and the
// repetition.
func cacheKey(provider string, comp quire.Completion, repeat int) string {
	b, _ := json.Marshal(struct {
		Provider string          `json:"p"`
		Model    string          `json:"m"`
		Params   json.RawMessage `json:"o"`
		Messages []quire.Message `json:"x"`
		Repeat   int             `json:"r"`
	}{provider, comp.Model, comp.Params, comp.Messages, repeat})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
