package odb

import (
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// ObjectReader reads objects for one upload-pack request straight from the
// open packs (inflating entries and applying deltas itself, with a small
// cache of delta bases) and loose files, falling back to go-git's storer
// for anything else. Walking the history of a clone reads thousands of
// trees; go-git opens the pack file anew for each object.
type ObjectReader struct {
	r  *DB
	ps *PackSet

	zr    io.ReadCloser
	cache map[baseKey]cachedObject
	order []baseKey
	bytes int
}

type cachedObject struct {
	t    plumbing.ObjectType
	data []byte
}

type baseKey struct {
	pack int
	off  int64
}

// readerCacheBytes bounds the delta bases one request keeps.
const readerCacheBytes = 32 << 20

func NewObjectReader(r *DB, ps *PackSet) *ObjectReader {
	return &ObjectReader{r: r, ps: ps, cache: map[baseKey]cachedObject{}}
}

var errNotObject = errors.New("not an object")

// Read returns the type and content of h. The content may be shared with
// the cache: callers must not modify it.
func (o *ObjectReader) Read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	if i, e, ok := o.ps.find(h); ok {
		t, b, err := o.readPacked(i, e.off)
		if err == nil {
			return t, b, nil
		}
	}
	if t, b, err := o.readLoose(h); err == nil {
		return t, b, nil
	}
	obj, err := o.r.st.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	return obj.Type(), b, err
}

// Has reports whether the repository holds h, as of the packs opened for
// this request and the loose objects now. It never reloads indexes: a
// have it misses only makes negotiation slower.
func (o *ObjectReader) Has(h plumbing.Hash) bool {
	if _, _, ok := o.ps.find(h); ok {
		return true
	}
	hex := h.String()
	_, err := os.Stat(filepath.Join(o.r.st.dir, "objects", hex[:2], hex[2:]))
	return err == nil
}

// readPacked reads the entry at off of pack i, resolving deltas.
func (o *ObjectReader) readPacked(i int, off int64) (plumbing.ObjectType, []byte, error) {
	key := baseKey{i, off}
	if c, ok := o.cache[key]; ok {
		return c.t, c.data, nil
	}
	p := o.ps.packs[i]
	e, ok := p.idx.at(off)
	if !ok {
		return plumbing.InvalidObject, nil, errNotObject
	}
	raw, err := p.slice(e.off, e.end)
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	hdr, err := parseEntryHeader(raw, off)
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	data, err := o.inflate(raw[hdr.hdrLen:], hdr.size)
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("inflate %s at %d: %w", p.name, off, err)
	}
	var t plumbing.ObjectType
	switch hdr.typ {
	case PackOfsDelta, PackRefDelta:
		var base []byte
		if hdr.typ == PackOfsDelta {
			if t, base, err = o.readPacked(i, hdr.baseOff); err != nil {
				return plumbing.InvalidObject, nil, err
			}
		} else if t, base, err = o.Read(hdr.baseHash); err != nil {
			return plumbing.InvalidObject, nil, err
		}
		if data, err = packfile.PatchDelta(base, data); err != nil {
			return plumbing.InvalidObject, nil, err
		}
	default:
		t = plumbing.ObjectType(hdr.typ)
	}
	o.remember(key, t, data)
	return t, data, nil
}

func (o *ObjectReader) remember(k baseKey, t plumbing.ObjectType, data []byte) {
	if len(data) > readerCacheBytes/4 {
		return
	}
	if _, ok := o.cache[k]; ok {
		return
	}
	for o.bytes+len(data) > readerCacheBytes && len(o.order) > 0 {
		old := o.order[0]
		o.order = o.order[1:]
		o.bytes -= len(o.cache[old].data)
		delete(o.cache, old)
	}
	o.cache[k] = cachedObject{t, data}
	o.order = append(o.order, k)
	o.bytes += len(data)
}

func (o *ObjectReader) inflate(b []byte, size int64) ([]byte, error) {
	if size < 0 || size > 1<<30 {
		return nil, errors.New("object too large")
	}
	if err := o.resetZlib(b); err != nil {
		return nil, err
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(o.zr, out); err != nil {
		return nil, err
	}
	return out, nil
}

// resetZlib points the reader's inflater at the zlib stream b.
func (o *ObjectReader) resetZlib(b []byte) error {
	if o.zr == nil {
		zr, err := zlib.NewReader(bytes.NewReader(b))
		if err != nil {
			return err
		}
		o.zr = zr
		return nil
	}
	return o.zr.(zlib.Resetter).Reset(bytes.NewReader(b), nil)
}

// Size returns the size of object h, from its pack entry header (or, for
// a delta, the first bytes of the delta) when it is packed.
func (o *ObjectReader) Size(h plumbing.Hash) (int64, error) {
	if i, e, ok := o.ps.find(h); ok {
		p := o.ps.packs[i]
		raw, err := p.slice(e.off, e.end)
		if err != nil {
			return 0, err
		}
		hdr, err := parseEntryHeader(raw, e.off)
		if err != nil {
			return 0, err
		}
		if hdr.typ != PackOfsDelta && hdr.typ != PackRefDelta {
			return hdr.size, nil
		}
		if n, ok := o.deltaResultSize(raw[hdr.hdrLen:]); ok {
			return n, nil
		}
	}
	_, b, err := o.Read(h)
	return int64(len(b)), err
}

// deltaResultSize reads the size of the object a compressed delta builds.
func (o *ObjectReader) deltaResultSize(z []byte) (int64, bool) {
	if err := o.resetZlib(z); err != nil {
		return 0, false
	}
	var head [DeltaHeadLen]byte
	n, _ := io.ReadFull(o.zr, head[:])
	return DeltaTargetSize(head[:n])
}

// DeltaHeadLen is how many bytes of an inflated delta DeltaTargetSize
// needs at most: two varints of up to 10 bytes.
const DeltaHeadLen = 20

// DeltaTargetSize reads the size of the object a delta builds from the
// first bytes of the inflated delta: the second of the two varints that
// start it (the first is the base's size). It is false when b ends first.
func DeltaTargetSize(b []byte) (int64, bool) {
	varint := func() (int64, bool) {
		var v int64
		for shift := uint(0); len(b) > 0 && shift < 63; shift += 7 {
			c := b[0]
			b = b[1:]
			v |= int64(c&0x7f) << shift
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	if _, ok := varint(); !ok {
		return 0, false
	}
	return varint()
}

// readLoose reads a loose object file.
func (o *ObjectReader) readLoose(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	hex := h.String()
	b, err := os.ReadFile(filepath.Join(o.r.st.dir, "objects", hex[:2], hex[2:]))
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	if err := o.resetZlib(b); err != nil {
		return plumbing.InvalidObject, nil, err
	}
	all, err := io.ReadAll(o.zr)
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	nul := bytes.IndexByte(all, 0)
	sp := bytes.IndexByte(all, ' ')
	if nul < 0 || sp < 0 || sp > nul {
		return plumbing.InvalidObject, nil, errNotObject
	}
	t, err := plumbing.ParseObjectType(string(all[:sp]))
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	size, err := strconv.Atoi(string(all[sp+1 : nul]))
	if err != nil || size != len(all)-nul-1 {
		return plumbing.InvalidObject, nil, errNotObject
	}
	return t, all[nul+1:], nil
}

// ParseHash parses a full hexadecimal object id; go-git's NewHash accepts
// anything and gives a zero or partial hash, which walks must not take.
func ParseHash(s string) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(s) != 2*len(h) {
		return plumbing.ZeroHash, false
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return plumbing.ZeroHash, false
	}
	return h, true
}
