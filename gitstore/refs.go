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
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	gitstorer "github.com/go-git/go-git/v5/plumbing/storer"
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
//     added a pack since.
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

// EncodedObjectSize retries once after a reindex when the object is missing.
func (s *storer) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	s.omu.Lock()
	defer s.omu.Unlock()
	n, err := s.Storage.EncodedObjectSize(h)
	if stale(err) {
		s.Storage.Reindex()
		n, err = s.Storage.EncodedObjectSize(h)
	}
	return n, err
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

// tmpSeq numbers the temporary files of loose objects.
var tmpSeq atomic.Uint64

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
// there, as git does: compressed into a temporary file beside its final
// place, then renamed, so no reader sees half an object. With fsync on,
// the file and its directory are synced before it counts as written.
//
// It does this itself rather than through go-git, whose writer compresses
// at zlib's default level (git writes loose objects at level 1,
// core.looseCompression), makes the file in objects/pack and moves it
// across directories, and stats every directory on the way.
func (s *storer) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	if !o.Type().Valid() || o.Type() == plumbing.OFSDeltaObject || o.Type() == plumbing.REFDeltaObject {
		return s.Storage.SetEncodedObject(o) // go-git refuses these
	}
	h := o.Hash()
	hex := h.String()
	dir := filepath.Join(s.dir, "objects", hex[:2])
	path := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(path); err == nil {
		return h, nil
	}
	var tmp string
	var f *os.File
	var err error
	newDir := false
	for try := 0; try < 3; try++ { // a name left by a crashed process is skipped
		tmp = filepath.Join(dir, fmt.Sprintf("tmp_obj_%d_%d", os.Getpid(), tmpSeq.Add(1)))
		f, err = os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
		if errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return plumbing.ZeroHash, err
			}
			newDir = true
			f, err = os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if err := writeLoose(f, o, s.fsync); err != nil {
		f.Close()
		os.Remove(tmp)
		return plumbing.ZeroHash, err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return plumbing.ZeroHash, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return plumbing.ZeroHash, err
	}
	if s.fsync {
		if err := syncDir(dir); err != nil {
			return plumbing.ZeroHash, err
		}
		if newDir { // the new fan-out directory's own entry
			if err := syncDir(filepath.Dir(dir)); err != nil {
				return plumbing.ZeroHash, err
			}
		}
	}
	s.objects.Put(o)
	return h, nil
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
