package filelock

import (
	"path/filepath"
	"testing"

	"github.com/gofrs/flock"
)

// A held lock is held on the file itself, so another descriptor (as
// another process would have) cannot take it, and TryLock in this process
// fails too; after the release both succeed.
func TestLockExcludesOthers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l := New()
	unlock, err := l.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := flock.New(path).TryLock(); ok || err != nil {
		t.Fatalf("another descriptor took a held lock: ok=%v err=%v", ok, err)
	}
	if _, ok := l.TryLock(path); ok {
		t.Fatal("TryLock took a held lock")
	}
	unlock()
	u2, ok := l.TryLock(path)
	if !ok {
		t.Fatal("TryLock failed on a released lock")
	}
	u2()
	if len(l.m) != 0 {
		t.Fatalf("%d entries left after every release", len(l.m))
	}
	other := flock.New(path)
	if ok, err := other.TryLock(); !ok || err != nil {
		t.Fatalf("another descriptor could not take a released lock: ok=%v err=%v", ok, err)
	}
	other.Unlock()
}

// A lock on a path that cannot be created fails with the path named, and
// leaves nothing behind.
func TestLockBadPath(t *testing.T) {
	l := New()
	if _, err := l.Lock(filepath.Join(t.TempDir(), "missing", "x.lock")); err == nil {
		t.Fatal("lock in a missing directory succeeded")
	}
	if len(l.m) != 0 {
		t.Fatalf("%d entries left after a failed lock", len(l.m))
	}
}
