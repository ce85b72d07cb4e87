package odb

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// A batch keeps the objects a write makes in memory and stores them as
// one pack when the write is done (Flush), instead of one loose object
// file each: a write of n objects then costs two files, two renames and
// (with fsync) three syncs, not n of each. Reads through the batch's DB
// see its objects at once; no one else does until Flush, and no ref may
// name them before it. A crash before Flush's last rename leaves only a
// temporary directory (incoming-*, cleared by the next repack).

// batch is the objects of a write not yet stored, in the order written.
type batch struct {
	objs  map[plumbing.Hash]plumbing.EncodedObject
	order []plumbing.Hash
}

// Batch returns a DB over the same repository whose writes are kept in
// memory until Flush stores them as one pack. It is for one writer, under
// the repository's write lock.
func (r *DB) Batch() *DB {
	return &DB{st: r.st, batch: &batch{objs: map[plumbing.Hash]plumbing.EncodedObject{}}}
}

// Has reports whether the repository (or the batch) holds object h, as
// far as the pack indexes loaded say: it is for a writer deciding what
// to store, for whom an object in a pack the loaded indexes do not list
// yet (a recent batch's, a concurrent repack's) is at worst stored
// twice, until the next repack keeps one.
func (r *DB) Has(h plumbing.Hash) bool {
	if r.batch != nil {
		if _, ok := r.batch.objs[h]; ok {
			return true
		}
	}
	return r.st.hasIndexed(h)
}

// Store stores an object read elsewhere (a copy from another repository
// of the store) unless the repository has it.
func (r *DB) Store(o plumbing.EncodedObject) (plumbing.Hash, error) {
	if _, mem := o.(*plumbing.MemoryObject); r.batch != nil && !mem {
		// Read now: the object may live in a pack a repack retires
		// before Flush.
		rd, err := o.Reader()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		m := &plumbing.MemoryObject{}
		m.SetType(o.Type())
		_, err = io.Copy(m, rd)
		rd.Close()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if m.Hash() != o.Hash() {
			return plumbing.ZeroHash, fmt.Errorf("object %s reads as %s", o.Hash(), m.Hash())
		}
		o = m
	}
	return r.storeObject(o)
}

// pend adds o to the batch unless the repository or the batch has it.
func (r *DB) pend(o plumbing.EncodedObject) (plumbing.Hash, error) {
	h := o.Hash()
	if r.Has(h) {
		return h, nil
	}
	r.batch.objs[h] = o
	r.batch.order = append(r.batch.order, h)
	return h, nil
}

// pending is the batch's object h, if it has one.
func (r *DB) pending(h plumbing.Hash) (plumbing.EncodedObject, bool) {
	if r.batch == nil {
		return nil, false
	}
	o, ok := r.batch.objs[h]
	return o, ok
}

// Flush stores the batch's objects as one pack and its index: both
// written and synced in a temporary directory of the repository, then
// renamed into objects/pack, the index first (go-git and git list packs
// by their .pack file), so the pack is seen whole or not at all. It
// returns how many objects it stored; the batch is empty after it.
func (r *DB) Flush() (int, error) {
	b := r.batch
	if b == nil || len(b.order) == 0 {
		return 0, nil
	}
	n := len(b.order)
	if err := r.flush(b); err != nil {
		return 0, fmt.Errorf("write pack of %d objects: %w", n, err)
	}
	// No reindex: go-git would reread every pack index of the
	// repository (hundreds of small reads each) on the next lookup. A
	// reader that misses reindexes then (Storer.EncodedObject), and the
	// objects just written are in the shared cache meanwhile.
	for _, h := range b.order {
		r.st.objects.Put(b.objs[h])
	}
	r.batch = &batch{objs: map[plumbing.Hash]plumbing.EncodedObject{}}
	return n, nil
}

func (r *DB) flush(b *batch) error {
	dir := r.st.dir
	packDir := filepath.Join(dir, "objects", "pack")
	if err := os.MkdirAll(packDir, 0o755); err != nil {
		return err
	}
	pack, iw, err := encodePack(b)
	if err != nil {
		return err
	}
	idx, err := iw.Index()
	if err != nil {
		return err
	}
	var ib bytes.Buffer
	if _, err := idxfile.NewEncoder(&ib).Encode(idx); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, "incoming-batch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for name, data := range map[string][]byte{"tmp.pack": pack, "tmp.idx": ib.Bytes()} {
		f, err := os.OpenFile(filepath.Join(tmp, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
		if err != nil {
			return err
		}
		if err := WriteSyncClose(f, data, r.st.fsync); err != nil {
			return err
		}
	}
	dst := filepath.Join(packDir, "pack-"+plumbing.Hash(idx.PackfileChecksum).String())
	if _, err := os.Stat(dst + ".pack"); err == nil {
		return r.syncExistingPack(dst)
	}
	if err := os.Rename(filepath.Join(tmp, "tmp.idx"), dst+".idx"); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(tmp, "tmp.pack"), dst+".pack"); err != nil {
		os.Remove(dst + ".idx")
		return err
	}
	if r.st.fsync {
		return SyncDirs(dir, packDir)
	}
	return nil
}

// syncExistingPack makes a pack of the same objects written before (by a
// write that failed after it) durable before a ref names its objects.
func (r *DB) syncExistingPack(base string) error {
	if !r.st.fsync {
		return nil
	}
	for _, ext := range []string{".idx", ".pack"} {
		if err := SyncPath(base + ext); err != nil {
			return err
		}
	}
	return SyncDirs(r.st.dir, filepath.Dir(base))
}

// encodePack writes the batch's objects whole (no deltas: a batch is a
// handful of new objects) into a version 2 pack, and indexes them as it
// goes.
func encodePack(b *batch) ([]byte, *idxfile.Writer, error) {
	var out bytes.Buffer
	var head [12]byte
	copy(head[:], "PACK")
	binary.BigEndian.PutUint32(head[4:], 2)
	binary.BigEndian.PutUint32(head[8:], uint32(len(b.order)))
	out.Write(head[:])
	iw := new(idxfile.Writer)
	iw.OnHeader(uint32(len(b.order)))
	zw := zlibFast.Get().(*zlib.Writer)
	defer zlibFast.Put(zw)
	var hdr []byte
	for _, h := range b.order {
		o := b.objs[h]
		start := out.Len()
		hdr = AppendEntryHeader(hdr[:0], packType(o.Type()), o.Size())
		out.Write(hdr)
		rd, err := o.Reader()
		if err != nil {
			return nil, nil, err
		}
		zw.Reset(&out)
		_, err = io.Copy(zw, rd)
		rd.Close()
		if err == nil {
			err = zw.Close()
		}
		if err != nil {
			return nil, nil, err
		}
		iw.Add(h, uint64(start), crc32.ChecksumIEEE(out.Bytes()[start:]))
	}
	sum := sha1.Sum(out.Bytes())
	out.Write(sum[:])
	if err := iw.OnFooter(plumbing.Hash(sum)); err != nil {
		return nil, nil, err
	}
	return out.Bytes(), iw, nil
}
