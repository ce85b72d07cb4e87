package eventlog

import (
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/gofrs/flock"
)

// locker serializes writers of one file: first within the process (a
// mutex per path), then across processes sharing the data root (flock(2)
// through gofrs/flock), as gitstore does for repositories.
type locker struct {
	mu sync.Mutex
	m  map[string]*lockEntry
}

type lockEntry struct {
	mu   sync.Mutex
	refs int
}

func newLocker() *locker { return &locker{m: map[string]*lockEntry{}} }

func (l *locker) entry(path string) *lockEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.m[path]
	if e == nil {
		e = &lockEntry{}
		l.m[path] = e
	}
	e.refs++
	return e
}

func (l *locker) drop(path string, e *lockEntry) {
	l.mu.Lock()
	if e.refs--; e.refs == 0 {
		delete(l.m, path)
	}
	l.mu.Unlock()
}

// lock takes the lock at path and returns its release.
func (l *locker) lock(path string) (func(), error) {
	e := l.entry(path)
	e.mu.Lock()
	f := flock.New(path)
	var err error
	for { // flock(2) may be interrupted by the runtime's signals
		if err = f.Lock(); !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		e.mu.Unlock()
		l.drop(path, e)
		return nil, fmt.Errorf("flock %s: %w", path, err)
	}
	return func() {
		f.Unlock()
		e.mu.Unlock()
		l.drop(path, e)
	}, nil
}

// tryLock takes the lock at path only if nobody holds it.
func (l *locker) tryLock(path string) (func(), bool) {
	e := l.entry(path)
	if !e.mu.TryLock() {
		l.drop(path, e)
		return nil, false
	}
	f := flock.New(path)
	ok, err := f.TryLock()
	if err != nil || !ok {
		e.mu.Unlock()
		l.drop(path, e)
		return nil, false
	}
	return func() {
		f.Unlock()
		e.mu.Unlock()
		l.drop(path, e)
	}, true
}
