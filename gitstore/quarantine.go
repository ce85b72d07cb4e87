package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	gogitstorer "github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
)

// The objects of a push: its pack, kept in quarantine until a ref update
// accepts it, checked by fsck, and read through pushObjects together with
// the repository's own objects.

// ShortHash is the short form of h that push messages and refusals show;
// "nothing" for no commit.
func ShortHash(h plumbing.Hash) string {
	if h.IsZero() {
		return "nothing"
	}
	return h.String()[:12]
}

// isAncestor reports whether a is reachable from b (a fast-forward from a to b).
func isAncestor(objs *pushObjects, a, b plumbing.Hash) (bool, error) {
	seen := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{b}
	for len(queue) > 0 {
		h := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if h == a {
			return true, nil
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := object.GetCommit(objs, h)
		if err != nil {
			return false, err
		}
		queue = append(queue, c.ParentHashes...)
	}
	return false, nil
}

// quarantine is a received pack kept outside the object store until a ref
// update accepts it, so refused pushes leave nothing behind.
type quarantine struct {
	dir      string
	name     string // pack-<checksum>
	idx      *idxfile.MemoryIndex
	pack     *packfile.Packfile
	objects  map[plumbing.Hash]bool
	empty    bool
	checksum plumbing.Hash
}

// receivePackfile stores the pack of a push in quarantine and indexes it.
func (g *Git) receivePackfile(r *repo, src io.Reader) (*quarantine, error) {
	dir, err := os.MkdirTemp(r.path, "incoming-")
	if err != nil {
		return nil, err
	}
	q := &quarantine{dir: dir, objects: map[plumbing.Hash]bool{}}
	f, err := os.Create(filepath.Join(dir, "tmp.pack"))
	if err != nil {
		q.discard()
		return nil, err
	}
	n, err := io.Copy(f, io.LimitReader(src, g.opts.MaxPushBytes+1))
	if err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	if err != nil {
		q.discard()
		return nil, err
	}
	if n > g.opts.MaxPushBytes {
		q.discard()
		return nil, quire.Errorf(quire.ETOOLARGE, "the pack is larger than the push limit of %d bytes", g.opts.MaxPushBytes)
	}
	if n == 0 {
		q.empty = true
		return q, nil
	}
	if err := q.index(g.s.opts.Limits, g.opts.MaxPushInflated); err != nil {
		q.discard()
		return nil, err
	}
	return q, nil
}

// maxPushObject bounds any object of a push before it is inflated: blobs
// obey MaxFile (checked later with a clear message), trees and commits are
// small; this only stops a pack from making the server inflate gigabytes.
func maxPushObject(l quire.Limits) int64 {
	return max(l.MaxFile, 16<<20)
}

// index checks object sizes, parses the pack and builds its index.
func (q *quarantine) index(l quire.Limits, maxInflated int64) error {
	if err := prescan(filepath.Join(q.dir, "tmp.pack"), maxPushObject(l), maxInflated); err != nil {
		return err
	}
	idx, sum, err := odb.IndexPack(q.dir, "tmp.pack")
	if errors.Is(err, packfile.ErrReferenceDeltaNotFound) {
		return quire.Errorf(quire.EINVALID, "thin packs are not accepted (the server advertises no-thin)")
	}
	if err != nil {
		return quire.Errorf(quire.EINVALID, "invalid pack: %v", err)
	}
	q.idx, q.checksum, q.name = idx, sum, "pack-"+sum.String()
	it, err := idx.Entries()
	if err != nil {
		return err
	}
	for {
		e, err := it.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		q.objects[e.Hash] = true
	}
	it.Close()
	pf, err := osfs.New(q.dir).Open("tmp.pack")
	if err != nil {
		return err
	}
	q.pack = packfile.NewPackfile(idx, nil, pf, 0)
	return nil
}

// prescan reads every object header of the pack at path, and the sizes a
// delta declares, refusing objects larger than limit, and a pack whose
// objects add up to more than total, before anything is inflated into
// memory. It inflates each object once, streaming, into a counter that
// stops at the size the object declared: a header cannot understate what
// its data inflates to.
func prescan(path string, limit, total int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := packfile.NewScanner(struct{ io.Reader }{f}) // read once, forward
	_, count, err := sc.Header()
	if err != nil {
		return quire.Errorf(quire.EINVALID, "invalid pack: %v", err)
	}
	tooBig := func(n int64) error {
		return quire.Errorf(quire.ETOOLARGE, "the pack holds an object of %d bytes; the limit is %d", n, limit)
	}
	head := &deltaHead{}
	var sum int64
	for range count {
		oh, err := sc.NextObjectHeader()
		if err != nil {
			return quire.Errorf(quire.EINVALID, "invalid pack: %v", err)
		}
		if oh.Length > limit {
			return tooBig(oh.Length)
		}
		head.n, head.total, head.max = 0, 0, oh.Length
		if _, _, err := sc.NextObject(head); err != nil {
			if errors.Is(err, errOverDeclared) {
				return quire.Errorf(quire.EINVALID, "invalid pack: an object inflates to more than its declared %d bytes", oh.Length)
			}
			return quire.Errorf(quire.EINVALID, "invalid pack: %v", err)
		}
		size := oh.Length
		if oh.Type.IsDelta() {
			target, ok := odb.DeltaTargetSize(head.b[:head.n])
			if !ok {
				return quire.Errorf(quire.EINVALID, "invalid pack: a delta without its sizes")
			}
			if target > limit {
				return tooBig(target)
			}
			size = target
		}
		if sum += size; sum > total {
			return quire.Errorf(quire.ETOOLARGE, "the push inflates to more than %d bytes, the limit of one push: push fewer versions at a time", total).
				WithDetail("limit", total)
		}
	}
	return nil
}

// errOverDeclared stops prescan's inflation of an object at its declared
// size.
var errOverDeclared = errors.New("object larger than declared")

// deltaHead keeps the first bytes of an inflated delta, where its sizes
// are (odb.DeltaTargetSize).
// It also counts what it is given, failing past max.
type deltaHead struct {
	b          [odb.DeltaHeadLen]byte
	n          int
	total, max int64
}

func (d *deltaHead) Write(p []byte) (int, error) {
	d.n += copy(d.b[d.n:], p)
	if d.total += int64(len(p)); d.total > d.max {
		return 0, errOverDeclared
	}
	return len(p), nil
}

// install moves the quarantined pack into the repository at dir. The index
// goes first: go-git lists packs by their .pack file.
func (q *quarantine) install(dir string, fsync bool) error {
	if q.empty || len(q.objects) == 0 {
		return nil
	}
	packDir := filepath.Join(dir, "objects", "pack")
	if err := os.MkdirAll(packDir, 0o755); err != nil {
		return err
	}
	dst := filepath.Join(packDir, q.name)
	if _, err := os.Stat(dst + ".pack"); err == nil {
		return nil // the same pack was pushed before
	}
	idxTmp := filepath.Join(q.dir, "tmp.idx")
	f, err := os.Create(idxTmp)
	if err != nil {
		return err
	}
	if _, err := idxfile.NewEncoder(f).Encode(q.idx); err != nil {
		f.Close()
		return err
	}
	if err := odb.SyncClose(f, fsync); err != nil {
		return err
	}
	if fsync {
		if err := odb.SyncPath(filepath.Join(q.dir, "tmp.pack")); err != nil {
			return err
		}
	}
	if err := os.Rename(idxTmp, dst+".idx"); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(q.dir, "tmp.pack"), dst+".pack"); err != nil {
		os.Remove(dst + ".idx")
		return err
	}
	if fsync {
		return odb.SyncPath(dst + ".pack")
	}
	return nil
}

// packFsckError is an object of a pushed pack that git fsck refuses.
type packFsckError struct {
	typ  plumbing.ObjectType
	hash plumbing.Hash
	err  *odb.FsckError
}

func (e *packFsckError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.typ, ShortHash(e.hash), e.err)
}

// fsck checks every commit, tree and tag of the pack, reachable or not, as
// git receive-pack does with receive.fsckObjects (fsck.go), and reports the
// first one git fsck --strict would refuse. Blobs are not read: their
// rules are the path and content checks of pushChecker.
func (q *quarantine) fsck(ctx context.Context) (*packFsckError, error) {
	if q.pack == nil {
		return nil, nil
	}
	opts := odb.FsckOptions{NoGitmodules: true}
	for _, t := range []plumbing.ObjectType{plumbing.CommitObject, plumbing.TreeObject, plumbing.TagObject} {
		it, err := q.pack.GetByType(t)
		if err != nil {
			return nil, err
		}
		bad, err := fsckEach(ctx, it, t, opts)
		if err != nil || bad != nil {
			return bad, err
		}
	}
	return nil, nil
}

// fsckEach checks the objects of type t that it yields.
func fsckEach(ctx context.Context, it gogitstorer.EncodedObjectIter, t plumbing.ObjectType, opts odb.FsckOptions) (*packFsckError, error) {
	defer it.Close()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		obj, err := it.Next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		rd, err := obj.Reader()
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(rd)
		rd.Close()
		if err != nil {
			return nil, err
		}
		if e := odb.FsckObject(t, b, opts); e != nil {
			return &packFsckError{typ: t, hash: obj.Hash(), err: e}, nil
		}
	}
}

// unreached counts the objects of the pack that none of tips reaches: a
// push keeps nothing it does not use. The walk follows commits, trees and
// tags inside the pack only (what it reaches outside the pack is the
// repository's, whose closure is complete).
func (q *quarantine) unreached(ctx context.Context, tips []plumbing.Hash) (int, error) {
	if q == nil || q.pack == nil {
		return 0, nil
	}
	reached := make(map[plumbing.Hash]bool, len(q.objects))
	stack := append([]plumbing.Hash(nil), tips...)
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if reached[h] || !q.objects[h] {
			continue
		}
		reached[h] = true
		obj, err := q.pack.Get(h)
		if err != nil {
			return 0, err
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			c, err := object.DecodeCommit(nil, obj)
			if err != nil {
				return 0, err
			}
			stack = append(append(stack, c.TreeHash), c.ParentHashes...)
		case plumbing.TreeObject:
			t, err := object.DecodeTree(nil, obj)
			if err != nil {
				return 0, err
			}
			for _, e := range t.Entries {
				stack = append(stack, e.Hash)
			}
		case plumbing.TagObject:
			t, err := object.DecodeTag(nil, obj)
			if err != nil {
				return 0, err
			}
			stack = append(stack, t.Target)
		}
	}
	return len(q.objects) - len(reached), nil
}

// discard removes whatever is left of the quarantine.
func (q *quarantine) discard() {
	if q == nil {
		return
	}
	if q.pack != nil {
		q.pack.Close()
		q.pack = nil
	}
	os.RemoveAll(q.dir)
}

// pushObjects reads objects from the quarantined pack, then the repository.
type pushObjects struct {
	q *quarantine
	r *repo
}

var _ gogitstorer.EncodedObjectStorer = (*pushObjects)(nil)

func (o *pushObjects) inPack(h plumbing.Hash) bool {
	return o.q != nil && o.q.objects[h]
}

func (o *pushObjects) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (o *pushObjects) SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error) {
	return plumbing.ZeroHash, errors.New("read only")
}

func (o *pushObjects) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o.inPack(h) {
		obj, err := o.q.pack.Get(h)
		if err != nil {
			return nil, err
		}
		if t != plumbing.AnyObject && obj.Type() != t {
			return nil, plumbing.ErrObjectNotFound
		}
		return obj, nil
	}
	return o.r.st.EncodedObject(t, h)
}

func (o *pushObjects) IterEncodedObjects(plumbing.ObjectType) (gogitstorer.EncodedObjectIter, error) {
	return nil, errors.New("not supported")
}

func (o *pushObjects) HasEncodedObject(h plumbing.Hash) error {
	if o.inPack(h) {
		return nil
	}
	return o.r.st.HasEncodedObject(h)
}

func (o *pushObjects) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if o.inPack(h) {
		off, err := o.q.idx.FindOffset(h)
		if err != nil {
			return 0, err
		}
		return o.q.pack.GetSizeByOffset(off)
	}
	return o.r.st.EncodedObjectSize(h)
}

func (o *pushObjects) AddAlternate(string) error { return errors.New("not supported") }
