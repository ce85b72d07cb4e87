package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/quire/quire/gitstore/odb"

	"github.com/go-git/go-git/v5/plumbing"
)

// Every request reads two refs to know it answers with what every process
// sharing the data root has written: the system repository's main (the
// metadata index) and, for a prompt read or render, the prompt's main.
// Each is an open, a read and a close, about a quarter of a cached
// render's CPU. refGen lets a reader skip them while nothing has changed.

// refGenFile is the counter's file in the data root. Its name starts with
// a dot, so nothing that lists projects takes it for one.
const refGenFile = ".quire-refgen"

// refSeenFor bounds how long a remembered ref is used without reading it
// again, for ref changes that do not bump the counter: a process killed
// between moving a ref and bumping it, or a person running git on the data
// root by hand.
const refSeenFor = time.Second

// refGen is a counter in a file that every quire process sharing the data
// root maps into memory. A writer adds one after every ref it moves or
// removes, before the write is acknowledged; so a reader that loaded the
// counter, then read a ref, may reuse that value while the counter holds
// the same number. A nil *refGen (the file could not be made or mapped)
// remembers nothing: every read goes to the file.
//
// Readers keep a read-only mapping; a writer maps the file writable only
// for the moment of its bump. A writable file held open would stop the
// data root's file system from being remounted read-only.
type refGen struct {
	path string
	mu   sync.RWMutex   // guards mem against Close
	mem  []byte         // read-only; nil once closed
	n    *atomic.Uint64 // the first 8 bytes of mem
}

// openRefGen maps the counter at path, creating it if needed, and bumps
// it: whatever a killed process moved without bumping is then read again
// by everyone.
func openRefGen(path string) (*refGen, error) {
	if err := createRefGen(path); err != nil {
		return nil, err
	}
	mem, err := mapRefGen(path, false)
	if err != nil {
		return nil, err
	}
	g := &refGen{path: path, mem: mem, n: counterIn(mem)}
	if err := g.bump(); err != nil {
		syscall.Munmap(mem)
		return nil, err
	}
	return g, nil
}

// mapRefGen maps the counter's file, writable or not.
func mapRefGen(path string, writable bool) ([]byte, error) {
	flag, prot := os.O_RDONLY, syscall.PROT_READ
	if writable {
		flag, prot = os.O_RDWR, syscall.PROT_READ|syscall.PROT_WRITE
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, fmt.Errorf("open ref counter: %w", err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() || info.Size() < 8 {
		return nil, fmt.Errorf("ref counter %s is not an 8-byte file", path)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 8, prot, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map ref counter: %w", err)
	}
	return mem, nil
}

// counterIn is the counter at the start of a mapping (page-aligned, so
// aligned for atomic access).
func counterIn(mem []byte) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&mem[0])) }

// createRefGen writes the counter's file whole, unless it exists: written
// and linked into place, so no process maps a file shorter than the
// counter, and its block is allocated (a store to a mapped hole on a full
// disk would kill the process).
func createRefGen(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), refGenFile+"-*")
	if err != nil {
		return fmt.Errorf("create ref counter: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := odb.WriteSyncClose(f, make([]byte, 8), false); err != nil {
		return fmt.Errorf("create ref counter: %w", err)
	}
	if err := os.Link(tmp, path); err != nil && !os.IsExist(err) {
		return fmt.Errorf("create ref counter: %w", err)
	}
	return nil
}

// load returns the counter; ok is false for a nil or closed refGen.
func (g *refGen) load() (n uint64, ok bool) {
	if g == nil {
		return 0, false
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.mem == nil {
		return 0, false
	}
	return g.n.Load(), true
}

// bump says a ref has moved. Its error is only worth reporting at open:
// after a ref change that succeeded, a failed bump leaves other readers
// behind by at most refSeenFor.
func (g *refGen) bump() error {
	if g == nil {
		return nil
	}
	mem, err := mapRefGen(g.path, true)
	if err != nil {
		return err
	}
	counterIn(mem).Add(1)
	return syscall.Munmap(mem)
}

// close unmaps the counter; reads then go to the ref files.
func (g *refGen) close() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mem != nil {
		syscall.Munmap(g.mem)
		g.mem, g.n = nil, nil
	}
}

// RefGeneration is a number that changes whenever a ref moves on the
// data root, in any process sharing it, and at least every refSeenFor
// (for ref changes that do not bump the counter). A reader that takes it
// before reading refs may reuse what it read while the number holds, as
// recentRef does. ok is false without the counter: then nothing may be
// reused.
func (s *Store) RefGeneration() (gen uint64, ok bool) {
	n, ok := s.gen.load()
	if !ok {
		return 0, false
	}
	// Both terms only grow, so the sum changes when either does.
	return n + uint64(time.Now().UnixNano()/int64(refSeenFor)), true
}

// refMemo is what one repository's hot refs were last read as.
type refMemo struct {
	mu   sync.Mutex
	seen map[plumbing.ReferenceName]refSeen
}

type refSeen struct {
	h   plumbing.Hash
	hex string    // h.String(), "" for the zero hash
	gen uint64    // the counter before the ref was read
	at  time.Time // when it was read
}

// ChangeFeed carries "a ref moved" between quire processes on different
// hosts, which see the data root through a network file system. The
// mapped counter cannot: a page mapped on two NFS clients is two copies,
// each brought up to date when its kernel chooses. internal/server wires
// Redis pub/sub here (cache.Changes) whenever Redis is not embedded.
type ChangeFeed interface {
	// Publish tells every other process that a ref moved. The store calls
	// it after the move and before the write is acknowledged.
	Publish()
	// Generation changes whenever another process published, and when
	// the feed may have missed a message (it reconnected). ok is false
	// while the feed cannot vouch for anything: nothing remembered is used.
	Generation() (n uint64, ok bool)
}

// changeClock is what a remembered ref is checked against: the mapped
// counter (processes on this host, at no cost) plus, with a feed, the
// feed's generation (processes on other hosts). Both only grow, so their
// sum changes whenever either does. A message the feed loses leaves a
// reader behind by at most refSeenFor.
type changeClock struct {
	host *refGen    // nil: the counter could not be mapped
	feed ChangeFeed // nil: one host
}

func (c *changeClock) load() (uint64, bool) {
	n, ok := c.host.load()
	if !ok {
		return 0, false
	}
	if c.feed != nil {
		f, ok := c.feed.Generation()
		if !ok {
			return 0, false
		}
		n += f
	}
	return n, true
}

// bump says a ref has moved, to this host and then to the others.
func (c *changeClock) bump() {
	c.host.bump()
	if c.feed != nil {
		c.feed.Publish()
	}
}

func (c *changeClock) close() { c.host.close() }

// recentRef is ref for the hot read paths: the value read last, while no
// ref anywhere has moved since and it is younger than refSeenFor; else
// read from the file. Writers read with ref, under the repository's lock.
func (r *repo) recentRef(name plumbing.ReferenceName) (plumbing.Hash, error) {
	s, err := r.recentSeen(name)
	return s.h, err
}

// recentRefHex is recentRef in hex, "" for no ref: the string is made
// once per value read, not once per request.
func (r *repo) recentRefHex(name plumbing.ReferenceName) (string, error) {
	s, err := r.recentSeen(name)
	return s.hex, err
}

func (r *repo) recentSeen(name plumbing.ReferenceName) (refSeen, error) {
	gen, ok := r.st.gen.load()
	if !ok {
		h, err := r.ref(name)
		return seenNow(h, 0, time.Time{}), err
	}
	now := time.Now()
	r.memo.mu.Lock()
	s, ok := r.memo.seen[name]
	r.memo.mu.Unlock()
	if ok && s.gen == gen && now.Sub(s.at) < refSeenFor {
		return s, nil
	}
	h, err := r.ref(name)
	if err != nil {
		return refSeen{}, err
	}
	s = seenNow(h, gen, now)
	r.memo.mu.Lock()
	if r.memo.seen == nil {
		r.memo.seen = map[plumbing.ReferenceName]refSeen{}
	}
	r.memo.seen[name] = s
	r.memo.mu.Unlock()
	return s, nil
}

func seenNow(h plumbing.Hash, gen uint64, at time.Time) refSeen {
	s := refSeen{h: h, gen: gen, at: at}
	if !h.IsZero() {
		s.hex = h.String()
	}
	return s
}
