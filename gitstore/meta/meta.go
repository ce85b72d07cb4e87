// Package meta keeps quire's system metadata in the system repository
// (_system.git): users, API keys, projects and asset records on main
// (index.go, accounts.go, assets.go, with the last-admin and last-owner
// rules in rules.go), usage totals on refs/quire/usage (usage.go), and the
// project activity the system commits record (activity.go). It implements
// quire.MetaStore and quire.UsageLog.
//
// It sits under the version engine: gitstore opens the system repository
// and hands it over as an odb.DB plus the ref operations of Refs (atomic
// writes, the data root's ref counter, the repository's write lock), and
// does the asset repositories' part of a metadata change through Repos.
// meta imports gitstore/odb and the root package; it must not import
// gitstore, gitproto, app, httpapi, cache, internal/server, gin or
// go-redis.
package meta

import (
	"context"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/uuid"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
)

// mainRef holds the metadata records.
const mainRef = plumbing.ReferenceName("refs/heads/main")

// Refs are the system repository's ref operations, as the version engine
// performs them for every repository.
type Refs interface {
	// Ref reads a ref (ZeroHash when it does not exist).
	Ref(name plumbing.ReferenceName) (plumbing.Hash, error)
	// RecentRef is Ref for hot reads: it may answer from a memo while no
	// ref of the data root has moved.
	RecentRef(name plumbing.ReferenceName) (plumbing.Hash, error)
	// CASRef moves name from old (ZeroHash: must not exist) to new; a
	// ref that moved meanwhile is storage.ErrReferenceHasChanged. Callers
	// hold the lock.
	CASRef(name plumbing.ReferenceName, old, new plumbing.Hash) error
	// Lock takes the repository's write lock (in the process and across
	// processes) and returns its release.
	Lock() (unlock func(), err error)
}

// Repos is what the version engine does for a metadata change to an
// asset's or a project's repositories.
type Repos interface {
	// InitAsset creates the repository of a new asset.
	InitAsset(ctx context.Context, a *quire.Asset) error
	// RemoveAsset deletes an asset's repository.
	RemoveAsset(a *quire.Asset) error
	// RemoveProject deletes the repositories of project id.
	RemoveProject(id string) error
	// Changed is told of an asset whose record changed (caches, repacker).
	Changed(a *quire.Asset)
}

// Config is what Open needs.
type Config struct {
	// Dir is the system repository; DB its objects and Refs its refs.
	Dir  string
	DB   *odb.DB
	Refs Refs
	// Repos does the asset repositories' part of a change.
	Repos Repos
	// Now returns the current time.
	Now func() time.Time
	// Observe, when set, is told about every operation.
	Observe quire.ObserveFunc
	// Changed, when set, is told of every commit to the system repository.
	Changed func()
}

// Store is the system metadata of one data root.
type Store struct {
	cfg      Config
	idx      *index
	activity activityIndex
}

// sysRepo is the system repository: objects, refs, and where it is.
type sysRepo struct {
	*odb.DB
	Refs
	dir string
}

// Open returns the metadata kept in the system repository of cfg. The index
// is read on first use.
func Open(cfg Config) *Store {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Store{cfg: cfg}
	s.idx = newIndex(s, &sysRepo{DB: cfg.DB, Refs: cfg.Refs, dir: cfg.Dir})
	return s
}

func (s *Store) now() time.Time { return s.cfg.Now() }

func (s *Store) systemChanged() {
	if s.cfg.Changed != nil {
		s.cfg.Changed()
	}
}

// observe reports one operation to Config.Observe. Use it with a named
// error result.
func (s *Store) observe(ctx context.Context, op, name string) func(*error) {
	_, done := s.cfg.Observe.Observe(ctx, op, name)
	return func(err *error) { done(*err) }
}

func newID() string { return uuid.NewString() }

// Compile-time checks that Store implements the root interfaces.
var (
	_ quire.MetaStore = (*Store)(nil)
	_ quire.UsageLog  = (*Store)(nil)
)
