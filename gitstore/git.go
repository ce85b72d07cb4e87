package gitstore

import (
	"context"
	"sync"
	"time"

	"github.com/quire/quire/gitstore/odb"

	"github.com/quire/quire"
)

// GitOptions configures the git transport: the repository side that
// gitstore.Git keeps (pack cache, repacks, the size of a push) and the
// request limit gitproto applies.
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
	// MaxPushInflated bounds what the objects of one push inflate to
	// (their sizes added up, deltas at the size they build), so a small
	// pack of something that compresses well cannot make the server
	// inflate gigabytes; the same as MaxPushBytes by default.
	MaxPushInflated int64
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
	if o.MaxPushInflated <= 0 {
		o.MaxPushInflated = 8*l.MaxVersionBytes + l.MaxFile
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = 8 << 20
	}
	if o.OnError == nil {
		o.OnError = func(string, error) {}
	}
	return nil
}

// Git is the repository side of git's smart protocol, which package
// gitproto speaks over it (gitproto imports gitstore, never the reverse):
//
//   - Open gives one request's view of an asset repository (GitRepo): the
//     advertised refs, objects read as they are stored, packs written by
//     copying stored objects and deltas (computed once, by the background
//     repack, not per clone), and a memory cache of clone packs that a
//     write to the asset empties;
//   - OpenPush gives one push's (GitPush): its pack in quarantine, the
//     fsck and the API's path, content and size rules, and ref updates
//     under the repository's write lock with their record on the versions
//     log;
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

// NewGit returns the git transport's side of store s. Close stops its
// background work.
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
	s.onProjectChange(g.repack.touchProject)
	return g
}

// Close stops the background repacker, waiting for a repack in progress.
func (g *Git) Close() error {
	g.repack.close()
	return nil
}

// Options returns the options in force, defaults filled in.
func (g *Git) Options() GitOptions { return g.opts }

// Observe reports one git operation as the store's other operations are
// (metrics and traces). Use it with a named error result:
//
//	defer g.Observe(ctx, quire.GitOpClone, "UploadPack")(&err)
func (g *Git) Observe(ctx context.Context, op, name string) func(*error) {
	return g.s.observe(ctx, op, name)
}

// DropCaches forgets cached packs and pack indexes, so the next clone is
// built from disk (benchmarks measure cold clones with it).
func (g *Git) DropCaches() {
	g.packs.Drop()
	g.idx.Drop()
}
