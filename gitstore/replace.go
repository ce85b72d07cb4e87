package gitstore

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
)

// ReplaceFiles makes draft n hold exactly files, as one commit through
// the write path: files that differ are written, paths the draft has and
// files lacks are deleted, identical files are left out of the commit (and
// its message). Nothing to change makes no commit. n 0 opens a new
// draft from the live version whose one commit holds files. It
// implements quire.TreeStore.
func (s *Store) ReplaceFiles(ctx context.Context, by quire.Actor, a *quire.Asset, n int, files []quire.FileContent, ifMatch, message string) (_ *quire.Version, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "ReplaceFiles")(&err)
	edits, err := s.prepareFiles(files)
	if err != nil {
		return nil, err
	}
	if len(edits) == 0 {
		return nil, quire.Errorf(quire.EINVALID, "no files given")
	}
	if n == 0 {
		return s.pushDraft(by, a, edits, files, message)
	}
	w, v, err := s.beginDraft(a, n, ifMatch)
	if err != nil {
		return nil, err
	}
	defer w.done()
	r := w.r
	if err := r.writeBlobs(edits, files); err != nil {
		return nil, err
	}
	c, err := r.Commit(v.commit)
	if err != nil {
		return nil, err
	}
	keep := make(map[string]bool, len(edits))
	upserts, deletes := edits[:0], []odb.TreeEdit(nil)
	for _, e := range edits {
		keep[e.Path] = true
		if old, ok, err := r.Lookup(c.TreeHash, e.Path); err != nil {
			return nil, err
		} else if !ok || old.Hash != e.Blob || e.Mode != 0 && old.Mode != e.Mode {
			upserts = append(upserts, e)
		}
	}
	err = r.WalkFiles(c.TreeHash, "", func(p string, _ object.TreeEntry) error {
		if !keep[p] {
			deletes = append(deletes, odb.TreeEdit{Path: p})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.commitEdits(&w, by, v, append(upserts, deletes...), message)
}

// pushDraft opens the next draft over the live version with one commit
// whose tree is files, whole.
func (s *Store) pushDraft(by quire.Actor, a *quire.Asset, edits []odb.TreeEdit, files []quire.FileContent, message string) (*quire.Version, error) {
	w, log, logTip, err := s.beginLog(a)
	if err != nil {
		return nil, err
	}
	defer w.done()
	r := w.r
	parent, err := r.ref(mainRef)
	if err != nil {
		return nil, err
	}
	tree, err := s.draftTree(r, plumbing.ZeroHash, edits, files)
	if err != nil {
		return nil, err
	}
	return s.openDraft(&w, by, a, log, logTip, parent, s.versionAt(r, parent), tree, message)
}
