package gitstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// storer is go-git's filesystem storage with the fixes quire depends on:
//
//   - Ref updates are atomic for every reader: the new value goes to a
//     temporary file in the repository's top directory and is renamed over
//     the ref. go-git rewrites the ref file in place, so a concurrent reader
//     can see it empty. The temporary file is kept out of refs/ (C git
//     uses <ref>.lock there) because go-git's ref listing reads every file
//     under refs/: it fails on an empty <ref>.lock and lists a full one as
//     a ref, during a write or forever after a crash.
//   - Objects are written by quire (temporary file, fsync when asked,
//     rename), so a failed write leaves nothing behind and an object file
//     under its name is whole.
//   - With fsync on, objects, refs and every directory entry leading to
//     them reach the disk before a write returns, removals too.
//   - An object missing from the pack index loaded earlier is looked up
//     again after a reindex, because another process (or a push) may have
//     added a pack since.
//   - Reading an object's size closes the object file (go-git's does not).
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
		return fmt.Errorf("write ref %s: %w", r.Name(), err)
	}
	f, err := os.CreateTemp(s.dir, refTempPrefix+"*")
	if err != nil {
		return fmt.Errorf("write ref %s: %w", r.Name(), err)
	}
	tmp := f.Name()
	err = writeSyncClose(f, []byte(content), s.fsync)
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write ref %s: %w", r.Name(), err)
	}
	if s.fsync {
		if err := syncDirs(s.dir, filepath.Dir(path)); err != nil {
			return fmt.Errorf("write ref %s: %w", r.Name(), err)
		}
	}
	return nil
}

// refTempPrefix names the temporary files refs are staged in.
const refTempPrefix = "quire-ref-"

// writeSyncClose writes b to f, fsyncs it when asked, and closes it.
func writeSyncClose(f *os.File, b []byte, fsync bool) error {
	_, err := f.Write(b)
	if err == nil && fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// RemoveReference deletes a ref and, with fsync on, makes the removal durable.
func (s *storer) RemoveReference(name plumbing.ReferenceName) error {
	if err := s.Storage.RemoveReference(name); err != nil {
		return fmt.Errorf("remove ref %s: %w", name, err)
	}
	if s.fsync {
		dir := filepath.Dir(filepath.Join(s.dir, filepath.FromSlash(name.String())))
		if err := syncDirs(s.dir, dir); err != nil {
			return fmt.Errorf("remove ref %s: %w", name, err)
		}
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

// EncodedObjectSize reads the size of a loose object itself and closes
// the file: go-git's version leaves it open until the garbage collector
// finalizes it, so listing a large version could exhaust the process's
// file descriptors.
func (s *storer) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	hex := h.String()
	f, err := os.Open(filepath.Join(s.dir, "objects", hex[:2], hex[2:]))
	if errors.Is(err, os.ErrNotExist) {
		size, err := s.Storage.EncodedObjectSize(h) // packed
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			s.Storage.Reindex()
			size, err = s.Storage.EncodedObjectSize(h)
		}
		return size, err
	}
	if err != nil {
		return 0, fmt.Errorf("read object: %w", err)
	}
	defer f.Close()
	r, err := objfile.NewReader(f)
	if err != nil {
		return 0, fmt.Errorf("read object %s: %w", hex, err)
	}
	defer r.Close()
	_, size, err := r.Header()
	if err != nil {
		return 0, fmt.Errorf("read object %s: %w", hex, err)
	}
	return size, nil
}

// SetEncodedObject stores o as a loose object: written to a temporary
// file in the repository's top directory, fsynced when asked, and renamed
// into objects/, so an object file under its name is always whole. go-git's
// own writer renames before the data could be synced, and on a failed
// write (a full disk) leaves its temporary file behind, open.
func (s *storer) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	if o.Type() == plumbing.OFSDeltaObject || o.Type() == plumbing.REFDeltaObject {
		return plumbing.ZeroHash, plumbing.ErrInvalidType
	}
	h := o.Hash()
	hex := h.String()
	path := filepath.Join(s.dir, "objects", hex[:2], hex[2:])
	if _, err := os.Stat(path); err == nil {
		return h, s.syncExisting(h)
	}
	if err := s.writeLoose(o, path); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write object %s: %w", hex, err)
	}
	return h, nil
}

// objTempPrefix names the temporary files objects are written to.
const objTempPrefix = "quire-obj-"

func (s *storer) writeLoose(o plumbing.EncodedObject, path string) (err error) {
	f, err := os.CreateTemp(s.dir, objTempPrefix+"*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	rd, err := o.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	w := objfile.NewWriter(f)
	if err := w.WriteHeader(o.Type(), o.Size()); err != nil {
		w.Close()
		return err
	}
	if _, err := io.Copy(w, rd); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if got := w.Hash(); got != o.Hash() {
		return fmt.Errorf("content hashes to %s", got)
	}
	if s.fsync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o444); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	if s.fsync {
		return syncDirs(s.dir, filepath.Dir(path))
	}
	return nil
}

// syncExisting makes an object that was already stored durable, with fsync
// on, before a new object or ref refers to it: it may have been written
// without fsync (by a write that failed later, or a push).
func (s *storer) syncExisting(h plumbing.Hash) error {
	if !s.fsync {
		return nil
	}
	hex := h.String()
	path := filepath.Join(s.dir, "objects", hex[:2], hex[2:])
	if _, err := os.Stat(path); err != nil {
		return nil // packed: whoever wrote the pack (a push) syncs it
	}
	if err := syncPath(s.dir, path); err != nil {
		return fmt.Errorf("sync object: %w", err)
	}
	return nil
}

// syncPath fsyncs a file and every directory from its own up to root, so
// a directory created for it (objects/ab/, refs/heads/draft/) is durable
// too.
func syncPath(root, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return err
	}
	return syncDirs(root, filepath.Dir(path))
}

// syncDirs fsyncs dir and each of its parents up to and including root.
func syncDirs(root, dir string) error {
	for {
		f, err := os.Open(dir)
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
		if dir == root || len(dir) <= len(root) {
			return nil
		}
		dir = filepath.Dir(dir)
	}
}

// syncTree fsyncs every file and directory under dir.
func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		return err
	})
}
