package gitstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/quire/quire"
)

// Repacking. Every push adds a pack and every API write adds loose
// objects; both slow reads down and leave clones without deltas to copy.
// After a change, a repository holding more than RepackPacks packs or
// about RepackLoose loose objects is repacked in the background: every
// object it holds (reachable or not: nothing is pruned, so a writer that
// raced the repack cannot lose an object) goes into one new pack with
// deltas computed once, the pack is installed, and then, under the
// repository's write lock, the packs and loose objects it replaces are
// removed. Readers holding an old pack open keep reading it; readers with
// an outdated index reload it on a miss (storer.EncodedObject).

// repackLockFile keeps two processes from repacking one repository at once.
const repackLockFile = "quire-repack.lock"

type repacker struct {
	g       *Git
	delay   time.Duration
	mu      sync.Mutex
	pending map[string]quire.Kind // asset id -> kind
	system  bool                  // the system repository changed
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

func newRepacker(g *Git) *repacker {
	rp := &repacker{
		g: g, delay: g.opts.RepackDelay,
		pending: map[string]quire.Kind{},
		kick:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go rp.run()
	return rp
}

// touchAsset notes that an asset's repository changed.
func (rp *repacker) touchAsset(a *quire.Asset) {
	rp.mu.Lock()
	rp.pending[a.ID] = a.Kind
	rp.mu.Unlock()
	select {
	case rp.kick <- struct{}{}:
	default:
	}
}

// touchSystem notes that the system repository changed: metadata and
// usage commits add loose objects to it like any write.
func (rp *repacker) touchSystem() {
	rp.mu.Lock()
	rp.system = true
	rp.mu.Unlock()
	select {
	case rp.kick <- struct{}{}:
	default:
	}
}

func (rp *repacker) close() {
	select {
	case <-rp.stop:
	default:
		close(rp.stop)
	}
	<-rp.done
}

func (rp *repacker) run() {
	defer close(rp.done)
	for {
		select {
		case <-rp.stop:
			return
		case <-rp.kick:
		}
		// Let a burst of writes settle before looking.
		select {
		case <-rp.stop:
			return
		case <-time.After(rp.delay):
		}
		rp.mu.Lock()
		pending, system := rp.pending, rp.system
		rp.pending, rp.system = map[string]quire.Kind{}, false
		rp.mu.Unlock()
		if system {
			if _, err := rp.g.maybeRepack(rp.g.s.systemPath()); err != nil {
				rp.g.opts.OnError("repack", err)
			}
		}
		for id, kind := range pending {
			select {
			case <-rp.stop:
				return
			default:
			}
			a, err := rp.g.s.Asset(context.Background(), kind, id)
			if err != nil {
				continue // deleted meanwhile
			}
			if _, err := rp.g.maybeRepack(rp.g.s.RepoPath(a)); err != nil {
				rp.g.opts.OnError("repack", err)
			}
		}
	}
}

// objectCounts counts the packs, the objects in them and the loose
// objects of the repository at dir.
func objectCounts(dir string) (packs, packed, loose int, err error) {
	objects := filepath.Join(dir, "objects")
	entries, err := os.ReadDir(objects)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, e := range entries {
		if len(e.Name()) != 2 || !e.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(objects, e.Name()))
		if err != nil {
			continue
		}
		loose += len(files)
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

// maybeRepack repacks the repository at dir when it crossed a threshold:
// more than RepackPacks packs, or loose objects numbering RepackLoose or
// an eighth of those already packed, whichever is more. A repack rewrites
// every object, so the second keeps a large repository (the system one,
// at scale) from being rewritten whole every few writes.
// It reports whether it repacked.
func (g *Git) maybeRepack(dir string) (bool, error) {
	packs, packed, loose, err := objectCounts(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	if packs <= g.opts.RepackPacks && loose < max(g.opts.RepackLoose, packed/8) {
		return false, nil
	}
	return true, g.Repack(dir)
}

// Repack folds every loose object and pack of the repository at dir into
// one pack. It returns at once when another process is repacking it.
func (g *Git) Repack(dir string) error {
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

	r, err := g.s.repo(dir)
	if err != nil {
		return err
	}
	removeStaleIncoming(dir)

	// Everything the repository holds now.
	loose, looseBytes, err := looseObjects(dir)
	if err != nil {
		return err
	}
	ps, err := g.idx.openPacks(dir)
	if err != nil {
		return err
	}
	defer ps.close() // the streamed pack reads from it
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
	if looseBytes+packBytes > g.opts.RepackDeltaBytes || dir == g.s.systemPath() {
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
		_, err = packfile.NewEncoder(f, r.st, false).Encode(all, window)
	} else {
		// One object at a time, as clones are served: stored deltas are
		// copied, none is computed.
		_, err = writePack(g.zlib, newObjectReader(r, ps), all, true, f)
	}
	if err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	if err != nil {
		return fmt.Errorf("repack %s: %w", dir, err)
	}
	idx, err := indexPack(tmp, "tmp.pack")
	if err != nil {
		return fmt.Errorf("repack %s: %w", dir, err)
	}
	sum := plumbing.Hash(idx.PackfileChecksum)
	q := &quarantine{dir: tmp, name: "pack-" + sum.String(), idx: idx, objects: seen}
	if err := q.install(dir, g.s.opts.Fsync); err != nil {
		return err
	}

	unlock, err := g.s.locks.lock(dir)
	if err != nil {
		return err
	}
	defer unlock()
	for _, name := range packNames {
		if name == q.name {
			continue
		}
		base := filepath.Join(packDir, name)
		os.Remove(base + ".pack") // the .pack first: go-git lists packs by it
		os.Remove(base + ".idx")
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
	r.st.Reindex()
	return nil
}

// indexPack parses the pack name in dir and returns its index.
func indexPack(dir, name string) (*idxfile.MemoryIndex, error) {
	f, err := osfs.New(dir).Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	iw := new(idxfile.Writer)
	parser, err := packfile.NewParser(packfile.NewScanner(f), iw)
	if err != nil {
		return nil, err
	}
	if _, err := parser.Parse(); err != nil {
		return nil, err
	}
	return iw.Index()
}

// looseObjects lists the loose objects of the repository at dir.
func looseObjects(dir string) ([]plumbing.Hash, int64, error) {
	objects := filepath.Join(dir, "objects")
	entries, err := os.ReadDir(objects)
	if err != nil {
		return nil, 0, err
	}
	var out []plumbing.Hash
	var total int64
	for _, e := range entries {
		if len(e.Name()) != 2 || !e.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(objects, e.Name()))
		if err != nil {
			continue
		}
		for _, f := range files {
			h, ok := parseHash(e.Name() + f.Name())
			if !ok {
				continue
			}
			if fi, err := f.Info(); err == nil {
				total += fi.Size()
			}
			out = append(out, h)
		}
	}
	return out, total, nil
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

var _ io.Closer = (*Git)(nil)
