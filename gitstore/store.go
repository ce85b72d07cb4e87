// Package gitstore keeps quire's data in bare git repositories with go-git:
// one repository per skill or prompt, and a system repository for users,
// API keys, projects and asset metadata. It is the version engine (refs,
// versions, files, prompts, payloads) on top of the object database in
// gitstore/odb; the system metadata is gitstore/meta's, which Store embeds
// and lends the system repository's refs and lock (system.go). Besides
// gitproto, which speaks git's wire protocol over it, they are the only
// code that imports go-git. It implements gitproto's seam (Git, GitRepo,
// GitPush in protoseam.go) and must not import gitproto, app, httpapi,
// cache, gin or go-redis.
package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/quire/quire/gitstore/meta"
	"github.com/quire/quire/gitstore/odb"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/quire/quire"
)

// Options configures a Store.
type Options struct {
	// Root is the data root.
	Root string
	// CacheBytes bounds the object cache shared by every repository.
	CacheBytes int64
	// MaxOpenRepos bounds the repositories held open at once.
	MaxOpenRepos int
	// Fsync makes objects and refs durable on disk before a write returns.
	Fsync bool
	// Limits bound what clients may store.
	Limits quire.Limits
	// Now returns the current time; tests may fix it.
	Now func() time.Time
	// Observe, when set, is told about every git operation, for metrics
	// and traces.
	Observe quire.ObserveFunc
	// Changes, when set, carries ref moves to and from processes on other
	// hosts sharing the data root (refgen.go); without it only processes
	// on this host see each other's moves at once, the others within a
	// second.
	Changes ChangeFeed
	// HostCounter is the file of the mapped change counter that the
	// processes of one host share (default: .quire-refgen in the data
	// root). Tests give stores counters of their own to stand for hosts.
	HostCounter string
}

// Validate checks o and fills in defaults.
func (o *Options) Validate() error {
	if o.Root == "" {
		return errors.New("gitstore: Root is required")
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = 64 << 20
	}
	if o.MaxOpenRepos <= 0 {
		o.MaxOpenRepos = 512
	}
	if o.Limits == (quire.Limits{}) {
		o.Limits = quire.DefaultLimits()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Store is the git-backed implementation of quire's stores. The system
// metadata (quire.MetaStore, quire.UsageLog) is gitstore/meta's, embedded.
type Store struct {
	*meta.Store

	opts  Options
	cache cache.Object
	locks *locker
	gen   *changeClock
	stats *statsCache
	trees *odb.TreeCache
	// descriptions remembers the SKILL.md description of skill trees the
	// project repositories list (projectrepo.go), by tree.
	descriptions *lru.Cache[plumbing.Hash, string]
	// evals keeps the evaluations read, by commit (evalmemo.go).
	evals evalMemo

	mu    sync.Mutex
	open  *lru.Cache[string, *repo] // by path, the least recently used out first
	hooks []func(quire.Kind, string)
	// systemHooks are told of every commit to the system repository.
	systemHooks []func()
	// projectHooks are told of every commit to a project repository,
	// by project id.
	projectHooks []func(projectID string)

	// versionRead, when set (by tests), is told of every version whose
	// refs a version list reads.
	versionRead func(n int)
}

// Open opens (creating if needed) the data root.
func Open(opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, err
	}
	opts.Root = root
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("create data root: %w", err)
	}
	sweepLeftovers(root, opts.Now())
	// Without the counter every read goes to the ref files: slower, as
	// correct (a read-only or full data root, a file system without mmap).
	if opts.HostCounter == "" {
		opts.HostCounter = filepath.Join(root, refGenFile)
	}
	host, _ := openRefGen(opts.HostCounter)
	s := &Store{
		opts:  opts,
		gen:   &changeClock{host: host, feed: opts.Changes},
		cache: cache.NewObjectLRU(cache.FileSize(opts.CacheBytes)),
		locks: newLocker(),
		stats: newStatsCache(1 << 14),
		trees: odb.NewTreeCache(1 << 18),
	}
	// An evicted repository holds nothing to release (go-git keeps no
	// descriptors open without KeepDescriptors), so no eviction callback.
	s.open, _ = lru.New[string, *repo](opts.MaxOpenRepos)
	s.descriptions, _ = lru.New[plumbing.Hash, string](4096)
	sys, err := s.initRepo(s.systemPath())
	if err != nil {
		return nil, err
	}
	s.Store = s.openMeta(sys)
	return s, nil
}

// Close releases the data root's ref counter, so that its file system can
// be unmounted; reads after it go to the ref files. Background work the
// store started may still be running.
func (s *Store) Close() error {
	s.gen.close()
	return nil
}

// Root is the absolute data root.
func (s *Store) Root() string { return s.opts.Root }

// Limits are the limits the store enforces.
func (s *Store) Limits() quire.Limits { return s.opts.Limits }

// OnChange registers fn to be called after any change to an asset's
// repository (kind, asset id). Caches use it to invalidate.
func (s *Store) OnChange(fn func(kind quire.Kind, assetID string)) {
	s.mu.Lock()
	s.hooks = append(s.hooks, fn)
	s.mu.Unlock()
}

// onSystemChange registers fn to be called after every commit to the
// system repository (metadata, usage), for its repacking.
func (s *Store) onSystemChange(fn func()) {
	s.mu.Lock()
	s.systemHooks = append(s.systemHooks, fn)
	s.mu.Unlock()
}

// onProjectChange registers fn to be called after every commit to a
// project repository, for its repacking: the pseudo-asset's id is the
// same for every project, so OnChange's hooks cannot tell them apart.
func (s *Store) onProjectChange(fn func(projectID string)) {
	s.mu.Lock()
	s.projectHooks = append(s.projectHooks, fn)
	s.mu.Unlock()
}

func (s *Store) projectChanged(projectID string) {
	s.mu.Lock()
	hooks := s.projectHooks
	s.mu.Unlock()
	for _, fn := range hooks {
		fn(projectID)
	}
}

func (s *Store) systemChanged() {
	s.mu.Lock()
	hooks := s.systemHooks
	s.mu.Unlock()
	for _, fn := range hooks {
		fn()
	}
}

func (s *Store) changed(a *quire.Asset) {
	s.mu.Lock()
	hooks := s.hooks
	s.mu.Unlock()
	for _, fn := range hooks {
		fn(a.Kind, a.ID)
	}
}

// RepoPath is where an asset's bare repository lives.
func (s *Store) RepoPath(a *quire.Asset) string {
	// One concatenation, not filepath.Join: every request that reads a
	// repository builds this path, and Root is already clean (Abs) while
	// the ids are UUIDs and Plural a constant, so there is nothing to clean.
	sep := string(filepath.Separator)
	if a.Kind == quire.KindProject {
		return s.opts.Root + sep + a.ProjectID + sep + projectRepoName
	}
	return s.opts.Root + sep + a.ProjectID + sep + a.Kind.Plural() + sep + a.ID + ".git"
}

// repo is one open bare repository: its object database (odb) and its
// refs.
type repo struct {
	*odb.DB
	path string
	st   *storer
	memo refMemo  // recentRef's
	hist histMemo // history's, by the refs it read (histcache.go)
}

// repo returns the open repository at path, opening it if needed. It does
// not create it: a missing repository is ENOTFOUND.
func (s *Store) repo(path string) (*repo, error) {
	if r, ok := s.open.Get(path); ok {
		return r, nil
	}
	if _, err := os.Stat(filepath.Join(path, "HEAD")); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, quire.Errorf(quire.ENOTFOUND, "repository not found")
		}
		return nil, err
	}
	st := s.newStorer(path)
	r := &repo{DB: odb.NewDB(st.Storer), path: path, st: st}
	s.sweepRepo(r)
	if prev, ok, _ := s.open.PeekOrAdd(path, r); ok {
		return prev, nil
	}
	return r, nil
}

func (s *Store) newStorer(path string) *storer {
	return &storer{Storer: odb.NewStorer(path, s.cache, s.trees, s.opts.Fsync), gen: s.gen}
}

// forget drops an open repository from the pool (after it is removed).
func (s *Store) forget(path string) {
	s.open.Remove(path)
}

// initRepo creates a bare repository at path unless one is there, and
// opens it. It is built in a temporary directory and renamed into place so
// no reader ever sees half a repository.
func (s *Store) initRepo(path string) (*repo, error) {
	if _, err := os.Stat(filepath.Join(path, "HEAD")); err == nil {
		return s.repo(path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create repository parent: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".init-*")
	if err != nil {
		return nil, fmt.Errorf("create repository: %w", err)
	}
	defer os.RemoveAll(tmp)
	_, err = git.PlainInitWithOptions(tmp, &git.PlainInitOptions{
		Bare:        true,
		InitOptions: git.InitOptions{DefaultBranch: plumbing.Main},
	})
	if err != nil {
		return nil, fmt.Errorf("init repository: %w", err)
	}
	// Pushes must not be thin (go-git cannot resolve deltas against our
	// objects) and the repository must pass git fsck --strict.
	if err := os.WriteFile(filepath.Join(tmp, lockFile), nil, 0o644); err != nil {
		return nil, fmt.Errorf("create repository: %w", err)
	}
	if s.opts.Fsync {
		if err := odb.SyncTree(tmp); err != nil {
			return nil, fmt.Errorf("create repository: %w", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		if _, statErr := os.Stat(filepath.Join(path, "HEAD")); statErr == nil {
			return s.repo(path) // another process won the race
		}
		return nil, fmt.Errorf("create repository: %w", err)
	}
	if s.opts.Fsync {
		if err := odb.SyncDirs(s.opts.Root, filepath.Dir(path)); err != nil {
			return nil, fmt.Errorf("create repository: %w", err)
		}
	}
	return s.repo(path)
}

// removeRepo deletes the repository at path: renamed aside first, so a
// crash never leaves half a repository at the real path.
func (s *Store) removeRepo(path string) error {
	s.forget(path)
	trash := filepath.Join(filepath.Dir(path), fmt.Sprintf(".trash-%d-%s", time.Now().UnixNano(), filepath.Base(path)))
	if err := os.Rename(path, trash); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	s.gen.bump() // its refs are gone
	return os.RemoveAll(trash)
}
