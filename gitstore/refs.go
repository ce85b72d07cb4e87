package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// storer is go-git's filesystem storage with two fixes quire depends on:
//
//   - Ref updates are atomic for every reader, as C git makes them: the new
//     value goes to <ref>.lock and is renamed over the ref. go-git rewrites
//     the ref file in place, so a concurrent reader can see it empty.
//   - An object missing from the pack index loaded earlier is looked up
//     again after a reindex, because another process (or a push) may have
//     added a pack since.
//
// Callers hold the repository's write lock around every ref change, so the
// compare-and-swap below is safe across goroutines and processes.
type storer struct {
	*filesystem.Storage
	dir   string
	fsync bool // fsync objects and refs before a write returns
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

// EncodedObject retries once after a reindex when the object is missing.
func (s *storer) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := s.Storage.EncodedObject(t, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		s.Storage.Reindex()
		obj, err = s.Storage.EncodedObject(t, h)
	}
	return obj, err
}

// HasEncodedObject retries once after a reindex when the object is missing.
func (s *storer) HasEncodedObject(h plumbing.Hash) error {
	err := s.Storage.HasEncodedObject(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		s.Storage.Reindex()
		err = s.Storage.HasEncodedObject(h)
	}
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
