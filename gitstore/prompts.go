package gitstore

import (
	"context"

	"github.com/quire/quire/gitstore/odb"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
)

// Prompt versions are ordinary versions (CreateVersion, PublishVersion, …
// serve them); this file only maps their files to quire.PromptContent.

// LiveCommit returns the commit main points at, or "" before any publish.
func (s *Store) LiveCommit(ctx context.Context, a *quire.Asset) (string, error) {
	r, err := s.assetRepo(a)
	if err != nil {
		return "", err
	}
	return r.recentRefHex(mainRef)
}

// LivePrompt returns the live version of a prompt and its content.
func (s *Store) LivePrompt(ctx context.Context, a *quire.Asset) (*quire.PromptVersion, error) {
	v, err := s.LiveVersion(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.promptVersion(ctx, a, v)
}

// promptVersion is version v of prompt a with its content.
func (s *Store) promptVersion(ctx context.Context, a *quire.Asset, v *quire.Version) (*quire.PromptVersion, error) {
	c, err := s.PromptContent(ctx, a, v.Commit)
	if err != nil {
		return nil, err
	}
	return &quire.PromptVersion{Version: v, Content: c}, nil
}

// PromptContent reads the prompt files of the version at commit.
func (s *Store) PromptContent(ctx context.Context, a *quire.Asset, commit string) (*quire.PromptContent, error) {
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, err
	}
	c, err := r.Commit(plumbing.NewHash(commit))
	if err != nil {
		return nil, err
	}
	files, err := r.promptFiles(c.TreeHash)
	if err != nil {
		return nil, err
	}
	return quire.ParsePromptFiles(files)
}

// promptFiles reads the files of the prompt layout under the tree at root.
func (r *repo) promptFiles(root plumbing.Hash) (map[string][]byte, error) {
	t, err := r.Tree(root)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range t.Entries {
		switch {
		case e.Mode == filemode.Dir && e.Name == quire.PromptMessagesDir:
			err = r.WalkFiles(e.Hash, e.Name+"/", func(p string, e object.TreeEntry) error {
				b, err := r.ReadBlob(e.Hash)
				out[p] = b
				return err
			})
		case e.Mode != filemode.Dir && quire.IsPromptFile(e.Name):
			out[e.Name], err = r.ReadBlob(e.Hash)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// WritePrompt replaces the prompt files of draft n with c in one commit:
// files of the layout that c no longer has are deleted in the same commit.
func (s *Store) WritePrompt(ctx context.Context, by quire.Actor, a *quire.Asset, n int, c *quire.PromptContent, ifMatch string) (*quire.Version, error) {
	return s.EditPrompt(ctx, by, a, n, func(*quire.PromptContent) *quire.PromptContent { return c }, ifMatch)
}

// EditPrompt writes edit(current content) to draft n, reading the
// current content under the repository lock: an edit that sets some
// fields keeps the others as the last write left them, however many
// edits of the draft run at once.
func (s *Store) EditPrompt(ctx context.Context, by quire.Actor, a *quire.Asset, n int, edit func(*quire.PromptContent) *quire.PromptContent, ifMatch string) (*quire.Version, error) {
	w, v, err := s.beginDraft(a, n, ifMatch)
	if err != nil {
		return nil, err
	}
	defer w.done()
	r := w.r
	parent, err := r.Commit(v.commit)
	if err != nil {
		return nil, err
	}
	old, err := r.promptFiles(parent.TreeHash)
	if err != nil {
		return nil, err
	}
	cur, err := quire.ParsePromptFiles(old)
	if quire.ErrorCode(err) == quire.EUNPROCESSABLE {
		cur, err = &quire.PromptContent{}, nil // a broken layout is replaced whole
	}
	if err != nil {
		return nil, err
	}
	files, err := quire.PromptFiles(edit(cur))
	if err != nil {
		return nil, err
	}
	edits, err := s.prepareFiles(files)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, f := range files {
		keep[f.Path] = true
	}
	if err := r.writeBlobs(edits, files); err != nil {
		return nil, err
	}
	for p := range old {
		if !keep[p] {
			edits = append(edits, odb.TreeEdit{Path: p})
		}
	}
	return s.commitEdits(&w, by, v, edits, "")
}

var _ quire.PromptStore = (*Store)(nil)
