package gitstore

import (
	"bytes"
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// versionTree returns the root tree of version n.
func (s *Store) versionTree(a *quire.Asset, n int) (*repo, *vstate, plumbing.Hash, error) {
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, nil, plumbing.ZeroHash, err
	}
	v, err := r.state(n)
	if err != nil {
		return nil, nil, plumbing.ZeroHash, err
	}
	c, err := r.commit(v.commit)
	if err != nil {
		return nil, nil, plumbing.ZeroHash, err
	}
	return r, v, c.TreeHash, nil
}

// Files lists the files of version n in path order.
func (s *Store) Files(ctx context.Context, a *quire.Asset, n int) ([]quire.File, error) {
	r, _, root, err := s.versionTree(a, n)
	if err != nil {
		return nil, err
	}
	out := []quire.File{}
	err = r.walkFiles(root, "", func(p string, e object.TreeEntry) error {
		size, err := r.size(e.Hash)
		if err != nil {
			return err
		}
		out = append(out, quire.File{Path: p, Size: size, SHA: e.Hash.String()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// ReadFile returns one file of version n.
func (s *Store) ReadFile(ctx context.Context, a *quire.Asset, n int, path string) ([]byte, quire.File, error) {
	if err := valid.FilePath(path); err != nil {
		return nil, quire.File{}, err
	}
	r, _, root, err := s.versionTree(a, n)
	if err != nil {
		return nil, quire.File{}, err
	}
	e, ok, err := r.lookup(root, path)
	if err != nil {
		return nil, quire.File{}, err
	}
	if !ok {
		return nil, quire.File{}, quire.Errorf(quire.ENOTFOUND, "file %s not found in version %d", path, n)
	}
	b, err := r.readBlob(e.Hash)
	if err != nil {
		return nil, quire.File{}, err
	}
	return b, quire.File{Path: path, Size: int64(len(b)), SHA: e.Hash.String()}, nil
}

// ReadFiles returns every file of version n.
func (s *Store) ReadFiles(ctx context.Context, a *quire.Asset, n int) (map[string][]byte, error) {
	r, _, root, err := s.versionTree(a, n)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	err = r.walkFiles(root, "", func(p string, e object.TreeEntry) error {
		b, err := r.readBlob(e.Hash)
		out[p] = b
		return err
	})
	return out, err
}

// Diff returns the unified diff, file by file, from version from to version to.
func (s *Store) Diff(ctx context.Context, a *quire.Asset, from, to int) ([]quire.FileDiff, error) {
	r, _, fromRoot, err := s.versionTree(a, from)
	if err != nil {
		return nil, err
	}
	_, _, toRoot, err := s.versionTree(a, to)
	if err != nil {
		return nil, err
	}
	ft, err := r.tree(fromRoot)
	if err != nil {
		return nil, err
	}
	tt, err := r.tree(toRoot)
	if err != nil {
		return nil, err
	}
	changes, err := object.DiffTreeWithOptions(ctx, ft, tt, &object.DiffTreeOptions{})
	if err != nil {
		return nil, err
	}
	patch, err := changes.PatchContext(ctx)
	if err != nil {
		return nil, err
	}
	out := []quire.FileDiff{}
	for _, fp := range patch.FilePatches() {
		f, t := fp.Files()
		d := quire.FileDiff{Status: "modified"}
		switch {
		case f == nil:
			d.Status, d.Path = "added", t.Path()
		case t == nil:
			d.Status, d.Path = "deleted", f.Path()
		default:
			d.Path = t.Path()
		}
		var buf bytes.Buffer
		if err := diff.NewUnifiedEncoder(&buf, diff.DefaultContextLines).Encode(onePatch{fp}); err != nil {
			return nil, err
		}
		d.Patch = buf.String()
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// onePatch is a diff.Patch of a single file, so each file's diff can be
// encoded on its own.
type onePatch struct{ fp diff.FilePatch }

func (p onePatch) FilePatches() []diff.FilePatch { return []diff.FilePatch{p.fp} }
func (p onePatch) Message() string               { return "" }

// History lists the commits of every version of an asset, newest first.
// Each commit is credited to the first version whose history reaches it.
func (s *Store) History(ctx context.Context, a *quire.Asset, opts quire.ListOptions) ([]quire.Commit, string, error) {
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, "", err
	}
	log, _, err := r.readLog()
	if err != nil {
		return nil, "", err
	}
	seen := map[plumbing.Hash]bool{}
	var all []quire.Commit
	for n := 1; n < log.Next; n++ {
		v, err := r.state(n)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		for h := v.commit; !h.IsZero() && !seen[h]; {
			seen[h] = true
			c, err := r.commit(h)
			if err != nil {
				return nil, "", err
			}
			all = append(all, quire.Commit{
				ID: h.String(), Author: c.Author.Name, Email: c.Author.Email,
				Message: strings.TrimRight(c.Message, "\n"), Time: c.Author.When.UTC(), Version: n,
			})
			h = plumbing.ZeroHash
			if len(c.ParentHashes) > 0 {
				h = c.ParentHashes[0]
			}
		}
	}
	// Newest first. Commit times have whole seconds, so within one second
	// a later version's commits come first; a version's own commits keep
	// their child-before-parent order (the sort is stable).
	sort.SliceStable(all, func(i, j int) bool {
		if !all[i].Time.Equal(all[j].Time) {
			return all[i].Time.After(all[j].Time)
		}
		return all[i].Version > all[j].Version
	})
	return page(all, opts)
}

// page cuts one page from a list; the cursor is the offset of the next page.
func page[T any](all []T, opts quire.ListOptions) ([]T, string, error) {
	off := 0
	if opts.Cursor != "" {
		n, err := strconv.Atoi(opts.Cursor)
		if err != nil || n < 0 {
			return nil, "", quire.Errorf(quire.EINVALID, "invalid cursor")
		}
		off = n
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = 50
	}
	if off >= len(all) {
		return []T{}, "", nil
	}
	end := min(off+limit, len(all))
	next := ""
	if end < len(all) {
		next = strconv.Itoa(end)
	}
	return all[off:end], next, nil
}
