package gitstore

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// objectReader reads objects for one upload-pack request straight from the
// open packs (inflating entries and applying deltas itself, with a small
// cache of delta bases) and loose files, falling back to go-git's storer
// for anything else. Walking the history of a clone reads thousands of
// trees; go-git opens the pack file anew for each object.
type objectReader struct {
	r  *repo
	ps *packSet

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

func newObjectReader(r *repo, ps *packSet) *objectReader {
	return &objectReader{r: r, ps: ps, cache: map[baseKey]cachedObject{}}
}

var errNotObject = errors.New("not an object")

// read returns the type and content of h. The content may be shared with
// the cache: callers must not modify it.
func (o *objectReader) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
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

// has reports whether the repository holds h, as of the packs opened for
// this request and the loose objects now. It never reloads indexes: a
// have it misses only makes negotiation slower.
func (o *objectReader) has(h plumbing.Hash) bool {
	if _, _, ok := o.ps.find(h); ok {
		return true
	}
	hex := h.String()
	_, err := os.Stat(filepath.Join(o.r.path, "objects", hex[:2], hex[2:]))
	return err == nil
}

// readPacked reads the entry at off of pack i, resolving deltas.
func (o *objectReader) readPacked(i int, off int64) (plumbing.ObjectType, []byte, error) {
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
	case packOfsDelta, packRefDelta:
		var base []byte
		if hdr.typ == packOfsDelta {
			if t, base, err = o.readPacked(i, hdr.baseOff); err != nil {
				return plumbing.InvalidObject, nil, err
			}
		} else if t, base, err = o.read(hdr.baseHash); err != nil {
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

func (o *objectReader) remember(k baseKey, t plumbing.ObjectType, data []byte) {
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

func (o *objectReader) inflate(b []byte, size int64) ([]byte, error) {
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
func (o *objectReader) resetZlib(b []byte) error {
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

// readLoose reads a loose object file.
func (o *objectReader) readLoose(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	hex := h.String()
	b, err := os.ReadFile(filepath.Join(o.r.path, "objects", hex[:2], hex[2:]))
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
