package gitstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
)

// Evaluations live in the prompt's repository, each on its own ref as
// reviews do: refs/evaluations/<id> holds evaluation.json (the request,
// its plan and its state) and cases/<payload id>-<repeat>.json, one per
// case done. Every batch of cases is one commit by whoever asked for the
// evaluation, so `git log -p refs/evaluations/<id>` is its progress, and
// `git fetch origin 'refs/evaluations/*:refs/evaluations/*'` carries it.
// Pushes to these refs are refused as to every ref but a draft's.
//
// An evaluation not finished is also named by an empty file
// .evaluations/<prompt id>.<id> under the data root, written before its
// ref and removed (DropPendingEvaluation) once it is finished and its
// event recorded, so a restart finds the ones to resume without opening
// every repository.
const (
	evaluationsPrefix = "refs/evaluations/"
	evaluationFile    = "evaluation.json"
	evalCasesDir      = "cases"
	pendingEvalsDir   = ".evaluations"
)

// EvaluationRef is the ref of evaluation id.
func EvaluationRef(id string) plumbing.ReferenceName {
	return plumbing.ReferenceName(evaluationsPrefix + id)
}

func evalCasePath(key string) string { return evalCasesDir + "/" + key + ".json" }

func (s *Store) pendingEval(promptID, id string) string {
	return filepath.Join(s.opts.Root, pendingEvalsDir, promptID+"."+id)
}

// markPending writes (or, with done, removes) evaluation id's pending
// mark, durably with fsync on.
func (s *Store) markPending(promptID, id string, done bool) error {
	path := s.pendingEval(promptID, id)
	if done {
		err := os.Remove(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err == nil && s.opts.Fsync {
			err = odb.SyncDirs(s.opts.Root, filepath.Dir(path))
		}
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := odb.WriteSyncClose(f, nil, s.opts.Fsync); err != nil {
		return err
	}
	if s.opts.Fsync {
		return odb.SyncDirs(s.opts.Root, filepath.Dir(path))
	}
	return nil
}

// CreateEvaluation stores new evaluation e on its ref; it is ECONFLICT
// when the ref exists.
func (s *Store) CreateEvaluation(ctx context.Context, by quire.Actor, a *quire.Asset, e *quire.Evaluation) error {
	if !validID(e.ID) {
		return quire.Errorf(quire.EINVALID, "invalid evaluation id %q", e.ID)
	}
	if err := s.markPending(a.ID, e.ID, false); err != nil {
		return fmt.Errorf("mark evaluation %s: %w", e.ID, err)
	}
	msg := fmt.Sprintf("Evaluate version %d: %d case(s)", e.Version, len(e.Plan))
	if e.Against != "" {
		msg += " against " + e.Against
	}
	if err := s.writeEvaluation(by, a, e, nil, msg, true); err != nil {
		s.markPending(a.ID, e.ID, true)
		return err
	}
	return nil
}

// SaveEvaluation commits e's state and cases in one commit.
func (s *Store) SaveEvaluation(ctx context.Context, by quire.Actor, a *quire.Asset, e *quire.Evaluation, cases []*quire.EvalCase, msg string) error {
	return s.writeEvaluation(by, a, e, cases, msg, false)
}

func (s *Store) writeEvaluation(by quire.Actor, a *quire.Asset, e *quire.Evaluation, cases []*quire.EvalCase, msg string, create bool) error {
	w, err := s.begin(a)
	if err != nil {
		return err
	}
	defer w.done()
	w.hooks = false // not version content
	ref := EvaluationRef(e.ID)
	tip, err := w.r.ref(ref)
	if err != nil {
		return err
	}
	if create != tip.IsZero() {
		if create {
			return quire.Errorf(quire.ECONFLICT, "evaluation %s exists", e.ID)
		}
		return quire.Errorf(quire.ENOTFOUND, "evaluation not found")
	}
	_, err = w.editRef(by, ref, tip, evaluationConflict, func(tree plumbing.Hash) (plumbing.Hash, string, error) {
		edit, err := w.r.jsonEdit(evaluationFile, storedEvaluation{e, e.Plan})
		if err != nil {
			return plumbing.ZeroHash, "", err
		}
		edits := []odb.TreeEdit{edit}
		for _, c := range cases {
			edit, err := w.r.jsonEdit(evalCasePath(c.Key()), c)
			if err != nil {
				return plumbing.ZeroHash, "", err
			}
			edits = append(edits, edit)
		}
		newTree, err := w.r.EditTree(tree, edits)
		return newTree, msg, err
	})
	return err
}

// storedEvaluation is evaluation.json: the evaluation with its plan.
type storedEvaluation struct {
	*quire.Evaluation
	Plan []quire.EvalPlanCase `json:"plan"`
}

// readEvaluation reads evaluation.json of tree; found is false when
// there is none.
func (r *repo) readEvaluation(tree plumbing.Hash) (*quire.Evaluation, bool, error) {
	st := storedEvaluation{Evaluation: &quire.Evaluation{}}
	ok, err := r.readJSON(tree, evaluationFile, &st)
	st.Evaluation.Plan = st.Plan
	return st.Evaluation, ok, err
}

func evaluationConflict() error {
	return quire.Errorf(quire.ECONFLICT, "evaluation changed concurrently")
}

// Evaluation reads evaluation id and its cases done, in plan order.
func (s *Store) Evaluation(ctx context.Context, a *quire.Asset, id string) (*quire.Evaluation, []*quire.EvalCase, error) {
	if !validID(id) {
		return nil, nil, quire.Errorf(quire.ENOTFOUND, "evaluation not found")
	}
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, nil, err
	}
	tip, tree, err := r.refTree(EvaluationRef(id))
	if err != nil {
		return nil, nil, err
	}
	if tree.IsZero() {
		return nil, nil, quire.Errorf(quire.ENOTFOUND, "evaluation not found")
	}
	if e, cases, ok := s.evals.evaluation(tip); ok {
		return e, cases, nil
	}
	e, ok, err := r.readEvaluation(tree)
	if err != nil {
		return nil, nil, err
	} else if !ok {
		return nil, nil, fmt.Errorf("evaluation %s has no %s", id, evaluationFile)
	}
	e.Tip = tip.String()
	var cases []*quire.EvalCase
	size, err := readCases(r, tree, &cases)
	if err != nil {
		return nil, nil, err
	}
	order := map[string]int{}
	for i, c := range e.Plan {
		order[c.Key()] = i
	}
	sort.SliceStable(cases, func(i, j int) bool { return order[cases[i].Key()] < order[cases[j].Key()] })
	s.evals.keepEvaluation(tip, e, cases, size)
	return e, cases, nil
}

// readCases reads the case files of an evaluation's tree into out and
// returns their bytes.
func readCases(r *repo, tree plumbing.Hash, out *[]*quire.EvalCase) (int64, error) {
	sub, ok, err := r.lookupDir(tree, evalCasesDir)
	if err != nil || !ok {
		return 0, err
	}
	var size int64
	err = r.WalkFiles(sub, "", func(name string, te object.TreeEntry) error {
		b, err := r.ReadBlob(te.Hash)
		if err != nil {
			return err
		}
		size += int64(len(b))
		c := &quire.EvalCase{}
		if err := json.Unmarshal(b, c); err != nil {
			return fmt.Errorf("decode %s/%s: %w", evalCasesDir, name, err)
		}
		*out = append(*out, c)
		return nil
	})
	return size, err
}

// Evaluations lists the prompt's evaluations, newest first, without
// their plans.
func (s *Store) Evaluations(ctx context.Context, a *quire.Asset) ([]*quire.Evaluation, error) {
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, err
	}
	refs, _, err := listRefs(r, refMatcher{evaluationsPrefix})
	if err != nil {
		return nil, err
	}
	var out []*quire.Evaluation
	for _, ref := range refs {
		if !validID(strings.TrimPrefix(ref.Name, evaluationsPrefix)) {
			continue // not one of ours
		}
		if e, ok := s.evals.header(ref.Hash); ok {
			out = append(out, e)
			continue
		}
		c, err := r.Commit(ref.Hash)
		if err != nil {
			return nil, err
		}
		e, ok, err := r.readEvaluation(c.TreeHash)
		if err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		e.Plan, e.Tip = nil, ref.Hash.String()
		s.evals.keepHeader(ref.Hash, e)
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// UnfinishedEvaluations lists the evaluations marked pending.
func (s *Store) UnfinishedEvaluations(ctx context.Context) ([]quire.EvalRef, error) {
	entries, err := os.ReadDir(filepath.Join(s.opts.Root, pendingEvalsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []quire.EvalRef
	for _, e := range entries {
		prompt, id, ok := strings.Cut(e.Name(), ".")
		if !ok || !validID(prompt) || !validID(id) {
			continue
		}
		out = append(out, quire.EvalRef{PromptID: prompt, ID: id})
	}
	return out, nil
}

// DropPendingEvaluation removes the pending mark of an evaluation.
func (s *Store) DropPendingEvaluation(ctx context.Context, ref quire.EvalRef) error {
	return s.markPending(ref.PromptID, ref.ID, true)
}
