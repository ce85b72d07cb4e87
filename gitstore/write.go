package gitstore

import (
	"errors"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage"
	"github.com/quire/quire"
)

// write is one change to an asset's repository, the single write path of
// the version engine: begin takes the repository's lock; refs move by
// editRef (edit a tree, write its commit, compare-and-swap the ref) or
// cas; done releases the lock and only then, when a ref moved, runs the
// change hooks (caches, the repacker), so no hook runs under the lock.
//
// Every write is durable before its ref moves (writeObject, casRef), and
// a ref moves only if it is still where the write found it, so a crash or
// a concurrent writer in another process leaves the repository at one of
// the two states.
type write struct {
	s      *Store
	r      *repo
	a      *quire.Asset
	unlock func()
	// moved is set once a version ref moved; hooks says whether that
	// concerns the hooks (version content), which payloads do not.
	moved, hooks bool
}

// begin opens a's repository and takes its write lock. A write is a
// value, so the upsert path allocates none.
func (s *Store) begin(a *quire.Asset) (write, error) {
	r, err := s.assetRepo(a)
	if err != nil {
		return write{}, err
	}
	return s.beginRepo(r, a)
}

// beginRepo takes the write lock of a's repository r, already open.
func (s *Store) beginRepo(r *repo, a *quire.Asset) (write, error) {
	unlock, err := s.locks.lock(r.path)
	if err != nil {
		return write{}, err
	}
	return write{s: s, r: r, a: a, unlock: unlock, hooks: true}, nil
}

// beginVersion begins a write of a's repository and reads the state of
// its version n. On an error nothing is held.
func (s *Store) beginVersion(a *quire.Asset, n int) (write, *vstate, error) {
	w, err := s.begin(a)
	if err != nil {
		return write{}, nil, err
	}
	v, err := w.r.state(n)
	if err != nil {
		w.done()
		return write{}, nil, err
	}
	return w, v, nil
}

// beginDraft begins a write of draft n of a, which must be at commit
// ifMatch when that is given. On an error nothing is held.
func (s *Store) beginDraft(a *quire.Asset, n int, ifMatch string) (write, *vstate, error) {
	w, err := s.begin(a)
	if err != nil {
		return write{}, nil, err
	}
	v, err := w.r.draft(n)
	if err == nil && ifMatch != "" && ifMatch != v.commit.String() {
		err = quire.Errorf(quire.EPRECONDITION, "version %d is at %s, not %s", n, v.commit, ifMatch)
	}
	if err != nil {
		w.done()
		return write{}, nil, err
	}
	return w, v, nil
}

// beginLog begins a write of a's repository and reads its version log
// and the log's tip. On an error nothing is held.
func (s *Store) beginLog(a *quire.Asset) (write, *versionLog, plumbing.Hash, error) {
	w, err := s.begin(a)
	if err != nil {
		return write{}, nil, plumbing.ZeroHash, err
	}
	log, tip, err := w.r.readLog()
	if err != nil {
		w.done()
		return write{}, nil, plumbing.ZeroHash, err
	}
	return w, log, tip, nil
}

// done releases the lock, then runs the change hooks if a ref moved.
func (w *write) done() {
	w.unlock()
	if w.moved && w.hooks {
		w.s.changed(w.a)
	}
}

// cas moves ref from old (ZeroHash: it must not exist) to new.
func (w *write) cas(ref plumbing.ReferenceName, old, new plumbing.Hash) error {
	if err := w.r.casRef(ref, old, new); err != nil {
		return err
	}
	w.moved = true
	return nil
}

// remove deletes ref.
func (w *write) remove(ref plumbing.ReferenceName) error {
	if err := w.r.st.RemoveReference(ref); err != nil {
		return err
	}
	w.moved = true
	return nil
}

// treeEditor returns the tree a write makes of tree, the tree of the
// ref's tip (ZeroHash for none), and its commit message; a ZeroHash tree
// means there is nothing to commit.
type treeEditor func(tree plumbing.Hash) (newTree plumbing.Hash, msg string, err error)

// editRef is the write sequence: edit the tree at tip (ref's commit, or
// ZeroHash for a new ref), write the commit, move ref from tip to it. A
// ref moved meanwhile is the error conflict returns (made only then). It
// returns the new tip, tip itself when edit has nothing to commit.
func (w *write) editRef(by quire.Actor, ref plumbing.ReferenceName, tip plumbing.Hash, conflict func() error, edit treeEditor) (plumbing.Hash, error) {
	var tree plumbing.Hash
	if !tip.IsZero() {
		c, err := w.r.Commit(tip)
		if err != nil {
			return tip, err
		}
		tree = c.TreeHash
	}
	newTree, msg, err := edit(tree)
	if err != nil || newTree.IsZero() {
		return tip, err
	}
	c, err := w.r.WriteCommit(by, w.s.opts.Now(), newTree, tip, strings.TrimRight(msg, "\n")+"\n")
	if err != nil {
		return tip, err
	}
	if err := w.cas(ref, tip, c); errors.Is(err, storage.ErrReferenceHasChanged) {
		return tip, conflict()
	} else if err != nil {
		return tip, err
	}
	return c, nil
}
