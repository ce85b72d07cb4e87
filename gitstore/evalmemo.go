package gitstore

import (
	"slices"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/quire/quire"
)

// What a commit of an evaluation's ref holds never changes, so the
// evaluations read are kept by commit: a review's page and its API read
// parse the same evaluation.json and case files on every request
// otherwise (50 cases: 50 blobs decoded each time). Two memos: the
// evaluations alone (small; Evaluations lists them) and evaluations
// with their cases, fewer and bounded in size, as outputs may be long.
const (
	evalMemoSize      = 1024
	evalCasesMemoSize = 16
	// evalCasesMemoMax bounds the case files' bytes of an evaluation
	// kept with its cases; a larger one is read each time.
	evalCasesMemoMax = 2 << 20
)

type evalMemo struct {
	once  sync.Once
	evals *lru.Cache[plumbing.Hash, *quire.Evaluation]
	cases *lru.Cache[plumbing.Hash, evalWithCases]
}

type evalWithCases struct {
	e     *quire.Evaluation
	cases []*quire.EvalCase
}

// memo is the store's memo of evaluations, made on first use.
func (m *evalMemo) init() *evalMemo {
	m.once.Do(func() {
		m.evals, _ = lru.New[plumbing.Hash, *quire.Evaluation](evalMemoSize)
		m.cases, _ = lru.New[plumbing.Hash, evalWithCases](evalCasesMemoSize)
	})
	return m
}

// copyEval is e for a caller, who may change it: the memo's copy stays as
// read. Plan is shared and read only.
func copyEval(e *quire.Evaluation) *quire.Evaluation {
	cp := *e
	return &cp
}

// evaluation is the evaluation at tip with its cases, if kept. The cases
// are shared: callers read them and never change them.
func (m *evalMemo) evaluation(tip plumbing.Hash) (*quire.Evaluation, []*quire.EvalCase, bool) {
	v, ok := m.init().cases.Get(tip)
	if !ok {
		return nil, nil, false
	}
	return copyEval(v.e), slices.Clone(v.cases), true
}

// keepEvaluation keeps e and its cases, read at tip from size bytes of
// case files.
func (m *evalMemo) keepEvaluation(tip plumbing.Hash, e *quire.Evaluation, cases []*quire.EvalCase, size int64) {
	m.init()
	keep := copyEval(e)
	m.evals.Add(tip, keep)
	if size <= evalCasesMemoMax {
		m.cases.Add(tip, evalWithCases{keep, slices.Clone(cases)})
	}
}

// header is the evaluation at tip, without its plan, if kept.
func (m *evalMemo) header(tip plumbing.Hash) (*quire.Evaluation, bool) {
	e, ok := m.init().evals.Get(tip)
	if !ok {
		return nil, false
	}
	e = copyEval(e)
	e.Plan = nil
	return e, true
}

func (m *evalMemo) keepHeader(tip plumbing.Hash, e *quire.Evaluation) {
	m.init().evals.Add(tip, copyEval(e))
}
