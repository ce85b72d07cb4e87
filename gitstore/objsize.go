package gitstore

import (
	"io"

	"github.com/go-git/go-git/v5/plumbing"
)

// Object sizes without inflating objects: the partial clone filter
// blob:limit=<n> compares them for every blob it reaches.

// size returns the size of object h, from its pack entry header (or, for
// a delta, the first bytes of the delta) when it is packed.
func (o *objectReader) size(h plumbing.Hash) (int64, error) {
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
		if hdr.typ != packOfsDelta && hdr.typ != packRefDelta {
			return hdr.size, nil
		}
		if n, ok := o.deltaResultSize(raw[hdr.hdrLen:]); ok {
			return n, nil
		}
	}
	_, b, err := o.read(h)
	return int64(len(b)), err
}

// deltaResultSize reads the size of the object a compressed delta builds:
// the second of the two varints that start the delta.
func (o *objectReader) deltaResultSize(z []byte) (int64, bool) {
	if err := o.resetZlib(z); err != nil {
		return 0, false
	}
	var head [20]byte
	n, _ := io.ReadFull(o.zr, head[:])
	b := head[:n]
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
