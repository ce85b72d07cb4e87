package odb

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	gitstorer "github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// Storer is go-git's filesystem storage with the object fixes quire
// depends on (gitstore's storer adds the ref fixes on top of it):
//
//   - Objects are written by quire (temporary file, fsync when asked,
//     rename), so a failed write leaves nothing behind and an object file
//     under its name is whole.
//   - With fsync on, objects and every directory entry leading to them
//     reach the disk before a write returns.
//   - An object missing from the pack index loaded earlier is looked up
//     again after a reindex, because another process (or a push) may have
//     added a pack since, or a repack removed the pack it was in.
//   - go-git's pack maps are guarded (omu), and reading an object's size
//     closes the object file (go-git's does not).
type Storer struct {
	*filesystem.Storage
	dir     string
	fsync   bool         // fsync objects before a write returns
	objects cache.Object // shared by every repository of the store
	trees   *TreeCache   // likewise
	omu     sync.Mutex   // guards go-git's object storage (see EncodedObject)
}

// NewStorer opens the object storage of the bare repository at dir.
// objects and trees are shared by every repository of a store.
func NewStorer(dir string, objects cache.Object, trees *TreeCache, fsync bool) *Storer {
	fs := filesystem.NewStorageWithOptions(osfs.New(dir), objects, filesystem.Options{})
	return &Storer{Storage: fs, dir: dir, fsync: fsync, objects: objects, trees: trees}
}

// Dir is the repository's directory.
func (s *Storer) Dir() string { return s.dir }

// Fsync reports whether writes are made durable before they return.
func (s *Storer) Fsync() bool { return s.fsync }

// WriteSyncClose writes b to f, fsyncs it when asked, and closes it.
func WriteSyncClose(f *os.File, b []byte, fsync bool) error {
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return SyncClose(f, fsync)
}

// SyncClose fsyncs f when asked, and closes it.
func SyncClose(f *os.File, fsync bool) error {
	var err error
	if fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// go-git's object storage keeps its pack indexes and open packfiles in
// maps it fills lazily, without a lock, so two goroutines reading one
// repository that has packs (after a push or a git gc) race and can crash
// the process. Every call that reaches those maps goes through s.omu.

// EncodedObject retries once after a reindex when the object is missing.
func (s *Storer) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	s.omu.Lock()
	defer s.omu.Unlock()
	obj, err := s.Storage.EncodedObject(t, h)
	if stale(err) {
		s.Storage.Reindex()
		obj, err = s.Storage.EncodedObject(t, h)
	}
	return obj, err
}

// HasEncodedObject retries once after a reindex when the object is missing.
func (s *Storer) HasEncodedObject(h plumbing.Hash) error {
	s.omu.Lock()
	defer s.omu.Unlock()
	err := s.Storage.HasEncodedObject(h)
	if stale(err) {
		s.Storage.Reindex()
		err = s.Storage.HasEncodedObject(h)
	}
	return err
}

// hasIndexed is HasEncodedObject without the reindex on a miss: for a
// writer that only saves a duplicate by asking (a miss after a repack
// it did not see costs a copy of an object, not an error), where a
// reindex per miss would reread every pack index.
func (s *Storer) hasIndexed(h plumbing.Hash) bool {
	s.omu.Lock()
	defer s.omu.Unlock()
	return s.Storage.HasEncodedObject(h) == nil
}

// EncodedObjectSize reads the size of a loose object itself and closes
// the file: go-git's version leaves it open until the garbage collector
// finalizes it, so listing a large version could exhaust the process's
// file descriptors. Packed objects go through go-git, under the lock.
func (s *Storer) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	hex := h.String()
	f, err := os.Open(filepath.Join(s.dir, "objects", hex[:2], hex[2:]))
	if errors.Is(err, os.ErrNotExist) {
		s.omu.Lock()
		defer s.omu.Unlock()
		size, err := s.Storage.EncodedObjectSize(h)
		if stale(err) {
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

// DeltaObject is EncodedObject keeping stored deltas, for pack writers.
func (s *Storer) DeltaObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	s.omu.Lock()
	defer s.omu.Unlock()
	obj, err := s.Storage.DeltaObject(t, h)
	if stale(err) {
		s.Storage.Reindex()
		obj, err = s.Storage.DeltaObject(t, h)
	}
	return obj, err
}

// stale reports whether err may come from an outdated pack index: the
// object was not found, or the pack it was listed in has been removed (a
// repack, here or in another process).
func stale(err error) bool {
	return errors.Is(err, plumbing.ErrObjectNotFound) || errors.Is(err, dotgit.ErrPackfileNotFound) || errors.Is(err, fs.ErrNotExist)
}

// Reindex forgets the pack indexes, under the lock.
func (s *Storer) Reindex() {
	s.omu.Lock()
	defer s.omu.Unlock()
	s.Storage.Reindex()
}

// HashesWithPrefix looks up abbreviated ids, under the lock.
func (s *Storer) HashesWithPrefix(prefix []byte) ([]plumbing.Hash, error) {
	s.omu.Lock()
	defer s.omu.Unlock()
	return s.Storage.HashesWithPrefix(prefix)
}

// IterEncodedObjects opens its iterators under the lock.
func (s *Storer) IterEncodedObjects(t plumbing.ObjectType) (gitstorer.EncodedObjectIter, error) {
	s.omu.Lock()
	defer s.omu.Unlock()
	return s.Storage.IterEncodedObjects(t)
}

// PackfileWriter receives a pack (a push). Its Close records the new
// pack's index in go-git's map, so it is taken under the lock too.
func (s *Storer) PackfileWriter() (io.WriteCloser, error) {
	s.omu.Lock()
	defer s.omu.Unlock()
	w, err := s.Storage.PackfileWriter()
	if err != nil {
		return nil, err
	}
	return &lockedCloser{WriteCloser: w, mu: &s.omu}, nil
}

type lockedCloser struct {
	io.WriteCloser
	mu *sync.Mutex
}

func (w *lockedCloser) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.WriteCloser.Close()
}

// Compressors are recycled: each holds about a megabyte of state. Blobs
// and commits are compressed at level 1, as git writes loose objects
// (core.looseCompression). Trees are stored uncompressed: they are mostly
// random 20-byte ids, so compression saves about a third of their size at
// twenty times the cost, and an upsert into a draft of 1,000 files writes
// a 40 KB root tree.
var (
	zlibFast = sync.Pool{New: func() any {
		zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
		return zw
	}}
	zlibStored = sync.Pool{New: func() any {
		zw, _ := zlib.NewWriterLevel(nil, zlib.NoCompression)
		return zw
	}}
	bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// SetEncodedObject stores o as a loose object unless a loose copy is
// there, as git does: compressed into a temporary file in the repository's
// top directory, then renamed into objects/, so no reader sees half an
// object and a crash leaves only a temporary file (cleared on open). With
// fsync on, the file and every directory up to the repository are synced
// before it counts as written.
//
// It does this itself rather than through go-git, whose writer compresses
// at zlib's default level (git writes loose objects at level 1,
// core.looseCompression), renames before the data could be synced, leaves
// its temporary file open on a failed write, and stats every directory on
// the way.
func (s *Storer) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	if !o.Type().Valid() || o.Type() == plumbing.OFSDeltaObject || o.Type() == plumbing.REFDeltaObject {
		return plumbing.ZeroHash, plumbing.ErrInvalidType
	}
	h := o.Hash()
	hex := h.String()
	dir := filepath.Join(s.dir, "objects", hex[:2])
	path := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(path); err == nil {
		return h, s.syncExisting(path)
	}
	f, err := os.CreateTemp(s.dir, ObjTempPrefix+"*")
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write object %s: %w", hex, err)
	}
	tmp := f.Name()
	err = writeLoose(f, o, s.fsync)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o444)
	}
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return plumbing.ZeroHash, fmt.Errorf("write object %s: %w", hex, err)
	}
	if s.fsync {
		if err := SyncDirs(s.dir, dir); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("write object %s: %w", hex, err)
		}
	}
	s.objects.Put(o)
	return h, nil
}

// ObjTempPrefix names the temporary files objects are written to.
const ObjTempPrefix = "quire-obj-"

// syncExisting makes an object that was already stored durable, with fsync
// on, before a new object or ref refers to it: it may have been written
// without fsync (by a write that failed later, or a push).
func (s *Storer) syncExisting(path string) error {
	if !s.fsync {
		return nil
	}
	if err := SyncPath(path); err != nil {
		return fmt.Errorf("sync object: %w", err)
	}
	return SyncDirs(s.dir, filepath.Dir(path))
}

// writeLoose writes o in the loose object format: zlib of "type size\0"
// and the content.
func writeLoose(f *os.File, o plumbing.EncodedObject, fsync bool) error {
	r, err := o.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	pool := &zlibFast
	if o.Type() == plumbing.TreeObject {
		pool = &zlibStored
	}
	zw := pool.Get().(*zlib.Writer)
	defer pool.Put(zw)
	buf := bufs.Get().(*bytes.Buffer)
	defer bufs.Put(buf)
	buf.Reset()
	zw.Reset(buf) // compressed in memory, written with one call
	hdr := append(o.Type().Bytes(), ' ')
	hdr = strconv.AppendInt(hdr, o.Size(), 10)
	if _, err := zw.Write(append(hdr, 0)); err != nil {
		return err
	}
	if _, err := io.Copy(zw, r); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return err
	}
	if fsync {
		return f.Sync()
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	return err
}

// SyncPath fsyncs a file and the directory holding it.
func SyncPath(path string) error {
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

// SyncDirs fsyncs dir and each of its parents up to and including root,
// so a directory created for a file (objects/ab/, refs/heads/draft/) is
// durable too.
func SyncDirs(root, dir string) error {
	for {
		if err := syncDir(dir); err != nil {
			return err
		}
		if dir == root || len(dir) <= len(root) {
			return nil
		}
		dir = filepath.Dir(dir)
	}
}

// SyncTree fsyncs every file and directory under dir.
func SyncTree(dir string) error {
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
