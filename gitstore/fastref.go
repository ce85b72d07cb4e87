package gitstore

import (
	"encoding/hex"
	"path/filepath"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
)

// looseRef reads a loose ref holding a hash with three system calls and
// no allocation beyond the path. go-git's own read follows the path
// through billy's chroot, an lstat per component, and the metadata index
// checks the system repository's ref before every read, so this is most
// of a cached render's cost. ok is false for anything but a loose hash
// ref (missing, packed, symbolic, unreadable): the caller then asks go-git.
// Ref files are replaced by rename, so a read never sees half a file.
func (r *repo) looseRef(name plumbing.ReferenceName) (h plumbing.Hash, ok bool) {
	return looseRefAt(r.path, name)
}

// looseRefAt is looseRef of the repository at path, which need not be
// open.
func looseRefAt(path string, name plumbing.ReferenceName) (h plumbing.Hash, ok bool) {
	fd, err := syscall.Open(filepath.Join(path, string(name)), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return plumbing.ZeroHash, false
	}
	var buf [64]byte
	n, err := syscall.Read(fd, buf[:])
	syscall.Close(fd)
	if err != nil || n < 40 || n > 41 || n == 41 && buf[40] != '\n' {
		return plumbing.ZeroHash, false
	}
	if _, err := hex.Decode(h[:], buf[:40]); err != nil {
		return plumbing.ZeroHash, false
	}
	return h, true
}
