package gitstore

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
	"github.com/quire/quire/valid"
)

// File edits of a draft: PutFiles and DeleteFile (and prompt edits, in
// prompts.go) check their files with valid.Tree, then commit through the
// write path (write.go).

// prepareFiles checks files as one write into a version (valid.Tree)
// and turns them into edits, their blobs still to be written.
func (s *Store) prepareFiles(files []quire.FileContent) ([]odb.TreeEdit, error) {
	if err := valid.Tree(valid.Files(files), s.opts.Limits); err != nil {
		return nil, err
	}
	edits := make([]odb.TreeEdit, len(files))
	for i, f := range files {
		edits[i].Path, edits[i].Mode = f.Path, gitMode(f.Mode)
	}
	return edits, nil
}

// gitMode is the tree mode of m; zero stays zero (keep the file's mode).
func gitMode(m quire.FileMode) filemode.FileMode {
	switch m {
	case quire.ModeExecutable:
		return filemode.Executable
	case quire.ModeRegular:
		return filemode.Regular
	}
	return 0
}

// writeBlobs stores the content of files into the edits prepared for them.
func (r *repo) writeBlobs(edits []odb.TreeEdit, files []quire.FileContent) error {
	for i, f := range files {
		h, err := r.WriteBlob(f.Content)
		if err != nil {
			return err
		}
		edits[i].Blob = h
	}
	return nil
}

// PutFiles writes files into draft n as one commit. Writing content equal
// to what is there makes no commit.
func (s *Store) PutFiles(ctx context.Context, by quire.Actor, a *quire.Asset, n int, files []quire.FileContent, ifMatch, message string) (_ *quire.Version, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "PutFiles")(&err)
	edits, err := s.prepareFiles(files)
	if err != nil {
		return nil, err
	}
	if len(edits) == 0 {
		return nil, quire.Errorf(quire.EINVALID, "no files given")
	}
	w, v, err := s.beginDraft(a, n, ifMatch)
	if err != nil {
		return nil, err
	}
	defer w.done()
	if err := w.r.writeBlobs(edits, files); err != nil {
		return nil, err
	}
	return s.commitEdits(&w, by, v, edits, message)
}

// DeleteFile removes one file from draft n as one commit.
func (s *Store) DeleteFile(ctx context.Context, by quire.Actor, a *quire.Asset, n int, path, ifMatch string) (_ *quire.Version, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "DeleteFile")(&err)
	if err := valid.FilePath(path); err != nil {
		return nil, err
	}
	w, v, err := s.beginDraft(a, n, ifMatch)
	if err != nil {
		return nil, err
	}
	defer w.done()
	return s.commitEdits(&w, by, v, []odb.TreeEdit{{Path: path}}, "Delete "+path)
}

// commitEdits applies edits to draft v and commits them (editRef); edits
// that change nothing make no commit. Deletions go first, so a path
// renamed to a look-alike (README.md for Readme.md) is checked against the
// tree without the old one; files not named keep their entries,
// executable bits too.
func (s *Store) commitEdits(w *write, by quire.Actor, v *vstate, edits []odb.TreeEdit, message string) (*quire.Version, error) {
	r := w.r
	var upserts, deletes []odb.TreeEdit
	for _, e := range edits {
		if e.Blob.IsZero() {
			deletes = append(deletes, e)
		} else {
			upserts = append(upserts, e)
		}
	}
	conflict := func() error { return quire.Errorf(quire.ECONFLICT, "draft %d changed concurrently; retry", v.n) }
	var log *versionLog
	c, err := w.editRef(by, DraftRef(v.n), v.commit, conflict, func(old plumbing.Hash) (plumbing.Hash, string, error) {
		base := old
		if len(deletes) > 0 {
			var err error
			if base, err = r.EditTree(old, deletes); err != nil {
				return plumbing.ZeroHash, "", err
			}
		}
		if err := r.checkCollisions(base, upserts); err != nil {
			return plumbing.ZeroHash, "", err
		}
		tree, err := r.EditTree(base, upserts)
		if err != nil || tree == old {
			return plumbing.ZeroHash, "", err
		}
		if err := s.checkEditedStats(r, old, tree, edits); err != nil {
			return plumbing.ZeroHash, "", err
		}
		if message == "" {
			message = editMessage(r, old, edits)
		}
		// The draft is about to move: its author first (authors.go).
		log, err = w.noteAuthor(by, v.n)
		return tree, message, err
	})
	if err != nil {
		return nil, err
	}
	if c != v.commit {
		v.commit = c
		s.moveReviewHead(w, by, v)
	}
	if log == nil {
		if log, _, err = r.readLog(); err != nil {
			return nil, err
		}
	}
	return r.record(w.a, v, log, plumbing.ZeroHash)
}

// checkEditedStats derives the new tree's totals from the old tree's and
// the edits, so a limit check does not walk a large tree on every write.
func (s *Store) checkEditedStats(r *repo, oldTree, newTree plumbing.Hash, edits []odb.TreeEdit) error {
	st, err := s.treeStats(r, oldTree)
	if err != nil {
		return err
	}
	for _, e := range edits {
		old, ok, err := r.Lookup(oldTree, e.Path)
		if err != nil {
			return err
		}
		if ok {
			size, err := r.Size(old.Hash)
			if err != nil {
				return err
			}
			st.files--
			st.bytes -= size
		}
		if !e.Blob.IsZero() {
			size, err := r.Size(e.Blob)
			if err != nil {
				return err
			}
			st.files++
			st.bytes += size
		}
	}
	if err := s.checkVersionLimits(st); err != nil {
		return err
	}
	s.stats.put(newTree, st)
	return nil
}

func editMessage(r *repo, oldTree plumbing.Hash, edits []odb.TreeEdit) string {
	if len(edits) != 1 {
		paths := make([]string, len(edits))
		for i, e := range edits {
			paths[i] = e.Path
		}
		sort.Strings(paths)
		return fmt.Sprintf("Update %d files\n\n%s", len(edits), strings.Join(paths, "\n"))
	}
	e := edits[0]
	if e.Blob.IsZero() {
		return "Delete " + e.Path
	}
	if _, ok, _ := r.Lookup(oldTree, e.Path); ok {
		return "Update " + e.Path
	}
	return "Add " + e.Path
}
