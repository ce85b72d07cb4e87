package gitstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/gofrs/flock"
)

// lockFile is the name of the per-repository lock file. Every quire
// process sharing a data root takes it (flock) before changing refs.
const lockFile = "quire.lock"

// locker serializes writers to one repository: first within the process
// (a mutex per path, so goroutines do not pile onto flock), then across
// processes (flock(2) on the repository's lock file, through gofrs/flock).
//
// Across hosts the same call holds: Linux NFS clients (since 2.6.12) send
// flock(2) to the server as a whole-file byte-range lock (NFSv4 LOCK),
// unless the file system is mounted with local_lock=flock or all, and
// CephFS keeps flock locks in its MDS. Those are POSIX-style locks: one
// per process, dropped when the process closes any descriptor of the
// file. The mutex makes that safe: a process never holds two descriptors
// of one lock file. docs/deployment.md says why this and not leases in
// Redis.
type locker struct {
	mu sync.Mutex
	m  map[string]*lockEntry
}

type lockEntry struct {
	mu   sync.Mutex
	refs int
}

func newLocker() *locker { return &locker{m: map[string]*lockEntry{}} }

// entry returns the in-process lock of the repository at dir, counted as
// in use until drop is called.
func (l *locker) entry(dir string) (e *lockEntry, drop func()) {
	l.mu.Lock()
	e = l.m[dir]
	if e == nil {
		e = &lockEntry{}
		l.m[dir] = e
	}
	e.refs++
	l.mu.Unlock()
	return e, func() {
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.m, dir)
		}
		l.mu.Unlock()
	}
}

// lock takes the write lock of the repository at dir and returns its release.
func (l *locker) lock(dir string) (func(), error) {
	e, drop := l.entry(dir)
	e.mu.Lock()
	release := func() {
		e.mu.Unlock()
		drop()
	}
	f := flock.New(filepath.Join(dir, lockFile))
	var err error
	// flock(2) may be interrupted by the runtime's own signals; gofrs/flock
	// does not retry on EINTR, so we do.
	for {
		if err = f.Lock(); !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		release()
		return nil, fmt.Errorf("flock: %w", err)
	}
	return func() {
		f.Unlock()
		release()
	}, nil
}

// tryLock takes the write lock of the repository at dir only if no one
// holds it, in this process or another; ok reports whether it did.
func (l *locker) tryLock(dir string) (unlock func(), ok bool) {
	e, drop := l.entry(dir)
	if !e.mu.TryLock() {
		drop()
		return nil, false
	}
	f := flock.New(filepath.Join(dir, lockFile))
	if locked, err := f.TryLock(); !locked || err != nil {
		e.mu.Unlock()
		drop()
		return nil, false
	}
	return func() {
		f.Unlock()
		e.mu.Unlock()
		drop()
	}, true
}
