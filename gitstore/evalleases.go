package gitstore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/quire/quire"
)

// Which process runs an evaluation, among the nodes sharing the data
// root: the one holding the flock of .evaluation-leases/<prompt
// id>.<id>.lock, taken as the repositories' write locks are (filelock:
// flock, which NFSv4 and CephFS hold across hosts; docs/deployment.md
// says why a lock on the shared file system and not a lease in Redis).
// The kernel, or the file server, drops it when its process dies, so a
// node's crash frees its evaluations for the others.
//
// A cancel asked on a node that does not run the evaluation is the
// file .evaluation-leases/<prompt id>.<id>.cancel, which the running
// job looks for between cases.
//
// The files of an evaluation go when its lease is released after its
// pending mark was dropped (it finished). A lease is taken before the
// mark is written and given back after it is dropped, so while an
// evaluation is pending at most one process holds it; a process that
// takes a lease of a finished evaluation (the mark gone: pending) gives
// it back at once.
const evalLeasesDir = ".evaluation-leases"

func (s *Store) evalLeasePath(ref quire.EvalRef, ext string) string {
	return filepath.Join(s.opts.Root, evalLeasesDir, ref.PromptID+"."+ref.ID+ext)
}

func (s *Store) evalPending(ref quire.EvalRef) (bool, error) {
	_, err := os.Stat(s.pendingEval(ref.PromptID, ref.ID))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// LeaseEvaluation takes the lease of evaluation ref if no process holds
// it, in this process (another job) or another.
func (s *Store) LeaseEvaluation(ctx context.Context, ref quire.EvalRef, pending bool) (func(), bool, error) {
	if !validID(ref.PromptID) || !validID(ref.ID) {
		return nil, false, quire.Errorf(quire.EINVALID, "invalid evaluation %s.%s", ref.PromptID, ref.ID)
	}
	if err := os.MkdirAll(filepath.Join(s.opts.Root, evalLeasesDir), 0o755); err != nil {
		return nil, false, err
	}
	path := s.evalLeasePath(ref, ".lock")
	unlock, ok := s.locks.files.TryLock(path)
	if !ok {
		return nil, false, nil
	}
	release := func() {
		// Finished: its files go, under the lease (a process that opens
		// the lock file meanwhile finds the mark gone and lets go too).
		if still, err := s.evalPending(ref); err == nil && !still {
			os.Remove(s.evalLeasePath(ref, ".cancel"))
			os.Remove(path)
		}
		unlock()
	}
	if pending {
		still, err := s.evalPending(ref)
		if err != nil || !still {
			release()
			return nil, false, err
		}
	}
	return release, true, nil
}

// RequestEvaluationCancel asks the job of ref, wherever it runs, to
// cancel it.
func (s *Store) RequestEvaluationCancel(ctx context.Context, ref quire.EvalRef) error {
	if !validID(ref.PromptID) || !validID(ref.ID) {
		return quire.Errorf(quire.EINVALID, "invalid evaluation %s.%s", ref.PromptID, ref.ID)
	}
	if err := os.MkdirAll(filepath.Join(s.opts.Root, evalLeasesDir), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(s.evalLeasePath(ref, ".cancel"), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// EvaluationCancelRequested reports whether a cancel of ref was asked.
func (s *Store) EvaluationCancelRequested(ctx context.Context, ref quire.EvalRef) (bool, error) {
	if !validID(ref.PromptID) || !validID(ref.ID) {
		return false, nil
	}
	_, err := os.Stat(s.evalLeasePath(ref, ".cancel"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

var _ quire.EvaluationLeases = (*Store)(nil)
