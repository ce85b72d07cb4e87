package gitstore

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/quire/quire/gitstore/odb"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/quire/quire"
)

// Repacking. Every push adds a pack and every API write adds loose
// objects; both slow reads down and leave clones without deltas to copy.
// After a change, a repository holding more than RepackPacks packs or
// about RepackLoose loose objects is repacked in the background
// (odb.Repack: every object into one new pack, the old packs and loose
// objects removed under the repository's write lock).

type repacker struct {
	g        *Git
	delay    time.Duration
	mu       sync.Mutex
	pending  map[string]quire.Kind // asset id -> kind
	system   bool                  // the system repository changed
	projects map[string]bool       // project ids whose repository changed
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
}

func newRepacker(g *Git) *repacker {
	rp := &repacker{
		g: g, delay: g.opts.RepackDelay,
		pending: map[string]quire.Kind{}, projects: map[string]bool{},
		kick: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go rp.run()
	return rp
}

// touchAsset notes that an asset's repository changed.
func (rp *repacker) touchAsset(a *quire.Asset) {
	rp.mu.Lock()
	rp.pending[a.ID] = a.Kind
	rp.mu.Unlock()
	select {
	case rp.kick <- struct{}{}:
	default:
	}
}

// touchProject notes that a project's repository changed: each change
// of its view adds a pack.
func (rp *repacker) touchProject(projectID string) {
	rp.mu.Lock()
	rp.projects[projectID] = true
	rp.mu.Unlock()
	select {
	case rp.kick <- struct{}{}:
	default:
	}
}

// touchSystem notes that the system repository changed: metadata and
// usage commits add loose objects to it like any write.
func (rp *repacker) touchSystem() {
	rp.mu.Lock()
	rp.system = true
	rp.mu.Unlock()
	select {
	case rp.kick <- struct{}{}:
	default:
	}
}

func (rp *repacker) close() {
	select {
	case <-rp.stop:
	default:
		close(rp.stop)
	}
	<-rp.done
}

func (rp *repacker) run() {
	defer close(rp.done)
	for {
		select {
		case <-rp.stop:
			return
		case <-rp.kick:
		}
		// Let a burst of writes settle before looking.
		select {
		case <-rp.stop:
			return
		case <-time.After(rp.delay):
		}
		rp.mu.Lock()
		pending, system, projects := rp.pending, rp.system, rp.projects
		rp.pending, rp.system, rp.projects = map[string]quire.Kind{}, false, map[string]bool{}
		rp.mu.Unlock()
		for id := range projects {
			if _, err := rp.g.maybeRepack(rp.g.s.RepoPath(quire.ProjectRepo(id))); err != nil {
				rp.g.opts.OnError("repack", err)
			}
		}
		if system {
			if _, err := rp.g.maybeRepack(rp.g.s.systemPath()); err != nil {
				rp.g.opts.OnError("repack", err)
			}
		}
		for id, kind := range pending {
			select {
			case <-rp.stop:
				return
			default:
			}
			a, err := rp.g.s.Asset(context.Background(), kind, id)
			if err != nil {
				continue // deleted meanwhile
			}
			if _, err := rp.g.maybeRepack(rp.g.s.RepoPath(a)); err != nil {
				rp.g.opts.OnError("repack", err)
			}
		}
	}
}

// maybeRepack repacks the repository at dir when it crossed a threshold:
// more than RepackPacks packs, or loose objects numbering RepackLoose or
// an eighth of those already packed, whichever is more. A repack rewrites
// every object, so the second keeps a large repository (the system one,
// at scale) from being rewritten whole every few writes.
// It reports whether it repacked.
func (g *Git) maybeRepack(dir string) (bool, error) {
	packs, packed, loose, err := odb.ObjectCounts(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	if packs <= g.opts.RepackPacks && loose < max(g.opts.RepackLoose, packed/8) {
		return false, nil
	}
	return true, g.Repack(dir)
}

// Repack folds every loose object and pack of the repository at dir into
// one pack (odb.Repack). It returns at once when another process is
// repacking it.
func (g *Git) Repack(dir string) error {
	r, err := g.s.repo(dir)
	if err != nil {
		return err
	}
	return odb.Repack(r.DB, odb.RepackOptions{
		Cache:      g.idx,
		Zlib:       g.zlib,
		DeltaBytes: g.opts.RepackDeltaBytes,
		// The system repository is streamed whatever its size: tens of
		// thousands of small records, which delta search would hold in
		// memory all at once (270 MiB of heap for 62,000 at scale, against
		// 34 MiB).
		// A project repository is streamed too: its objects are copies
		// of its skills' (stored there with their deltas), and it is
		// repacked every few publishes, each adding a pack.
		Stream: dir == g.s.systemPath() || filepath.Base(dir) == projectRepoName,
		Install: func(tmp, name string, idx *idxfile.MemoryIndex, objects map[plumbing.Hash]bool) error {
			q := &quarantine{dir: tmp, name: name, idx: idx, objects: objects}
			return q.install(dir, g.s.opts.Fsync)
		},
		Lock: func() (func(), error) { return g.s.locks.lock(dir) },
	})
}

var _ io.Closer = (*Git)(nil)
