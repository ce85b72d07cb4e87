package gitstore

import (
	"errors"
	"io"
	"strings"

	"github.com/quire/quire/gitstore/odb"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// checkCollisions refuses edits that write a path colliding with one of
// the tree at root after folding (valid.PathSet's rule): along each
// written path it compares each component with the entries of the
// directory it goes in, which editTree reads anyway, so an upsert into a
// large version does not walk the whole tree. Deletions are not checked,
// nor collisions the tree already holds.
func (r *repo) checkCollisions(root plumbing.Hash, edits []odb.TreeEdit) error {
	for _, e := range edits {
		if e.Blob.IsZero() {
			continue
		}
		h, dir := root, ""
		for rest := e.Path; ; {
			name, tail, nested := strings.Cut(rest, "/")
			entries, err := r.Entries(h)
			if err != nil {
				return err
			}
			f := valid.Fold(name)
			exact, next := false, plumbing.ZeroHash
			var other *object.TreeEntry
			for i, x := range entries {
				switch {
				case x.Name == name:
					exact = true
					if x.Mode == filemode.Dir {
						next = x.Hash
					}
				case other == nil && f.Matches(x.Name):
					other = &entries[i]
				}
			}
			// An exact match is an update, even where a version stored
			// before the rule already holds a look-alike.
			if !exact && other != nil {
				return valid.PathCollision(e.Path, dir+entryPath(*other))
			}
			if !nested || next.IsZero() {
				break // the rest of the path is new
			}
			h, dir, rest = next, dir+name+"/", tail
		}
	}
	return nil
}

// entryPath is the name of e, ending in "/" for a directory.
func entryPath(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// checkNames applies the rules on the names of one pushed tree, found at
// prefix, that single paths do not show: no two entries may collide after
// folding, and the root of a prompt version holds prompt.txt or
// messages/, not both.
func (pc *pushChecker) checkNames(prefix string, entries []object.TreeEntry) error {
	set := valid.NewPathSet(len(entries))
	hasTemplate, hasMessages := false, false
	for _, e := range entries {
		if err := set.Add(prefix+e.Name, e.Mode == filemode.Dir); err != nil {
			return err
		}
		hasTemplate = hasTemplate || e.Name == quire.PromptTemplateFile && e.Mode != filemode.Dir
		hasMessages = hasMessages || e.Name == quire.PromptMessagesDir && e.Mode == filemode.Dir
	}
	if pc.kind == quire.KindPrompt && prefix == "" {
		return valid.PromptLayout(hasTemplate, hasMessages)
	}
	return nil
}

// entry lists the tree entry e, found at path p, as valid.File checks it:
// its size for a file, and its content where a content rule reads it.
func (pc *pushChecker) entry(p string, e object.TreeEntry) (valid.Entry, error) {
	ent := valid.Entry{Path: p, Mode: valid.Mode(e.Mode)}
	if e.Mode != filemode.Regular && e.Mode != filemode.Executable {
		return ent, nil
	}
	size, ok := pc.sizes[e.Hash]
	if !ok {
		var err error
		size, err = pc.objs.EncodedObjectSize(e.Hash)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return ent, quire.Errorf(quire.EINVALID, "missing necessary objects: blob %s", ShortHash(e.Hash))
		}
		if err != nil {
			return ent, err
		}
		pc.sizes[e.Hash] = size
	}
	ent.Size = size
	if size <= pc.limits.MaxFile && valid.ContentChecked(p) {
		b, err := pc.blob(e.Hash)
		if err != nil {
			return ent, err
		}
		ent.Content = b
	}
	return ent, nil
}

// blob reads a pushed blob.
func (pc *pushChecker) blob(h plumbing.Hash) ([]byte, error) {
	obj, err := pc.objs.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, quire.Errorf(quire.EINVALID, "missing necessary objects: blob %s", ShortHash(h))
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}
