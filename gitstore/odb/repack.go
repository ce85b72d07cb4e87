package odb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// Repacking. Every push adds a pack and every API write adds loose
// objects; both slow reads down and leave clones without deltas to copy.
// Repack puts every object a repository holds (reachable or not: nothing
// is pruned, so a writer that raced the repack cannot lose an object) into
// one new pack with deltas computed once, installs the pack, and then,
// under the repository's write lock, removes the packs and loose objects
// it replaces. Readers holding an old pack open keep reading it; readers
// with an outdated index reload it on a miss (Storer.EncodedObject).
// When to repack is the caller's choice (gitstore's repacker).
//
// Old packs are not unlinked but moved to retiredDir, and removed by a
// later repack once retiredFor has passed. On a local file system an
// unlinked file stays readable through every open descriptor and
// mapping; on NFS that holds only on the host that unlinked it, and a
// reader on another host that has the pack mapped would fault (SIGBUS)
// on its next page. A request reads a pack for far less than retiredFor.
// The retirement time is in the name, not taken from the file's mtime,
// which on a network file system is the server's clock.

// repackLockFile keeps two processes from repacking one repository at once.
const repackLockFile = "quire-repack.lock"

// retiredDir, in the repository's top directory (which git ignores but
// for its own files), holds packs a repack replaced; retiredFor is how
// long they stay there.
const (
	retiredDir = "quire-retired"
	retiredFor = 30 * time.Minute
)

// ObjectCounts counts the packs, the objects in them and the loose
// objects of the repository at dir.
func ObjectCounts(dir string) (packs, packed, loose int, err error) {
	objects := filepath.Join(dir, "objects")
	err = forEachLooseDir(dir, func(_ string, files []os.DirEntry) { loose += len(files) })
	if err != nil {
		return 0, 0, 0, err
	}
	files, err := os.ReadDir(filepath.Join(objects, "pack"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, 0, 0, err
	}
	for _, f := range files {
		if name, ok := strings.CutSuffix(f.Name(), ".pack"); ok && strings.HasPrefix(name, "pack-") {
			packs++
			packed += idxObjects(filepath.Join(objects, "pack", name+".idx"))
		}
	}
	return packs, packed, loose, nil
}

// idxObjects reads the number of objects in a version 2 pack index: the
// last entry of its fan-out table. 0 when it cannot.
func idxObjects(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	var b [8 + 256*4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil || string(b[:4]) != "\377tOc" {
		return 0
	}
	return int(binary.BigEndian.Uint32(b[len(b)-4:]))
}

// RepackOptions are what Repack needs from the store above it.
type RepackOptions struct {
	// Cache and Zlib are the pack index cache and the compressor pool
	// clones use.
	Cache *IdxCache
	Zlib  *sync.Pool
	// DeltaBytes bounds the repositories repacked with delta search, which
	// holds every object in memory, inflated: only a repository whose
	// objects inflate to at most DeltaBytes (their sizes added up, read
	// from the pack entry headers) is delta-searched, so the search holds
	// about DeltaBytes plus its window's delta indexes. Larger ones, and
	// any when Stream is set, are streamed into one pack, one object at a
	// time, keeping the deltas they have and computing none.
	DeltaBytes int64
	Stream     bool
	// Install moves the new pack (tmpDir/tmp.pack, to be called name, with
	// index idx, holding objects) into the repository.
	Install func(tmpDir, name string, idx *idxfile.MemoryIndex, objects map[plumbing.Hash]bool) error
	// Lock takes the repository's write lock, held while the packs and
	// loose objects the new pack replaces are removed.
	Lock func() (unlock func(), err error)
}

// Repack folds every loose object and pack of the repository db into one
// pack. It returns at once when another process is repacking it.
func Repack(db *DB, o RepackOptions) error {
	dir := db.Path()
	lf, err := os.OpenFile(filepath.Join(dir, repackLockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil
		}
		return err
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)

	removeStaleIncoming(dir)
	removeRetired(dir, time.Now())
	// Everything the repository holds now.
	loose, looseBytes, err := looseObjects(dir)
	if err != nil {
		return err
	}
	ps, err := o.Cache.OpenPacks(dir)
	if err != nil {
		return err
	}
	defer ps.Close() // the streamed pack reads from it
	var packNames []string
	var packBytes int64
	seen := map[plumbing.Hash]bool{}
	var all []plumbing.Hash
	for _, h := range loose {
		if !seen[h] {
			seen[h] = true
			all = append(all, h)
		}
	}
	for _, p := range ps.packs {
		packNames = append(packNames, p.name)
		packBytes += int64(len(p.data))
		for _, e := range p.idx.entries {
			if !seen[e.hash] {
				seen[e.hash] = true
				all = append(all, e.hash)
			}
		}
	}
	if len(all) == 0 || (len(loose) == 0 && len(packNames) <= 1) {
		return nil
	}

	window := uint(10)
	// The system repository is streamed whatever its size: tens of
	// thousands of small records, which delta search would hold in memory
	// all at once (270 MiB of heap for 62,000 at scale, against 34 MiB).
	// Decided by inflated size: a small pack of zeros can inflate to
	// gigabytes, which a decision by stored size would load at once.
	if looseBytes+packBytes > o.DeltaBytes || o.Stream || inflatedOver(NewObjectReader(db, ps), all, o.DeltaBytes) {
		window = 0
	}
	packDir := filepath.Join(dir, "objects", "pack")
	if err := os.MkdirAll(packDir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, "incoming-repack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	f, err := os.Create(filepath.Join(tmp, "tmp.pack"))
	if err != nil {
		return err
	}
	if window > 0 {
		_, err = packfile.NewEncoder(f, db.st, false).Encode(all, window)
	} else {
		// One object at a time, as clones are served: stored deltas are
		// copied, none is computed.
		_, err = WritePack(o.Zlib, NewObjectReader(db, ps), all, true, f)
	}
	if err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	if err != nil {
		return fmt.Errorf("repack %s: %w", dir, err)
	}
	idx, sum, err := IndexPack(tmp, "tmp.pack")
	if err != nil {
		return fmt.Errorf("repack %s: %w", dir, err)
	}
	newPack := "pack-" + sum.String()
	if err := o.Install(tmp, newPack, idx, seen); err != nil {
		return err
	}

	unlock, err := o.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	retired := filepath.Join(dir, retiredDir)
	if err := os.MkdirAll(retired, 0o755); err != nil {
		return err
	}
	stamp := strconv.FormatInt(time.Now().Unix(), 10) + "-"
	for _, name := range packNames {
		if name == newPack {
			continue
		}
		base := filepath.Join(packDir, name)
		// The .pack first: go-git lists packs by it.
		for _, ext := range []string{".pack", ".idx"} {
			if err := os.Rename(base+ext, filepath.Join(retired, stamp+name+ext)); err != nil {
				os.Remove(base + ext)
			}
		}
	}
	dirs := map[string]bool{}
	for _, h := range loose {
		hex := h.String()
		os.Remove(filepath.Join(dir, "objects", hex[:2], hex[2:]))
		dirs[hex[:2]] = true
	}
	for d := range dirs {
		os.Remove(filepath.Join(dir, "objects", d)) // only if empty
	}
	db.st.Reindex()
	return nil
}

// IndexPack parses the pack name in dir and returns its index and
// checksum: a repack's new pack, or a push's in quarantine. A pack that
// needs objects from elsewhere (thin) fails with
// packfile.ErrReferenceDeltaNotFound.
func IndexPack(dir, name string) (*idxfile.MemoryIndex, plumbing.Hash, error) {
	f, err := osfs.New(dir).Open(name)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	defer f.Close()
	iw := new(idxfile.Writer)
	parser, err := packfile.NewParser(packfile.NewScanner(f), iw)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	sum, err := parser.Parse()
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	idx, err := iw.Index()
	return idx, sum, err
}

// inflatedOver reports whether the objects all inflate to more than limit
// together, stopping as soon as they do; an object whose size cannot be
// read counts as over.
func inflatedOver(rd *ObjectReader, all []plumbing.Hash, limit int64) bool {
	var sum int64
	for _, h := range all {
		n, err := rd.Size(h)
		if err != nil {
			return true
		}
		if sum += n; sum > limit {
			return true
		}
	}
	return false
}

// looseObjects lists the loose objects of the repository at dir.
func looseObjects(dir string) ([]plumbing.Hash, int64, error) {
	var out []plumbing.Hash
	var total int64
	err := forEachLooseDir(dir, func(prefix string, files []os.DirEntry) {
		for _, f := range files {
			h, ok := ParseHash(prefix + f.Name())
			if !ok {
				continue
			}
			if fi, err := f.Info(); err == nil {
				total += fi.Size()
			}
			out = append(out, h)
		}
	})
	return out, total, err
}

// forEachLooseDir calls fn with each objects/xx directory of the
// repository at dir and the files in it; unreadable ones are passed over.
func forEachLooseDir(dir string, fn func(prefix string, files []os.DirEntry)) error {
	objects := filepath.Join(dir, "objects")
	entries, err := os.ReadDir(objects)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if len(e.Name()) != 2 || !e.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(objects, e.Name()))
		if err != nil {
			continue
		}
		fn(e.Name(), files)
	}
	return nil
}

// removeRetired deletes the packs retired more than retiredFor before now.
func removeRetired(dir string, now time.Time) {
	retired := filepath.Join(dir, retiredDir)
	entries, err := os.ReadDir(retired)
	if err != nil {
		return
	}
	for _, e := range entries {
		stamp, _, ok := strings.Cut(e.Name(), "-")
		sec, err := strconv.ParseInt(stamp, 10, 64)
		if ok && err == nil && now.Sub(time.Unix(sec, 0)) < retiredFor {
			continue
		}
		os.Remove(filepath.Join(retired, e.Name()))
	}
}

// removeStaleIncoming deletes quarantines left by a crash.
func removeStaleIncoming(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "incoming-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Hour {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}
