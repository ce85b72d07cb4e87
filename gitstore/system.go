package gitstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/meta"
)

// The system repository holds the metadata (gitstore/meta). gitstore opens
// it like any repository and lends meta its refs and its lock (systemRefs);
// meta asks back, through metaRepos, for the asset repositories' part of a
// metadata change.

func (s *Store) systemPath() string { return filepath.Join(s.opts.Root, "_system.git") }

func (s *Store) openMeta(sys *repo) *meta.Store {
	return meta.Open(meta.Config{
		Dir:     sys.path,
		DB:      sys.DB,
		Refs:    systemRefs{r: sys, locks: s.locks},
		Repos:   metaRepos{s},
		Now:     s.opts.Now,
		Observe: s.opts.Observe,
		Changed: s.systemChanged,
	})
}

// systemRefs are the system repository's refs as meta.Refs.
type systemRefs struct {
	r     *repo
	locks *locker
}

func (x systemRefs) Ref(name plumbing.ReferenceName) (plumbing.Hash, error) { return x.r.ref(name) }

func (x systemRefs) RecentRef(name plumbing.ReferenceName) (plumbing.Hash, error) {
	return x.r.recentRef(name)
}

func (x systemRefs) CASRef(name plumbing.ReferenceName, old, new plumbing.Hash) error {
	return x.r.casRef(name, old, new)
}

func (x systemRefs) Lock() (func(), error) { return x.locks.lock(x.r.path) }

// metaRepos is the version engine's side of a metadata change, as
// meta.Repos.
type metaRepos struct{ s *Store }

func (x metaRepos) InitAsset(ctx context.Context, a *quire.Asset) error {
	return x.s.InitAsset(ctx, a)
}

func (x metaRepos) RemoveAsset(a *quire.Asset) error { return x.s.removeRepo(x.s.RepoPath(a)) }

func (x metaRepos) Changed(a *quire.Asset) { x.s.changed(a) }

// RemoveProject drops the project's open repositories from the pool, then
// deletes its directory: renamed aside first, so a crash never leaves half
// of it.
func (x metaRepos) RemoveProject(id string) error {
	s := x.s
	dir := filepath.Join(s.opts.Root, id)
	for _, path := range s.open.Keys() {
		if strings.HasPrefix(path, dir+string(filepath.Separator)) {
			s.open.Remove(path)
		}
	}
	trash := filepath.Join(s.opts.Root, ".trash-"+id)
	if err := os.Rename(dir, trash); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.RemoveAll(trash)
}
