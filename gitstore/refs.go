package gitstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// storer is go-git's filesystem storage with two fixes quire depends on:
//
//   - Ref updates are atomic for every reader, as C git makes them: the new
//     value goes to <ref>.lock and is renamed over the ref. go-git rewrites
//     the ref file in place, so a concurrent reader can see it empty.
//   - An object missing from the pack index loaded earlier is looked up
//     again after a reindex, because another process (or a push) may have
//     added a pack since, or a repack may have replaced the pack it was in.
//   - Object reads are safe from several goroutines: go-git keeps the pack
//     index in a map it fills lazily and drops on Reindex, unguarded, so
//     every index access goes through idxMu and the index is loaded under
//     the write lock before readers share it.
//
// Callers hold the repository's write lock around every ref change, so the
// compare-and-swap below is safe across goroutines and processes.
type storer struct {
	*filesystem.Storage
	dir   string
	fsync bool // fsync objects and refs before a write returns

	idxMu     sync.RWMutex
	idxLoaded bool // go-git's index is loaded; readers may share it
}

// SetReference writes r unconditionally.
func (s *storer) SetReference(r *plumbing.Reference) error {
	return s.writeRef(r)
}

// CheckAndSetReference writes r if the ref currently equals old. A nil old
// means the ref must not exist yet.
func (s *storer) CheckAndSetReference(r, old *plumbing.Reference) error {
	cur, err := s.Storage.Reference(r.Name())
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		if old != nil && !old.Hash().IsZero() {
			return storage.ErrReferenceHasChanged
		}
	case err != nil:
		return err
	default:
		if old == nil || old.Hash().IsZero() || cur.Hash() != old.Hash() {
			return storage.ErrReferenceHasChanged
		}
	}
	return s.writeRef(r)
}

func (s *storer) writeRef(r *plumbing.Reference) error {
	var content string
	switch r.Type() {
	case plumbing.SymbolicReference:
		content = "ref: " + r.Target().String() + "\n"
	case plumbing.HashReference:
		content = r.Hash().String() + "\n"
	default:
		return fmt.Errorf("write ref %s: invalid reference type", r.Name())
	}
	path := filepath.Join(s.dir, filepath.FromSlash(r.Name().String()))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	lock := path + ".lock"
	f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, os.ErrExist) {
		// A lock left by a crashed writer: we hold the repository lock, so
		// no live writer owns it.
		os.Remove(lock)
		f, err = os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		os.Remove(lock)
		return err
	}
	if s.fsync {
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(lock)
			return err
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(lock)
		return err
	}
	if err := os.Rename(lock, path); err != nil {
		os.Remove(lock)
		return err
	}
	if s.fsync {
		return syncPath(path)
	}
	return nil
}

// rlock takes the read side of idxMu with go-git's pack index loaded.
func (s *storer) rlock() {
	s.idxMu.RLock()
	if s.idxLoaded {
		return
	}
	s.idxMu.RUnlock()
	s.idxMu.Lock()
	if !s.idxLoaded {
		s.loadIndex()
	}
	s.idxMu.Unlock()
	s.idxMu.RLock()
}

// loadIndex makes go-git (re)read the pack indexes. Callers hold idxMu.
func (s *storer) loadIndex() {
	s.Storage.Reindex()
	// Looking up an absent object loads every pack index.
	s.Storage.HasEncodedObject(plumbing.ZeroHash)
	s.idxLoaded = true
}

// Reindex drops and reloads the pack indexes, so packs added or removed by
// a push, a repack or another process are seen.
func (s *storer) Reindex() {
	s.idxMu.Lock()
	s.loadIndex()
	s.idxMu.Unlock()
}

// stale reports whether err may come from an outdated pack index: the
// object was not found, or the pack it was listed in has been removed.
func stale(err error) bool {
	return errors.Is(err, plumbing.ErrObjectNotFound) || errors.Is(err, dotgit.ErrPackfileNotFound) || errors.Is(err, fs.ErrNotExist)
}

// EncodedObject retries once after a reindex when the object is missing.
func (s *storer) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	s.rlock()
	obj, err := s.Storage.EncodedObject(t, h)
	s.idxMu.RUnlock()
	if stale(err) {
		s.Reindex()
		s.rlock()
		obj, err = s.Storage.EncodedObject(t, h)
		s.idxMu.RUnlock()
	}
	return obj, err
}

// DeltaObject is EncodedObject keeping stored deltas (the pack encoder uses it).
func (s *storer) DeltaObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	s.rlock()
	obj, err := s.Storage.DeltaObject(t, h)
	s.idxMu.RUnlock()
	if stale(err) {
		s.Reindex()
		s.rlock()
		obj, err = s.Storage.DeltaObject(t, h)
		s.idxMu.RUnlock()
	}
	return obj, err
}

// HasEncodedObject retries once after a reindex when the object is missing.
func (s *storer) HasEncodedObject(h plumbing.Hash) error {
	err := s.hasObject(h)
	if stale(err) {
		s.Reindex()
		err = s.hasObject(h)
	}
	return err
}

// hasObject looks h up without a reindex.
func (s *storer) hasObject(h plumbing.Hash) error {
	s.rlock()
	defer s.idxMu.RUnlock()
	return s.Storage.HasEncodedObject(h)
}

// EncodedObjectSize retries once after a reindex when the object is missing.
func (s *storer) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	s.rlock()
	n, err := s.Storage.EncodedObjectSize(h)
	s.idxMu.RUnlock()
	if stale(err) {
		s.Reindex()
		s.rlock()
		n, err = s.Storage.EncodedObjectSize(h)
		s.idxMu.RUnlock()
	}
	return n, err
}

// PackfileWriter holds the index write lock from start to close: go-git
// adds the new pack to its index when the writer closes.
func (s *storer) PackfileWriter() (io.WriteCloser, error) {
	s.idxMu.Lock()
	if !s.idxLoaded {
		s.loadIndex()
	}
	w, err := s.Storage.PackfileWriter()
	if err != nil {
		s.idxMu.Unlock()
		return nil, err
	}
	return &unlockOnClose{WriteCloser: w, unlock: s.idxMu.Unlock}, nil
}

type unlockOnClose struct {
	io.WriteCloser
	unlock func()
	once   sync.Once
}

func (u *unlockOnClose) Close() error {
	err := u.WriteCloser.Close()
	u.once.Do(u.unlock)
	return err
}

// SetEncodedObject stores o and, with fsync on, makes it durable.
func (s *storer) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	h, err := s.Storage.SetEncodedObject(o)
	if err != nil || !s.fsync {
		return h, err
	}
	hex := h.String()
	return h, syncPath(filepath.Join(s.dir, "objects", hex[:2], hex[2:]))
}

// syncPath fsyncs a file and the directory holding it.
func syncPath(path string) error {
	for _, p := range []string{path, filepath.Dir(path)} {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
