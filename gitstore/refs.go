package gitstore

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
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	gitstorer "github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// storer is go-git's filesystem storage with the fixes quire depends on:
//
//   - Ref updates are atomic for every reader: the new value goes to a
//     temporary file in the repository's top directory and is renamed over
//     the ref. go-git rewrites the ref file in place, so a concurrent reader
//     can see it empty. The temporary file is kept out of refs/ (C git uses
//     <ref>.lock there) because go-git's ref listing reads every file under
//     refs/: it fails on an empty <ref>.lock and lists a full one as a ref,
//     during a write or forever after a crash.
//   - Objects are written by quire (temporary file, fsync when asked,
//     rename), so a failed write leaves nothing behind and an object file
//     under its name is whole.
//   - With fsync on, objects, refs and every directory entry leading to
//     them reach the disk before a write returns, removals too.
//   - An object missing from the pack index loaded earlier is looked up
//     again after a reindex, because another process (or a push) may have
//     added a pack since, or a repack removed the pack it was in.
//   - go-git's pack maps are guarded (omu), and reading an object's size
//     closes the object file (go-git's does not).
//
// Callers hold the repository's write lock around every ref change, so the
// compare-and-swap below is safe across goroutines and processes.
type storer struct {
	*filesystem.Storage
	dir     string
	fsync   bool         // fsync objects and refs before a write returns
	objects cache.Object // shared by every repository of the store
	trees   *treeCache   // likewise
	omu     sync.Mutex   // guards go-git's object storage (see EncodedObject)
	gen     *refGen      // bumped after every ref change
}

// Reference reads a ref. A loose ref is read straight from its file, and a
// missing one is answered without go-git's lookup when there is no
// packed-refs file; go-git's lookup (which stats every directory on the
// way and reads packed-refs) serves everything else.
func (s *storer) Reference(name plumbing.ReferenceName) (*plumbing.Reference, error) {
	if !strings.HasPrefix(string(name), "refs/") || name.Validate() != nil {
		return s.Storage.Reference(name)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(string(name))))
	switch {
	case err == nil:
		if line := strings.TrimSuffix(string(b), "\n"); len(line) == 40 && isHex(line) {
			return plumbing.NewHashReference(name, plumbing.NewHash(line)), nil
		}
	case errors.Is(err, fs.ErrNotExist):
		if _, err := os.Stat(filepath.Join(s.dir, "packed-refs")); errors.Is(err, fs.ErrNotExist) {
			return nil, plumbing.ErrReferenceNotFound
		}
	}
	return s.Storage.Reference(name)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// SetReference writes r unconditionally.
func (s *storer) SetReference(r *plumbing.Reference) error {
	return s.writeRef(r)
}

// CheckAndSetReference writes r if the ref currently equals old. A nil old
// means the ref must not exist yet.
func (s *storer) CheckAndSetReference(r, old *plumbing.Reference) error {
	cur, err := s.Reference(r.Name())
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
	s.gen.bump()
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
	err := s.Storage.RemoveReference(name)
	s.gen.bump() // even on an error: the ref may be gone all the same
	if err != nil {
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

// go-git's object storage keeps its pack indexes and open packfiles in
// maps it fills lazily, without a lock, so two goroutines reading one
// repository that has packs (after a push or a git gc) race and can crash
// the process. Every call that reaches those maps goes through s.omu.

// EncodedObject retries once after a reindex when the object is missing.
func (s *storer) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
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
func (s *storer) HasEncodedObject(h plumbing.Hash) error {
	s.omu.Lock()
	defer s.omu.Unlock()
	err := s.Storage.HasEncodedObject(h)
	if stale(err) {
		s.Storage.Reindex()
		err = s.Storage.HasEncodedObject(h)
	}
	return err
}

// EncodedObjectSize reads the size of a loose object itself and closes
// the file: go-git's version leaves it open until the garbage collector
// finalizes it, so listing a large version could exhaust the process's
// file descriptors. Packed objects go through go-git, under the lock.
func (s *storer) EncodedObjectSize(h plumbing.Hash) (int64, error) {
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
func (s *storer) DeltaObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
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
func (s *storer) Reindex() {
	s.omu.Lock()
	defer s.omu.Unlock()
	s.Storage.Reindex()
}

// HashesWithPrefix looks up abbreviated ids, under the lock.
func (s *storer) HashesWithPrefix(prefix []byte) ([]plumbing.Hash, error) {
	s.omu.Lock()
	defer s.omu.Unlock()
	return s.Storage.HashesWithPrefix(prefix)
}

// IterEncodedObjects opens its iterators under the lock.
func (s *storer) IterEncodedObjects(t plumbing.ObjectType) (gitstorer.EncodedObjectIter, error) {
	s.omu.Lock()
	defer s.omu.Unlock()
	return s.Storage.IterEncodedObjects(t)
}

// PackfileWriter receives a pack (a push). Its Close records the new
// pack's index in go-git's map, so it is taken under the lock too.
func (s *storer) PackfileWriter() (io.WriteCloser, error) {
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
func (s *storer) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
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
	f, err := os.CreateTemp(s.dir, objTempPrefix+"*")
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
		if err := syncDirs(s.dir, dir); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("write object %s: %w", hex, err)
		}
	}
	s.objects.Put(o)
	return h, nil
}

// objTempPrefix names the temporary files objects are written to.
const objTempPrefix = "quire-obj-"

// syncExisting makes an object that was already stored durable, with fsync
// on, before a new object or ref refers to it: it may have been written
// without fsync (by a write that failed later, or a push).
func (s *storer) syncExisting(path string) error {
	if !s.fsync {
		return nil
	}
	if err := syncPath(path); err != nil {
		return fmt.Errorf("sync object: %w", err)
	}
	return syncDirs(s.dir, filepath.Dir(path))
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

// syncDirs fsyncs dir and each of its parents up to and including root,
// so a directory created for a file (objects/ab/, refs/heads/draft/) is
// durable too.
func syncDirs(root, dir string) error {
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
