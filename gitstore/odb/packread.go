package odb

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Raw access to pack files, so a clone can copy stored objects (and the
// deltas the repacker computed) byte for byte instead of inflating and
// compressing them again. go-git's own pack reader neither exposes raw
// entries nor is safe for concurrent use.

// Pack object types as stored in an entry header.
const (
	PackCommit   = 1
	PackTree     = 2
	PackBlob     = 3
	PackTag      = 4
	PackOfsDelta = 6
	PackRefDelta = 7
)

// idxEntry is one object of a pack.
type idxEntry struct {
	hash plumbing.Hash
	off  int64
	end  int64 // where the next entry (or the trailer) starts
	crc  uint32
}

// packIndex is a parsed .idx file, immutable once built.
type packIndex struct {
	entries []idxEntry // by offset
	byHash  map[plumbing.Hash]int32
	byOff   map[int64]int32
}

func (p *packIndex) lookup(h plumbing.Hash) (*idxEntry, bool) {
	i, ok := p.byHash[h]
	if !ok {
		return nil, false
	}
	return &p.entries[i], true
}

func (p *packIndex) at(off int64) (*idxEntry, bool) {
	i, ok := p.byOff[off]
	if !ok {
		return nil, false
	}
	return &p.entries[i], true
}

// loadPackIndex reads an .idx file; packSize is the size of its .pack.
func loadPackIndex(path string, packSize int64) (*packIndex, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	mi := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(f).Decode(mi); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	it, err := mi.EntriesByOffset()
	if err != nil {
		return nil, err
	}
	defer it.Close()
	p := &packIndex{byHash: map[plumbing.Hash]int32{}, byOff: map[int64]int32{}}
	for {
		e, err := it.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		p.entries = append(p.entries, idxEntry{hash: e.Hash, off: int64(e.Offset), crc: e.CRC32})
	}
	for i := range p.entries {
		end := packSize - 20
		if i+1 < len(p.entries) {
			end = p.entries[i+1].off
		}
		if end <= p.entries[i].off {
			return nil, fmt.Errorf("read %s: entries overlap", filepath.Base(path))
		}
		p.entries[i].end = end
		p.byHash[p.entries[i].hash] = int32(i)
		p.byOff[p.entries[i].off] = int32(i)
	}
	return p, nil
}

// IdxCache keeps parsed pack indexes, the least recently used out first.
// Pack names are their checksums, so a path with the same size and time is
// the same index.
type IdxCache struct {
	lru *lru.Cache[string, *idxCacheEntry]
}

type idxCacheEntry struct {
	size  int64
	mtime time.Time
	idx   *packIndex
}

// NewIdxCache returns a cache of at most max pack indexes.
func NewIdxCache(max int) *IdxCache {
	c, _ := lru.New[string, *idxCacheEntry](max)
	return &IdxCache{lru: c}
}

func (c *IdxCache) load(path string, packSize int64) (*packIndex, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if e, ok := c.lru.Get(path); ok {
		if e.size == fi.Size() && e.mtime.Equal(fi.ModTime()) {
			return e.idx, nil
		}
		c.lru.Remove(path)
	}
	idx, err := loadPackIndex(path, packSize)
	if err != nil {
		return nil, err
	}
	c.lru.ContainsOrAdd(path, &idxCacheEntry{size: fi.Size(), mtime: fi.ModTime(), idx: idx})
	return idx, nil
}

// openPack is one pack file mapped for the length of a request, so a
// concurrent repack deleting it does not pull it from under the reader
// (packs are never rewritten in place, only added and removed).
type openPack struct {
	name string
	data []byte // the whole pack, mapped read-only
	idx  *packIndex
}

// slice returns the bytes [off, end) of the pack.
func (p *openPack) slice(off, end int64) ([]byte, error) {
	if off < 0 || end > int64(len(p.data)) || off > end {
		return nil, fmt.Errorf("%s: range %d-%d outside the pack", p.name, off, end)
	}
	return p.data[off:end:end], nil
}

func mapFile(f *os.File, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	if size > math.MaxInt32*64 {
		return nil, errors.New("pack too large to map")
	}
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

// PackSet is every pack of a repository, open.
type PackSet struct {
	packs []*openPack
}

// OpenPacks opens the packs of the repository at dir. A pack that vanishes
// between listing and opening (a repack finished) makes it list again.
func (c *IdxCache) OpenPacks(dir string) (*PackSet, error) {
	var lastErr error
	for range 3 {
		ps, err := c.tryOpenPacks(dir)
		if err == nil {
			return ps, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		lastErr = err
	}
	return nil, lastErr
}

func (c *IdxCache) tryOpenPacks(dir string) (*PackSet, error) {
	packDir := filepath.Join(dir, "objects", "pack")
	names, err := os.ReadDir(packDir)
	if errors.Is(err, os.ErrNotExist) {
		return &PackSet{}, nil
	}
	if err != nil {
		return nil, err
	}
	ps := &PackSet{}
	for _, de := range names {
		n := de.Name()
		if !strings.HasPrefix(n, "pack-") || !strings.HasSuffix(n, ".pack") {
			continue
		}
		base := strings.TrimSuffix(n, ".pack")
		f, err := os.Open(filepath.Join(packDir, n))
		if err != nil {
			ps.Close()
			return nil, err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			ps.Close()
			return nil, err
		}
		idx, err := c.load(filepath.Join(packDir, base+".idx"), fi.Size())
		if errors.Is(err, os.ErrNotExist) {
			f.Close() // a pack still being installed: its idx comes first, so this is one being removed
			continue
		}
		if err != nil {
			f.Close()
			ps.Close()
			return nil, err
		}
		data, err := mapFile(f, fi.Size())
		f.Close()
		if err != nil {
			ps.Close()
			return nil, fmt.Errorf("map %s: %w", n, err)
		}
		ps.packs = append(ps.packs, &openPack{name: base, data: data, idx: idx})
	}
	// A stable order, so an object stored twice is always read from the same pack.
	sort.Slice(ps.packs, func(i, j int) bool { return ps.packs[i].name < ps.packs[j].name })
	return ps, nil
}

// Close unmaps the packs.
func (ps *PackSet) Close() {
	for _, p := range ps.packs {
		if p.data != nil {
			syscall.Munmap(p.data)
		}
	}
	ps.packs = nil
}

// find returns the pack and entry holding h.
func (ps *PackSet) find(h plumbing.Hash) (int, *idxEntry, bool) {
	for i, p := range ps.packs {
		if e, ok := p.idx.lookup(h); ok {
			return i, e, true
		}
	}
	return -1, nil, false
}

// entryHeader is the parsed header of a pack entry.
type entryHeader struct {
	typ      byte
	size     int64 // inflated size (of the delta, for deltas)
	hdrLen   int   // bytes of header, including a delta's base reference
	baseOff  int64 // OFS_DELTA: absolute offset of the base
	baseHash plumbing.Hash
}

// parseEntryHeader parses the entry at the start of b, which was read from
// offset off.
func parseEntryHeader(b []byte, off int64) (entryHeader, error) {
	var h entryHeader
	bad := errors.New("malformed pack entry header")
	if len(b) == 0 {
		return h, bad
	}
	c := b[0]
	h.typ = (c >> 4) & 7
	h.size = int64(c & 15)
	shift := uint(4)
	i := 1
	for c&0x80 != 0 {
		if i >= len(b) || shift > 56 {
			return h, bad
		}
		c = b[i]
		i++
		h.size |= int64(c&0x7f) << shift
		shift += 7
	}
	switch h.typ {
	case PackOfsDelta:
		if i >= len(b) {
			return h, bad
		}
		c = b[i]
		i++
		ofs := int64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= len(b) || ofs > 1<<55 {
				return h, bad
			}
			c = b[i]
			i++
			ofs = (ofs+1)<<7 | int64(c&0x7f)
		}
		if ofs <= 0 || ofs > off {
			return h, bad
		}
		h.baseOff = off - ofs
	case PackRefDelta:
		if i+20 > len(b) {
			return h, bad
		}
		copy(h.baseHash[:], b[i:i+20])
		i += 20
	case PackCommit, PackTree, PackBlob, PackTag:
	default:
		return h, bad
	}
	h.hdrLen = i
	return h, nil
}

// AppendEntryHeader appends a pack entry header for an object of type typ
// and inflated size.
func AppendEntryHeader(dst []byte, typ byte, size int64) []byte {
	c := typ<<4 | byte(size&15)
	size >>= 4
	for size > 0 {
		dst = append(dst, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	return append(dst, c)
}

// appendOfs appends an OFS_DELTA base distance.
func appendOfs(dst []byte, ofs int64) []byte {
	var buf [10]byte
	i := len(buf) - 1
	buf[i] = byte(ofs & 0x7f)
	for ofs >>= 7; ofs > 0; ofs >>= 7 {
		ofs--
		i--
		buf[i] = 0x80 | byte(ofs&0x7f)
	}
	return append(dst, buf[i:]...)
}

func packType(t plumbing.ObjectType) byte {
	switch t {
	case plumbing.CommitObject:
		return PackCommit
	case plumbing.TreeObject:
		return PackTree
	case plumbing.BlobObject:
		return PackBlob
	case plumbing.TagObject:
		return PackTag
	}
	return 0
}

// Drop forgets every index.
func (c *IdxCache) Drop() {
	c.lru.Purge()
}
