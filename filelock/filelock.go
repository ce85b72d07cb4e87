// Package filelock serializes writers of one file across goroutines and
// across processes that share the data root: first a mutex per path in
// the process, then flock(2) on the file through gofrs/flock. It is the
// lock gitstore takes per repository and eventlog per event log.
//
// Across hosts the same call holds: Linux NFS clients (since 2.6.12) send
// flock(2) to the server as a whole-file byte-range lock (NFSv4 LOCK),
// unless the file system is mounted with local_lock=flock or all, and
// CephFS keeps flock locks in its MDS. Those are POSIX-style locks: one
// per process, dropped when the process closes any descriptor of the
// file. The mutex makes that safe: a process never holds two descriptors
// of one lock file. docs/deployment.md says why this and not leases in
// Redis.
package filelock

import (
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/gofrs/flock"
)

// Locker hands out the locks of files by path. Its zero value is not
// usable; New makes one.
type Locker struct {
	mu sync.Mutex
	m  map[string]*entry
}

type entry struct {
	mu   sync.Mutex
	refs int
}

// New returns an empty Locker.
func New() *Locker { return &Locker{m: map[string]*entry{}} }

// entry returns the in-process lock of path, counted as in use until drop
// is called, so the map holds only paths someone is locking.
func (l *Locker) entry(path string) (e *entry, drop func()) {
	l.mu.Lock()
	e = l.m[path]
	if e == nil {
		e = &entry{}
		l.m[path] = e
	}
	e.refs++
	l.mu.Unlock()
	return e, func() {
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.m, path)
		}
		l.mu.Unlock()
	}
}

// Lock takes the lock of the file at path, waiting for it, and returns
// its release.
func (l *Locker) Lock(path string) (func(), error) {
	e, drop := l.entry(path)
	e.mu.Lock()
	f := flock.New(path)
	var err error
	// flock(2) may be interrupted by the runtime's own signals; gofrs/flock
	// does not retry on EINTR, so we do.
	for {
		if err = f.Lock(); !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		e.mu.Unlock()
		drop()
		return nil, fmt.Errorf("flock %s: %w", path, err)
	}
	return func() {
		f.Unlock()
		e.mu.Unlock()
		drop()
	}, nil
}

// TryLock takes the lock of the file at path only if no one holds it, in
// this process or another; ok reports whether it did.
func (l *Locker) TryLock(path string) (unlock func(), ok bool) {
	e, drop := l.entry(path)
	if !e.mu.TryLock() {
		drop()
		return nil, false
	}
	f := flock.New(path)
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
