package gitstore

import (
	"path/filepath"

	"github.com/quire/quire/filelock"
)

// lockFile is the name of the per-repository lock file. Every quire
// process sharing a data root takes it (flock) before changing refs.
const lockFile = "quire.lock"

// locker serializes writers to one repository, within the process and
// across processes and hosts sharing the data root (filelock
// says why flock holds on NFSv4 and CephFS).
type locker struct{ files *filelock.Locker }

func newLocker() *locker { return &locker{files: filelock.New()} }

// lock takes the write lock of the repository at dir and returns its release.
func (l *locker) lock(dir string) (func(), error) {
	return l.files.Lock(filepath.Join(dir, lockFile))
}

// tryLock takes the write lock of the repository at dir only if no one
// holds it, in this process or another; ok reports whether it did.
func (l *locker) tryLock(dir string) (unlock func(), ok bool) {
	return l.files.TryLock(filepath.Join(dir, lockFile))
}
