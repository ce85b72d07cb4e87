package gitstore

import (
	"bytes"
	"context"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
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
	c, err := r.Commit(v.commit)
	if err != nil {
		return nil, nil, plumbing.ZeroHash, err
	}
	return r, v, c.TreeHash, nil
}

// Files lists the files of version n in path order.
func (s *Store) Files(ctx context.Context, a *quire.Asset, n int) (_ []quire.File, err error) {
	defer s.observe(ctx, quire.GitOpRead, "Files")(&err)
	r, _, root, err := s.versionTree(a, n)
	if err != nil {
		return nil, err
	}
	out := []quire.File{}
	err = r.WalkFiles(root, "", func(p string, e object.TreeEntry) error {
		size, err := r.Size(e.Hash)
		if err != nil {
			return err
		}
		out = append(out, quire.File{Path: p, Size: size, SHA: e.Hash.String(), Mode: quire.FileMode(e.Mode).String()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// ReadFile returns one file of version n.
func (s *Store) ReadFile(ctx context.Context, a *quire.Asset, n int, path string) (_ []byte, _ quire.File, err error) {
	defer s.observe(ctx, quire.GitOpRead, "ReadFile")(&err)
	if err := valid.FilePath(path); err != nil {
		return nil, quire.File{}, err
	}
	r, _, root, err := s.versionTree(a, n)
	if err != nil {
		return nil, quire.File{}, err
	}
	e, ok, err := r.Lookup(root, path)
	if err != nil {
		return nil, quire.File{}, err
	}
	if !ok {
		return nil, quire.File{}, quire.Errorf(quire.ENOTFOUND, "file %s not found in version %d", path, n)
	}
	b, err := r.ReadBlob(e.Hash)
	if err != nil {
		return nil, quire.File{}, err
	}
	return b, quire.File{Path: path, Size: int64(len(b)), SHA: e.Hash.String(), Mode: quire.FileMode(e.Mode).String()}, nil
}

// ReadFiles returns every file of version n.
func (s *Store) ReadFiles(ctx context.Context, a *quire.Asset, n int) (_ map[string][]byte, err error) {
	defer s.observe(ctx, quire.GitOpRead, "ReadFiles")(&err)
	r, _, root, err := s.versionTree(a, n)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	err = r.WalkFiles(root, "", func(p string, e object.TreeEntry) error {
		b, err := r.ReadBlob(e.Hash)
		out[p] = b
		return err
	})
	return out, err
}

// Diff returns the unified diff, file by file, from version from to version to.
func (s *Store) Diff(ctx context.Context, a *quire.Asset, from, to int) (_ []quire.FileDiff, err error) {
	defer s.observe(ctx, quire.GitOpRead, "Diff")(&err)
	r, _, fromRoot, err := s.versionTree(a, from)
	if err != nil {
		return nil, err
	}
	_, _, toRoot, err := s.versionTree(a, to)
	if err != nil {
		return nil, err
	}
	ft, err := r.Tree(fromRoot)
	if err != nil {
		return nil, err
	}
	tt, err := r.Tree(toRoot)
	if err != nil {
		return nil, err
	}
	fps, err := filePatches(ctx, ft, tt)
	if err != nil {
		return nil, err
	}
	out := []quire.FileDiff{}
	for _, fp := range fps {
		d := quire.FileDiff{}
		d.Status, d.Path = patchFile(fp)
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

// Snapshot returns version n whole: its commit, the commit's time and
// every file with its content and mode, in path order -- what a
// deterministic archive is built from.
func (s *Store) Snapshot(ctx context.Context, a *quire.Asset, n int) (_ *quire.Snapshot, err error) {
	defer s.observe(ctx, quire.GitOpRead, "Snapshot")(&err)
	r, v, _, err := s.versionTree(a, n)
	if err != nil {
		return nil, err
	}
	c, err := r.Commit(v.commit)
	if err != nil {
		return nil, err
	}
	snap := &quire.Snapshot{Version: n, State: v.state, Commit: v.commit.String(), Time: c.Committer.When.UTC()}
	err = r.WalkFiles(c.TreeHash, "", func(p string, e object.TreeEntry) error {
		b, err := r.ReadBlob(e.Hash)
		snap.Files = append(snap.Files, quire.SnapshotFile{Path: p, Content: b, Executable: e.Mode == filemode.Executable})
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(snap.Files, func(i, j int) bool { return snap.Files[i].Path < snap.Files[j].Path })
	return snap, nil
}

// filePatches diffs two trees into one patch per changed file: where a
// version diff and a review's file list both start.
func filePatches(ctx context.Context, from, to *object.Tree) ([]diff.FilePatch, error) {
	changes, err := object.DiffTreeWithOptions(ctx, from, to, &object.DiffTreeOptions{})
	if err != nil {
		return nil, err
	}
	patch, err := changes.PatchContext(ctx)
	if err != nil {
		return nil, err
	}
	return patch.FilePatches(), nil
}

// patchFile is a file patch's status (added, deleted or modified) and
// path (the new one, unless deleted).
func patchFile(fp diff.FilePatch) (status, path string) {
	f, t := fp.Files()
	switch {
	case f == nil:
		return "added", t.Path()
	case t == nil:
		return "deleted", f.Path()
	}
	return "modified", t.Path()
}
