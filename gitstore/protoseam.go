package gitstore

import (
	"context"
	"errors"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
)

// The seam between the git wire protocol (package gitproto) and the
// repositories: what a fetch and a push need of an asset's repository,
// and nothing of how the protocol frames, negotiates or reports. gitproto
// declares the same methods as its Repository and Push interfaces.

// GitRepo is one request's view of an asset's repository. Close it.
type GitRepo struct {
	g   *Git
	a   *quire.Asset
	r   *repo
	ps  *odb.PackSet
	obj *odb.ObjectReader
}

// Open opens the repository of asset a for one request. With objects, its
// packs are opened too, for Has, Read, Size and WritePack; without, only
// Refs may be called (listing refs alone reads no pack index).
func (g *Git) Open(a *quire.Asset, objects bool) (*GitRepo, error) {
	r, err := g.s.assetRepo(a)
	if err != nil {
		return nil, err
	}
	gr := &GitRepo{g: g, a: a, r: r}
	if objects {
		if gr.ps, err = g.idx.OpenPacks(r.path); err != nil {
			return nil, err
		}
		gr.obj = odb.NewObjectReader(r.DB, gr.ps)
	}
	return gr, nil
}

// Close releases the packs Open opened.
func (gr *GitRepo) Close() {
	if gr.ps != nil {
		gr.ps.Close()
		gr.ps = nil
	}
}

// Refs lists the branches and tags under any of prefixes (every one
// without prefixes), sorted by name, tags not peeled, and the live commit
// (zero when nothing is live or no prefix matches main).
func (gr *GitRepo) Refs(prefixes []string) ([]Ref, plumbing.Hash, error) {
	return listRefs(gr.r, refMatcher(prefixes))
}

// Has reports whether the repository holds object h.
func (gr *GitRepo) Has(h plumbing.Hash) bool { return gr.obj.Has(h) }

// Read returns the type and content of object h. The content is valid
// until a later Read may evict it from the reader's cache; it is never
// changed.
func (gr *GitRepo) Read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return gr.obj.Read(h)
}

// Size returns the size of object h, reading no more of it than needed.
func (gr *GitRepo) Size(h plumbing.Hash) (int64, error) { return gr.obj.Size(h) }

// PackStats says how a pack was written.
type PackStats struct {
	Objects int // objects in the pack
	Reused  int // copied as stored, whole
	Deltas  int // copied as stored deltas
	Whole   int // compressed for the pack
}

// WritePack writes the pack of objs to w, copying stored objects and
// deltas as they are; ofsDelta says whether the client reads OFS_DELTA.
func (gr *GitRepo) WritePack(objs []plumbing.Hash, ofsDelta bool, w io.Writer) (PackStats, error) {
	pw, err := odb.WritePack(gr.g.zlib, gr.obj, objs, ofsDelta, w)
	if err != nil {
		return PackStats{}, err
	}
	return PackStats{Objects: pw.Objects(), Reused: pw.Reused, Deltas: pw.Deltas, Whole: pw.Whole}, nil
}

// CachedPack returns the pack cached under key and its object count.
func (gr *GitRepo) CachedPack(key string) ([]byte, int, bool) {
	e, ok := gr.g.packs.Get(key)
	if !ok {
		return nil, 0, false
	}
	return e.Pack, e.Objects, true
}

// CachePack keeps pack under key until the asset changes (or the cache
// needs the room); packs over GitOptions.PackCacheEntry are not kept.
func (gr *GitRepo) CachePack(key string, pack []byte, objects int) {
	gr.g.packs.Put(&odb.PackEntry{Key: key, AssetID: gr.a.ID, Pack: pack, Objects: objects})
}

// GitPush is one push into an asset's repository: its pack in quarantine
// and the checks and ref updates that may accept it. Close it.
type GitPush struct {
	g     *Git
	a     *quire.Asset
	r     *repo
	q     *quarantine
	objs  *pushObjects
	check *pushChecker
	// w is the write Lock begins: refs move through it, and its done
	// runs the change hooks once the lock is released.
	w write
}

// OpenPush opens the repository of asset a for one push.
func (g *Git) OpenPush(a *quire.Asset) (*GitPush, error) {
	r, err := g.s.assetRepo(a)
	if err != nil {
		return nil, err
	}
	p := &GitPush{g: g, a: a, r: r, objs: &pushObjects{r: r}}
	p.check = newPushChecker(g.s, p.objs)
	p.check.kind = a.Kind
	return p, nil
}

// Receive reads the pack of the push from src into quarantine, refusing
// one over GitOptions.MaxPushBytes, with an object over the size limits,
// thin or malformed. Its errors are quire errors whose message is the
// unpack status git prints.
func (p *GitPush) Receive(src io.Reader) error {
	q, err := p.g.receivePackfile(p.r, src)
	if err != nil {
		return err
	}
	p.q, p.objs.q = q, q
	return nil
}

// FsckError is an object of a pushed pack that git fsck --strict refuses.
type FsckError struct {
	Type plumbing.ObjectType
	Hash plumbing.Hash
	Err  error // what is wrong, as git fsck says it ("badDate: ...")
}

func (e *FsckError) Error() string {
	return e.Type.String() + " " + ShortHash(e.Hash) + ": " + e.Err.Error()
}

// Fsck checks every commit, tree and tag of the received pack, reachable
// or not, and returns the first one git would refuse (nil for none).
func (p *GitPush) Fsck(ctx context.Context) (*FsckError, error) {
	bad, err := p.q.fsck(ctx)
	if bad == nil || err != nil {
		return nil, err
	}
	return &FsckError{Type: bad.typ, Hash: bad.hash, Err: bad.err}, nil
}

// Unreached counts the objects of the received pack that none of tips
// (the new commits of every ref the push updates) reaches; the push is
// refused unless it is 0, so no object the refs do not use is kept.
func (p *GitPush) Unreached(ctx context.Context, tips []plumbing.Hash) (int, error) {
	return p.q.unreached(ctx, tips)
}

// Check applies the API's rules to every commit reachable from tip that
// the repository does not hold yet: complete, only regular files whose
// paths and contents pass package valid, within the file and version
// limits. Its errors are quire errors whose message git prints.
func (p *GitPush) Check(ctx context.Context, tip plumbing.Hash) error {
	return p.check.commits(ctx, tip)
}

// Lock begins the push's write of the repository (the store's write
// path, gitstore/write.go): Draft, IsAncestor, Install and Move are called
// holding its lock, and unlock releases it, then tells the change hooks
// (caches, the repacker) when a draft moved.
func (p *GitPush) Lock() (unlock func(), err error) {
	if p.w, err = p.g.s.beginRepo(p.r, p.a); err != nil {
		return nil, err
	}
	return p.w.done, nil
}

// Draft returns the state of version n and its commit; an ENOTFOUND error
// when there is no version n.
func (p *GitPush) Draft(n int) (quire.VersionState, plumbing.Hash, error) {
	v, err := p.r.state(n)
	if err != nil {
		return "", plumbing.ZeroHash, err
	}
	return v.state, v.commit, nil
}

// IsAncestor reports whether commit a is reachable from b (a fast-forward
// from a to b), reading the pushed objects too.
func (p *GitPush) IsAncestor(a, b plumbing.Hash) (bool, error) {
	return isAncestor(p.objs, a, b)
}

// Install moves the received pack into the repository.
func (p *GitPush) Install() error {
	if p.q == nil {
		return nil
	}
	if err := p.q.install(p.r.path, p.g.s.opts.Fsync); err != nil {
		return err
	}
	p.r.st.Reindex()
	return nil
}

// ErrRefChanged is Move's error when the draft is no longer at old.
var ErrRefChanged = errors.New("ref changed concurrently")

// Move records the push of draft n from old to new on the versions log as
// by's, then moves the draft's ref from old to new (compare-and-swap),
// taking the record back when the ref does not move; once it moved, the
// draft's open review records the head move, as for an API write.
func (p *GitPush) Move(by quire.Actor, n int, old, new plumbing.Hash) error {
	undo, err := p.g.recordPush(p.r, by, p.objs, n, old, new)
	if err != nil {
		return err
	}
	err = p.w.cas(DraftRef(n), old, new)
	if err != nil {
		undo()
	}
	if errors.Is(err, storage.ErrReferenceHasChanged) {
		return ErrRefChanged
	}
	if err == nil {
		p.g.s.moveReviewHead(&p.w, by, &vstate{n: n, state: quire.StateDraft, commit: new})
	}
	return err
}

// Close removes whatever is left of the quarantine.
func (p *GitPush) Close() { p.q.discard() }
