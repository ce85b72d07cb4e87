// Package gitproto speaks git's smart protocol (DESIGN.md §6) for quire's
// asset repositories, in its stateless form as smart HTTP carries it: the
// ref advertisement, upload-pack (clone and fetch, protocol v0 and v2,
// shallow and partial clones) and receive-pack (push). It owns the wire:
// pkt-line framing (go-git's plumbing/format/pktline), capabilities
// (go-git's protocol/packp/capability), side-band, negotiation, the
// reachability walks that choose what a pack holds, the rules of which
// refs a push may move, and the report git prints.
//
// It reaches the repositories only through a narrow seam, Repository and
// Push, which gitstore implements (gitstore.GitRepo, gitstore.GitPush):
// refs, objects as stored, pack writing and its cache, the pushed pack in
// quarantine, the content checks and ref updates under the write lock.
// gitproto imports gitstore, never the reverse; it must not import
// httpapi, cache, gin or go-redis (internal/archtest checks).
package gitproto

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore"
)

// Repository is one request's view of an asset's repository, as a fetch
// needs it (gitstore.GitRepo).
type Repository interface {
	// Refs lists the branches and tags under any of prefixes (all without
	// one), sorted by name, and the live commit (main; zero when nothing
	// is live or no prefix matches main).
	Refs(prefixes []string) ([]gitstore.Ref, plumbing.Hash, error)
	Has(h plumbing.Hash) bool
	// Read returns an object's type and content, which the caller must
	// not change.
	Read(h plumbing.Hash) (plumbing.ObjectType, []byte, error)
	Size(h plumbing.Hash) (int64, error)
	WritePack(objs []plumbing.Hash, ofsDelta bool, w io.Writer) (gitstore.PackStats, error)
	CachedPack(key string) (pack []byte, objects int, ok bool)
	CachePack(key string, pack []byte, objects int)
	Close()
}

// Push is one push's view of an asset's repository (gitstore.GitPush).
type Push interface {
	// Receive puts the pushed pack in quarantine; its errors' messages
	// are the unpack status.
	Receive(pack io.Reader) error
	Fsck(ctx context.Context) (*gitstore.FsckError, error)
	// Unreached counts the pack's objects that none of tips reaches.
	Unreached(ctx context.Context, tips []plumbing.Hash) (int, error)
	// Check applies the API's content rules to the new commits under tip.
	Check(ctx context.Context, tip plumbing.Hash) error
	// Lock takes the write lock; Draft, IsAncestor, Install and Move are
	// called holding it. unlock releases it and, when a draft moved, tells
	// the store's listeners (caches, the repacker).
	Lock() (unlock func(), err error)
	Draft(n int) (quire.VersionState, plumbing.Hash, error)
	IsAncestor(a, b plumbing.Hash) (bool, error)
	Install() error
	// Move records the push and moves draft n from old to new;
	// gitstore.ErrRefChanged when it is no longer at old.
	Move(by quire.Actor, n int, old, new plumbing.Hash) error
	Close()
}

// open opens a's repository for a fetch: limited to main and the tags of
// published versions when ctx says so (quire.PublishedOnly).
func (srv *Server) open(ctx context.Context, a *quire.Asset, objects bool) (Repository, error) {
	r, err := srv.b.open(a, objects)
	if err != nil || !quire.PublishedOnly(ctx) {
		return r, err
	}
	return publishedOnly{r}, nil
}

// publishedOnly is a Repository whose refs are main and the tags vN of
// versions published and not archived: drafts (branches) and archived
// versions stay hidden, and since the advertised refs are the tips a
// want must be reachable from (checkWants), their commits cannot be
// fetched by id either.
type publishedOnly struct{ Repository }

func (r publishedOnly) Refs(prefixes []string) ([]gitstore.Ref, plumbing.Hash, error) {
	refs, head, err := r.Repository.Refs(prefixes)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	archived, _, err := r.Repository.Refs([]string{"refs/tags/archive/"})
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	gone := make(map[string]bool, len(archived))
	for _, a := range archived {
		gone["refs/tags/"+strings.TrimPrefix(a.Name, "refs/tags/archive/")] = true
	}
	out := refs[:0:0]
	for _, ref := range refs {
		switch {
		case ref.Name == mainRef.String():
		case strings.HasPrefix(ref.Name, "refs/tags/v") && !gone[ref.Name]:
			if _, err := strconv.Atoi(strings.TrimPrefix(ref.Name, "refs/tags/v")); err != nil {
				continue
			}
		default:
			continue
		}
		out = append(out, ref)
	}
	return out, head, nil
}

// backend opens repositories for the protocol.
type backend interface {
	open(a *quire.Asset, objects bool) (Repository, error)
	openPush(a *quire.Asset) (Push, error)
	observe(ctx context.Context, op, name string) func(*error)
}

// store is the backend over gitstore.
type store struct{ g *gitstore.Git }

func (s store) open(a *quire.Asset, objects bool) (Repository, error) {
	r, err := s.g.Open(a, objects)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (s store) openPush(a *quire.Asset) (Push, error) {
	p, err := s.g.OpenPush(a)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (s store) observe(ctx context.Context, op, name string) func(*error) {
	return s.g.Observe(ctx, op, name)
}

// Server serves asset repositories over git's smart protocol. It
// implements quire.GitService.
type Server struct {
	git  *gitstore.Git
	b    backend
	opts gitstore.GitOptions
	caps struct{ upload, receive string }
}

var _ quire.GitService = (*Server)(nil)

// New returns the git service over the repository side g
// (gitstore.NewGit, which internal/server.Build makes). Close stops g's
// background work.
func New(g *gitstore.Git) *Server {
	srv := &Server{git: g, b: store{g}, opts: g.Options()}
	srv.caps.upload = capList(capability.MultiACK, capability.MultiACKDetailed, capability.NoDone,
		capability.Sideband, capability.Sideband64k, capability.OFSDelta, capability.Shallow,
		capability.DeepenRelative, capability.NoProgress, capability.IncludeTag,
		capability.AllowTipSHA1InWant, capability.AllowReachableSHA1InWant, capability.Filter)
	// report-status-v2 is not offered: quire never rewrites a pushed ref.
	srv.caps.receive = capList(capability.ReportStatus, capability.DeleteRefs, capability.Sideband64k,
		capability.Quiet, capability.Atomic, capability.OFSDelta, capNoThin, capability.PushOptions)
	return srv
}

// Close stops the background repacker, waiting for a repack in progress.
func (srv *Server) Close() error { return srv.git.Close() }

// DropCaches forgets cached packs and pack indexes, so the next clone is
// built from disk (benchmarks measure cold clones with it).
func (srv *Server) DropCaches() { srv.git.DropCaches() }

// Repack folds the objects of the repository at dir into one pack
// (benchmarks prepare repositories with it).
func (srv *Server) Repack(dir string) error { return srv.git.Repack(dir) }

// Capabilities. No thin packs either way: go-git cannot resolve deltas
// against objects outside a pack, and a full pack keeps the server simple.
const (
	agent     = "quire/1"
	capNoThin = capability.Capability("no-thin") // not in go-git's list
)

// capList is caps, in order, then the agent, as an advertisement lists
// them.
func capList(caps ...capability.Capability) string {
	l := capability.NewList()
	for _, c := range caps {
		l.Add(c)
	}
	l.Add(capability.Agent, agent)
	return l.String()
}

// decodeCaps reads the capabilities a client sends, by name.
func decodeCaps(raw string) (map[string]bool, error) {
	l := capability.NewList()
	if err := l.Decode([]byte(raw)); err != nil {
		return nil, err
	}
	caps := map[string]bool{}
	for _, c := range l.All() {
		caps[string(c)] = true
	}
	return caps, nil
}

// mainRef is the live version's branch, which HEAD names.
const mainRef = plumbing.Main

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
// Review and label refs are left out: a pack for given wants does not
// depend on them (include-tag follows tags only), and a busy review would
// otherwise turn every comment into a cold clone.
func (st *refState) fingerprint() string {
	var b strings.Builder
	for _, r := range st.refs {
		if !strings.HasPrefix(r.name, "refs/heads/") && !strings.HasPrefix(r.name, "refs/tags/") {
			continue
		}
		b.WriteString(r.name)
		b.WriteByte(' ')
		b.WriteString(r.hash.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// readRefs lists the advertised refs of wk's repository, sorted by name,
// with tags peeled when peel is set (upload-pack's; receive-pack shows
// no peeled tags, so its listing reads no object).
func readRefs(wk *walker, peel bool) (*refState, error) {
	refs, head, err := wk.r.Refs(nil)
	if err != nil {
		return nil, err
	}
	st := &refState{refs: make([]advRef, len(refs)), head: head, tips: make(map[plumbing.Hash]bool, len(refs))}
	for i, r := range refs {
		ref := &st.refs[i]
		ref.name, ref.hash = r.Name, r.Hash
		st.tips[ref.hash] = true
		if !peel || !strings.HasPrefix(ref.name, "refs/tags/") {
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

// AdvertiseRefs writes the smart-HTTP info/refs body of service for a:
// the v0 ref advertisement, or for upload-pack over protocol 2 the v2
// capabilities (the refs are then listed by the ls-refs command).
func (srv *Server) AdvertiseRefs(ctx context.Context, a *quire.Asset, service string, protocol int, w io.Writer) error {
	var caps string
	switch service {
	case quire.GitUploadPack:
		caps = srv.caps.upload
	case quire.GitReceivePack:
		caps = srv.caps.receive
	default:
		return quire.Errorf(quire.EINVALID, "unknown git service %q", service)
	}
	if service == quire.GitUploadPack && protocol == 2 {
		// The repository must exist, though v2 lists no refs here.
		r, err := srv.open(ctx, a, false)
		if err != nil {
			return err
		}
		r.Close()
		return advertiseV2(w)
	}
	upload := service == quire.GitUploadPack
	r, err := srv.open(ctx, a, upload)
	if err != nil {
		return err
	}
	defer r.Close()
	st, err := readRefs(newWalker(ctx, r), upload)
	if err != nil {
		return err
	}
	pw := newPktWriter(w)
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
