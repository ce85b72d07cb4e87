package gitstore

import (
	"context"
	"github.com/quire/quire/gitstore/odb"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quire/quire"
)

// GitOptions configures the git protocol service.
type GitOptions struct {
	// PackCacheBytes bounds the memory held by cached clone packs.
	PackCacheBytes int64
	// PackCacheEntry is the largest pack kept in the cache.
	PackCacheEntry int64
	// RepackPacks triggers a background repack of a repository holding
	// more pack files than this (every push adds one).
	RepackPacks int
	// RepackLoose triggers a repack of a repository holding about this many
	// loose objects (every API write adds some).
	RepackLoose int
	// RepackDelay lets a burst of writes settle before a repack.
	RepackDelay time.Duration
	// RepackDeltaBytes bounds the repositories repacked with delta search,
	// which holds every object in memory; larger ones are streamed into
	// one pack, keeping the deltas they have and computing none.
	RepackDeltaBytes int64
	// MaxPushBytes bounds the pack of one push.
	MaxPushBytes int64
	// MaxRequestBytes bounds an upload-pack request (wants and haves).
	MaxRequestBytes int64
	// OnError, when set, hears about failures nobody waits for (background
	// repacks, a client gone mid-pack).
	OnError func(op string, err error)
}

// Validate fills in defaults.
func (o *GitOptions) Validate(l quire.Limits) error {
	if o.PackCacheBytes == 0 {
		o.PackCacheBytes = 64 << 20
	}
	if o.PackCacheEntry == 0 {
		o.PackCacheEntry = 16 << 20
	}
	if o.RepackPacks <= 0 {
		o.RepackPacks = 4
	}
	if o.RepackLoose <= 0 {
		o.RepackLoose = 256
	}
	if o.RepackDelay <= 0 {
		o.RepackDelay = 2 * time.Second
	}
	if o.RepackDeltaBytes <= 0 {
		o.RepackDeltaBytes = 64 << 20
	}
	if o.MaxPushBytes <= 0 {
		// A push may carry several versions' worth of history.
		o.MaxPushBytes = 8*l.MaxVersionBytes + l.MaxFile
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = 8 << 20
	}
	if o.OnError == nil {
		o.OnError = func(string, error) {}
	}
	return nil
}

// Git serves asset repositories over git's smart protocol (stateless, as
// smart HTTP carries it). It implements quire.GitService:
//
//   - upload-pack (clone, fetch) decodes the whole have/done negotiation,
//     answers ACK/NAK per round, supports shallow requests (deepen N) and
//     builds packs by copying stored objects and deltas as they are on disk
//     (deltas are computed once, by the background repack, not per clone);
//     packs for a set of wanted tips with no haves are cached in memory;
//   - receive-pack (push) quarantines the pack, checks every new commit
//     against the API's path and size rules, then under the repository's
//     write lock compare-and-swaps draft branches, fast-forward only;
//   - a background repacker folds loose objects and pushed packs into one
//     pack with deltas.
type Git struct {
	s      *Store
	opts   GitOptions
	packs  *odb.PackCache
	idx    *odb.IdxCache
	repack *repacker
	zlib   *sync.Pool
}

// NewGit returns the git service of store s. Close stops its background work.
func NewGit(s *Store, opts GitOptions) *Git {
	opts.Validate(s.opts.Limits)
	g := &Git{
		s:     s,
		opts:  opts,
		packs: odb.NewPackCache(opts.PackCacheBytes, opts.PackCacheEntry),
		idx:   odb.NewIdxCache(256),
		zlib:  odb.NewZlibPool(),
	}
	g.repack = newRepacker(g)
	s.OnChange(func(kind quire.Kind, assetID string) {
		a := &quire.Asset{Kind: kind, ID: assetID}
		g.packs.DropAsset(assetID)
		// The project id is not known here; the repacker finds the path.
		g.repack.touchAsset(a)
	})
	s.onSystemChange(g.repack.touchSystem)
	return g
}

// Close stops the background repacker, waiting for a repack in progress.
func (g *Git) Close() error {
	g.repack.close()
	return nil
}

var _ quire.GitService = (*Git)(nil)

// Capabilities. No thin packs either way: go-git cannot resolve deltas
// against objects outside a pack, and a full pack keeps the server simple.
const (
	gitAgent       = "agent=quire/1"
	uploadPackCaps = "multi_ack multi_ack_detailed no-done side-band side-band-64k ofs-delta shallow deepen-relative no-progress include-tag allow-tip-sha1-in-want allow-reachable-sha1-in-want filter " + gitAgent
	// report-status-v2 is not offered: quire never rewrites a pushed ref.
	receivePackCaps = "report-status delete-refs side-band-64k quiet atomic ofs-delta no-thin " + gitAgent
)

// advRef is one advertised ref.
type advRef struct {
	name   string
	hash   plumbing.Hash
	peeled plumbing.Hash // the commit an annotated tag points to; zero otherwise
}

// refState is what a repository advertises: the refs clients may see
// (branches and tags; refs/quire/* stays hidden) and the live commit.
type refState struct {
	refs []advRef
	head plumbing.Hash // main, or zero when nothing is live
	tips map[plumbing.Hash]bool
}

// fingerprint identifies the advertised state, for the pack cache.
func (st *refState) fingerprint() string {
	var b strings.Builder
	for _, r := range st.refs {
		b.WriteString(r.name)
		b.WriteByte(' ')
		b.WriteString(r.hash.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// visibleRef reports whether clients see ref name.
func visibleRef(name string) bool {
	return strings.HasPrefix(name, "refs/heads/") || strings.HasPrefix(name, "refs/tags/")
}

// readRefs lists the advertised refs of wk's repository, sorted by name,
// with tags peeled.
func (g *Git) readRefs(wk *walker) (*refState, error) {
	refs, head, err := listRefs(wk.r, nil)
	if err != nil {
		return nil, err
	}
	st := &refState{refs: refs, head: head, tips: make(map[plumbing.Hash]bool, len(refs))}
	for i := range st.refs {
		ref := &st.refs[i]
		st.tips[ref.hash] = true
		if !strings.HasPrefix(ref.name, "refs/tags/") {
			continue
		}
		peeled, _, err := wk.peel(ref.hash, nil)
		if err != nil {
			return nil, err
		}
		if peeled != ref.hash {
			ref.peeled = peeled
			st.tips[peeled] = true
		}
	}
	return st, nil
}

func sortRefs(refs []advRef) {
	sort.Slice(refs, func(i, j int) bool { return refs[i].name < refs[j].name })
}

// gitRepo opens the repository of asset a.
func (g *Git) gitRepo(a *quire.Asset) (*repo, error) {
	return g.s.assetRepo(a)
}

// AdvertiseRefs writes the smart-HTTP info/refs body of service for a:
// the v0 ref advertisement, or for upload-pack over protocol 2 the v2
// capabilities (the refs are then listed by the ls-refs command).
func (g *Git) AdvertiseRefs(ctx context.Context, a *quire.Asset, service string, protocol int, w io.Writer) error {
	var caps string
	switch service {
	case quire.GitUploadPack:
		caps = uploadPackCaps
	case quire.GitReceivePack:
		caps = receivePackCaps
	default:
		return quire.Errorf(quire.EINVALID, "unknown git service %q", service)
	}
	r, err := g.gitRepo(a)
	if err != nil {
		return err
	}
	if service == quire.GitUploadPack && protocol == 2 {
		return advertiseV2(w)
	}
	ps, err := g.idx.OpenPacks(r.path)
	if err != nil {
		return err
	}
	defer ps.Close()
	st, err := g.readRefs(newWalker(ctx, r, ps))
	if err != nil {
		return err
	}
	pw := &pktWriter{w: w}
	pw.line("# service=%s", service)
	pw.flush()
	first := true
	emit := func(h plumbing.Hash, name string) {
		if first {
			c := caps
			if service == quire.GitUploadPack && !st.head.IsZero() {
				c += " symref=HEAD:" + mainRef.String()
			}
			pw.line("%s %s\x00%s", h, name, c)
			first = false
			return
		}
		pw.line("%s %s", h, name)
	}
	if service == quire.GitUploadPack && !st.head.IsZero() {
		emit(st.head, "HEAD")
	}
	for _, ref := range st.refs {
		emit(ref.hash, ref.name)
		if !ref.peeled.IsZero() && service == quire.GitUploadPack {
			pw.line("%s %s^{}", ref.peeled, ref.name)
		}
	}
	if first {
		emit(plumbing.ZeroHash, "capabilities^{}")
	}
	pw.flush()
	return pw.err
}

// DropCaches forgets cached packs and pack indexes, so the next clone is
// built from disk (benchmarks measure cold clones with it).
func (g *Git) DropCaches() {
	g.packs.Drop()
	g.idx.Drop()
}
