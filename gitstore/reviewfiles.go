package gitstore

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
)

// What a review reads of the content it reviews: the files that differ
// from its base to its head, and lines of files at a commit (a line
// comment's anchor, and whether it is outdated).

// lineReader reads lines of files at commits, each file once.
type lineReader struct {
	r     *repo
	files map[string][]string // commit + path -> lines; nil for none
}

// line returns line n (from 1) of path at commit, nil when the file or
// the line does not exist.
func (l *lineReader) line(commit, path string, n int) (*string, error) {
	key := commit + "\x00" + path
	lines, ok := l.files[key]
	if !ok {
		b, found, err := l.r.readAt(commit, path)
		if err != nil {
			return nil, err
		}
		if found {
			lines = splitLines(b)
		}
		l.files[key] = lines
	}
	if n < 1 || n > len(lines) {
		return nil, nil
	}
	return &lines[n-1], nil
}

// splitLines splits b into lines, without their ends; a final line with
// no newline counts, an empty file has none.
func splitLines(b []byte) []string {
	s := string(b)
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// readAt reads path at commit ("" or an unknown commit: not found).
func (r *repo) readAt(commit, path string) ([]byte, bool, error) {
	h, ok := odb.ParseHash(commit)
	if !ok {
		return nil, false, nil
	}
	c, err := r.Commit(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	e, ok, err := r.Lookup(c.TreeHash, path)
	if err != nil || !ok || !e.Mode.IsFile() {
		return nil, false, err
	}
	b, err := r.ReadBlob(e.Hash)
	return b, err == nil, err
}

// ReadAt reads path at commit of a's repository.
func (s *Store) ReadAt(ctx context.Context, a *quire.Asset, commit, path string) ([]byte, bool, error) {
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, false, err
	}
	return r.readAt(commit, path)
}

// ReviewFiles lists the files that differ from base to head.
func (s *Store) ReviewFiles(ctx context.Context, a *quire.Asset, base, head string) (_ []quire.ReviewFile, err error) {
	defer s.observe(ctx, quire.GitOpRead, "ReviewFiles")(&err)
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, err
	}
	tree := func(commit string) (*object.Tree, error) {
		h, ok := odb.ParseHash(commit)
		if !ok {
			return nil, nil
		}
		c, err := r.Commit(h)
		if err != nil {
			return nil, err
		}
		return r.Tree(c.TreeHash)
	}
	ft, err := tree(base)
	if err != nil {
		return nil, err
	}
	tt, err := tree(head)
	if err != nil {
		return nil, err
	}
	fps, err := filePatches(ctx, ft, tt)
	if err != nil {
		return nil, err
	}
	out := []quire.ReviewFile{}
	for _, fp := range fps {
		rf := quire.ReviewFile{}
		rf.Status, rf.Path = patchFile(fp)
		for _, ch := range fp.Chunks() {
			n := countLines(ch.Content())
			switch ch.Type() {
			case diff.Add:
				rf.Additions += n
			case diff.Delete:
				rf.Deletions += n
			}
		}
		out = append(out, rf)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// countLines counts the lines of a diff chunk's content.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := bytes.Count([]byte(s), []byte("\n"))
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
