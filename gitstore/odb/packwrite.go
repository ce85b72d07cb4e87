package odb

import (
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"sort"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// PackWriter writes a pack of given objects. Objects stored in a pack are
// copied as they are, deltas included when their base goes into the same
// output; anything else (loose objects, deltas whose base the client
// already has) is written whole. It never computes a delta: that is the
// repacker's job, done once instead of per clone.
type PackWriter struct {
	zlib     *sync.Pool
	obj      *ObjectReader
	ps       *PackSet
	ofsDelta bool // the client accepts OFS_DELTA entries

	w       io.Writer
	sum     hash.Hash
	off     int64
	written map[plumbing.Hash]int64 // object -> offset in the output
	hdr     []byte
	zbuf    zlibBuffer

	// Reused entries were copied as stored, Deltas of them as deltas;
	// Whole objects were compressed anew.
	Reused, Deltas, Whole int
}

// NewZlibPool returns a pool of compressors for objects written whole.
// Fast compression: a clone waits for it.
func NewZlibPool() *sync.Pool {
	return &sync.Pool{New: func() any {
		w, _ := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
		return w
	}}
}

type zlibBuffer struct{ b []byte }

func (z *zlibBuffer) Write(p []byte) (int, error) {
	z.b = append(z.b, p...)
	return len(p), nil
}

func (pw *PackWriter) write(b []byte) error {
	if _, err := pw.w.Write(b); err != nil {
		return err
	}
	pw.sum.Write(b)
	pw.off += int64(len(b))
	return nil
}

// WritePack writes the pack of objs to w.
func WritePack(zp *sync.Pool, obj *ObjectReader, objs []plumbing.Hash, ofsDelta bool, w io.Writer) (*PackWriter, error) {
	ps := obj.ps
	pw := &PackWriter{
		zlib: zp, obj: obj, ps: ps, ofsDelta: ofsDelta, w: w, sum: sha1.New(),
		written: make(map[plumbing.Hash]int64, len(objs)),
	}
	packed := make([][]*idxEntry, len(ps.packs))
	var loose []plumbing.Hash
	want := make(map[plumbing.Hash]bool, len(objs))
	for _, h := range objs {
		if want[h] {
			continue
		}
		want[h] = true
		if i, e, ok := ps.find(h); ok {
			packed[i] = append(packed[i], e)
		} else {
			loose = append(loose, h)
		}
	}
	var head [12]byte
	copy(head[:], "PACK")
	binary.BigEndian.PutUint32(head[4:], 2)
	binary.BigEndian.PutUint32(head[8:], uint32(len(want)))
	if err := pw.write(head[:]); err != nil {
		return pw, err
	}
	for _, h := range loose {
		if err := pw.writeWhole(h); err != nil {
			return pw, err
		}
	}
	for i, entries := range packed {
		sort.Slice(entries, func(a, b int) bool { return entries[a].off < entries[b].off })
		for _, e := range entries {
			if err := pw.copyEntry(ps.packs[i], e); err != nil {
				return pw, err
			}
		}
	}
	if err := pw.write(pw.sum.Sum(nil)); err != nil {
		return pw, err
	}
	return pw, nil
}

// copyEntry copies one stored entry, rewriting a delta's base reference
// for the output, or writes the object whole when its base is not sent.
func (pw *PackWriter) copyEntry(p *openPack, e *idxEntry) error {
	raw, err := p.slice(e.off, e.end)
	if err != nil {
		return err
	}
	if crc32.ChecksumIEEE(raw) != e.crc {
		// A damaged entry is not passed on; go-git will report the damage.
		return pw.writeWhole(e.hash)
	}
	h, err := parseEntryHeader(raw, e.off)
	if err != nil {
		return pw.writeWhole(e.hash)
	}
	data := raw[h.hdrLen:]
	start := pw.off
	switch h.typ {
	case PackOfsDelta, PackRefDelta:
		base := h.baseHash
		if h.typ == PackOfsDelta {
			be, ok := p.idx.at(h.baseOff)
			if !ok {
				return pw.writeWhole(e.hash)
			}
			base = be.hash
		}
		baseOff, ok := pw.written[base]
		if !ok {
			// The base is not sent (the client has it) or not yet written.
			return pw.writeWhole(e.hash)
		}
		if pw.ofsDelta {
			pw.hdr = AppendEntryHeader(pw.hdr[:0], PackOfsDelta, h.size)
			pw.hdr = appendOfs(pw.hdr, start-baseOff)
		} else {
			pw.hdr = AppendEntryHeader(pw.hdr[:0], PackRefDelta, h.size)
			pw.hdr = append(pw.hdr, base[:]...)
		}
		if err := pw.write(pw.hdr); err != nil {
			return err
		}
		pw.Deltas++
	default:
		if err := pw.write(raw[:h.hdrLen]); err != nil {
			return err
		}
	}
	if err := pw.write(data); err != nil {
		return err
	}
	pw.Reused++
	pw.written[e.hash] = start
	return nil
}

// Objects is the number of objects written.
func (pw *PackWriter) Objects() int { return len(pw.written) }

// writeWhole writes h as a full (non-delta) object.
func (pw *PackWriter) writeWhole(h plumbing.Hash) error {
	if _, ok := pw.written[h]; ok {
		return nil
	}
	t, data, err := pw.obj.Read(h)
	if err != nil {
		return fmt.Errorf("object %s: %w", h, err)
	}
	typ := packType(t)
	if typ == 0 {
		return errors.New("unexpected object type " + t.String())
	}
	pw.zbuf.b = pw.zbuf.b[:0]
	zw := pw.zlib.Get().(*zlib.Writer)
	zw.Reset(&pw.zbuf)
	_, err = zw.Write(data)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	pw.zlib.Put(zw)
	if err != nil {
		return err
	}
	start := pw.off
	pw.hdr = AppendEntryHeader(pw.hdr[:0], typ, int64(len(data)))
	if err := pw.write(pw.hdr); err != nil {
		return err
	}
	if err := pw.write(pw.zbuf.b); err != nil {
		return err
	}
	pw.Whole++
	pw.written[h] = start
	return nil
}
