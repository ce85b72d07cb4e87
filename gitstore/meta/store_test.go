package meta

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
)

var tester = quire.Actor{Name: "Tess Ter", Email: "tess@example.com"}

// testRefs is a system repository's refs for tests: go-git's own ref
// storage, and one lock per directory shared by every Store a test opens
// on it (as gitstore's locker is shared by a process's stores).
type testRefs struct {
	st *odb.Storer
	mu *sync.Mutex
}

var testLocks sync.Map // dir -> *sync.Mutex

func (x testRefs) Ref(name plumbing.ReferenceName) (plumbing.Hash, error) {
	r, err := x.st.Reference(name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return r.Hash(), nil
}

func (x testRefs) RecentRef(name plumbing.ReferenceName) (plumbing.Hash, error) { return x.Ref(name) }

func (x testRefs) CASRef(name plumbing.ReferenceName, old, new plumbing.Hash) error {
	var oldRef *plumbing.Reference
	if !old.IsZero() {
		oldRef = plumbing.NewHashReference(name, old)
	}
	return x.st.CheckAndSetReference(plumbing.NewHashReference(name, new), oldRef)
}

func (x testRefs) Lock() (func(), error) {
	x.mu.Lock()
	return x.mu.Unlock, nil
}

// noRepos stands in for the version engine: asset repositories are not
// this package's business.
type noRepos struct{}

func (noRepos) InitAsset(context.Context, *quire.Asset) error { return nil }
func (noRepos) RemoveAsset(*quire.Asset) error                { return nil }
func (noRepos) RemoveProject(string) error                    { return nil }
func (noRepos) Changed(*quire.Asset)                          {}

// openAt opens the metadata of the system repository at dir, creating it
// if needed, as another process sharing it would.
func openAt(t testing.TB, dir string) *Store {
	t.Helper()
	if _, err := git.PlainInit(dir, true); err != nil && !errors.Is(err, git.ErrRepositoryAlreadyExists) {
		t.Fatal(err)
	}
	st := odb.NewStorer(dir, cache.NewObjectLRUDefault(), odb.NewTreeCache(1<<12), false)
	mu, _ := testLocks.LoadOrStore(dir, &sync.Mutex{})
	return Open(Config{Dir: dir, DB: odb.NewDB(st), Refs: testRefs{st: st, mu: mu.(*sync.Mutex)}, Repos: noRepos{}})
}

func newTestStore(t testing.TB) *Store {
	t.Helper()
	return openAt(t, t.TempDir())
}
