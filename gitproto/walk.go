package gitproto

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// The walks of upload-pack over a Repository: which wants are allowed,
// where a shallow history is cut, and which objects a pack holds.

// commitInfo is what walks need of a commit.
type commitInfo struct {
	parents []plumbing.Hash
	tree    plumbing.Hash
	when    int64
}

// walker reads commits and trees of one repository for one request,
// remembering what it parsed.
type walker struct {
	ctx     context.Context
	r       Repository
	commits map[plumbing.Hash]*commitInfo
	steps   int
}

func newWalker(ctx context.Context, r Repository) *walker {
	return &walker{ctx: ctx, r: r, commits: map[plumbing.Hash]*commitInfo{}}
}

func (w *walker) tick() error {
	if w.steps++; w.steps&1023 == 0 {
		return w.ctx.Err()
	}
	return nil
}

func (w *walker) commit(h plumbing.Hash) (*commitInfo, error) {
	if c, ok := w.commits[h]; ok {
		return c, nil
	}
	if err := w.tick(); err != nil {
		return nil, err
	}
	t, b, err := w.r.Read(h)
	if err == nil && t != plumbing.CommitObject {
		err = fmt.Errorf("is a %s", t)
	}
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	ci, err := parseCommit(b)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	w.commits[h] = ci
	return ci, nil
}

// peel follows tags from h; it returns the object and its type.
func (w *walker) peel(h plumbing.Hash, tags func(plumbing.Hash)) (plumbing.Hash, plumbing.ObjectType, error) {
	for range 16 {
		if _, ok := w.commits[h]; ok {
			return h, plumbing.CommitObject, nil
		}
		t, b, err := w.r.Read(h)
		if err != nil {
			return h, plumbing.InvalidObject, fmt.Errorf("object %s: %w", h, err)
		}
		if t != plumbing.TagObject {
			return h, t, nil
		}
		target, err := parseTagTarget(b)
		if err != nil {
			return h, plumbing.InvalidObject, fmt.Errorf("tag %s: %w", h, err)
		}
		if tags != nil {
			tags(h)
		}
		h = target
	}
	return h, plumbing.InvalidObject, errors.New("tag chain too long")
}

// checkWants returns the first want that is neither an advertised tip nor
// reachable from one (ZeroHash when all are fine). Objects of hidden refs
// (refs/quire/*) are never reachable from advertised ones. Trees and blobs
// may be wanted too: a partial clone fetches what it left out that way.
func (w *walker) checkWants(st *refState, wants []plumbing.Hash) (plumbing.Hash, error) {
	pending := map[plumbing.Hash]bool{}
	for _, h := range wants {
		if !st.tips[h] {
			pending[h] = true
		}
	}
	if len(pending) == 0 {
		return plumbing.ZeroHash, nil
	}
	// A stateless client may want a tip that moved since it read the refs:
	// what is still reachable is served, as git's upload-pack does.
	seen := map[plumbing.Hash]bool{}
	var queue, trees []plumbing.Hash
	for h := range st.tips {
		queue = append(queue, h)
	}
	for len(queue) > 0 && len(pending) > 0 {
		h := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		delete(pending, h)
		if _, ok := w.commits[h]; !ok {
			t, b, err := w.r.Read(h)
			if err != nil {
				continue
			}
			switch t {
			case plumbing.TagObject:
				if target, err := parseTagTarget(b); err == nil {
					queue = append(queue, target)
				}
				continue
			case plumbing.TreeObject:
				trees = append(trees, h)
				continue
			case plumbing.CommitObject:
			default:
				continue
			}
		}
		c, err := w.commit(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		trees = append(trees, c.tree)
		queue = append(queue, c.parents...)
	}
	// What is left may be in the trees of the commits walked.
	treeSeen := map[plumbing.Hash]bool{}
	for _, t := range trees {
		if len(pending) == 0 {
			break
		}
		if err := w.walkTree(t, treeSeen, func(h plumbing.Hash) { delete(pending, h) }); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	for _, h := range wants {
		if pending[h] {
			return h, nil
		}
	}
	return plumbing.ZeroHash, nil
}

// shallowInfo is the outcome of a deepen request.
type shallowInfo struct {
	shallow    []plumbing.Hash        // new shallow commits to announce
	unshallow  []plumbing.Hash        // client shallow commits that get their parents
	cut        map[plumbing.Hash]bool // commits whose parents are not sent
	extraWants []plumbing.Hash        // parents of unshallowed commits
}

// deepen computes the shallow boundary of wants at depth (1 = the wanted
// commits alone), as upload-pack.c deepen() does for "deepen N"; with
// deepen-relative (git fetch --deepen=N), depth counts from the client's
// current shallow commits instead.
func (w *walker) deepen(wants []plumbing.Hash, clientShallow map[plumbing.Hash]bool, depth int, relative bool) (*shallowInfo, error) {
	sh := &shallowInfo{cut: map[plumbing.Hash]bool{}}
	depthOf := map[plumbing.Hash]int{}
	type item struct {
		h plumbing.Hash
		d int
	}
	var queue []item
	starts := wants
	if relative && depth < infiniteDepth {
		starts = nil
		for _, h := range sortedHashes(clientShallow) {
			if t, _, err := w.r.Read(h); err == nil && t == plumbing.CommitObject {
				starts = append(starts, h)
			}
		}
		depth++
	}
	for _, h := range starts {
		target, typ, err := w.peel(h, nil)
		if err != nil {
			return nil, err
		}
		if typ != plumbing.CommitObject {
			continue
		}
		if _, ok := depthOf[target]; !ok {
			depthOf[target] = 1
			queue = append(queue, item{target, 1})
		}
	}
	notShallow := map[plumbing.Hash]bool{}
	boundary := map[plumbing.Hash]bool{}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		c, err := w.commit(it.h)
		if err != nil {
			return nil, err
		}
		if depth < infiniteDepth && it.d >= depth {
			if len(c.parents) > 0 {
				boundary[it.h] = true
			}
			continue
		}
		notShallow[it.h] = true
		for _, p := range c.parents {
			if _, ok := depthOf[p]; !ok {
				depthOf[p] = it.d + 1
				queue = append(queue, item{p, it.d + 1})
			}
		}
	}
	for _, h := range sortedHashes(boundary) {
		sh.cut[h] = true
		if !clientShallow[h] {
			sh.shallow = append(sh.shallow, h)
		}
	}
	for _, h := range sortedHashes(clientShallow) {
		if !notShallow[h] {
			sh.cut[h] = true
			continue
		}
		sh.unshallow = append(sh.unshallow, h)
		c, err := w.commit(h)
		if err != nil {
			return nil, err
		}
		sh.extraWants = append(sh.extraWants, c.parents...)
	}
	return sh, nil
}

func sortedHashes(m map[plumbing.Hash]bool) []plumbing.Hash {
	out := make([]plumbing.Hash, 0, len(m))
	for h := range m {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i][:], out[j][:]) < 0 })
	return out
}

// maxEdges bounds the trees of commits the client has that are walked to
// avoid resending their objects.
const maxEdges = 64

// objectsToSend lists the objects reachable from wants but not from the
// common haves, as `git rev-list --objects wants --not haves` would, with
// the shallow boundary cutting history.
// A filter leaves out what it excludes of the trees reached; wanted trees
// and blobs are sent whatever it says.
func (w *walker) objectsToSend(st *refState, wants, common []plumbing.Hash, clientShallow map[plumbing.Hash]bool, sh *shallowInfo, includeTag bool, f *objectFilter) ([]plumbing.Hash, error) {
	out := []plumbing.Hash{}
	added := map[plumbing.Hash]bool{}
	add := func(h plumbing.Hash) {
		if !added[h] {
			added[h] = true
			out = append(out, h)
		}
	}

	// What the client has: commits reachable from the common haves, not
	// past its own shallow boundary.
	uninteresting := map[plumbing.Hash]bool{}
	var haveCommits, haveRoots []plumbing.Hash
	for _, h := range common {
		target, typ, err := w.peel(h, func(tag plumbing.Hash) { uninteresting[tag] = true })
		if err != nil {
			return nil, err
		}
		uninteresting[h] = true
		switch typ {
		case plumbing.CommitObject:
			haveCommits = append(haveCommits, target)
		case plumbing.TreeObject:
			haveRoots = append(haveRoots, target)
		default:
			uninteresting[target] = true
		}
	}
	clientHas := map[plumbing.Hash]bool{}
	queue := append([]plumbing.Hash(nil), haveCommits...)
	for len(queue) > 0 {
		h := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if clientHas[h] {
			continue
		}
		clientHas[h] = true
		c, err := w.commit(h)
		if err != nil {
			return nil, err
		}
		if clientShallow[h] {
			continue // the client has no parents of it
		}
		queue = append(queue, c.parents...)
	}

	// The commits to send.
	var roots, wantedTrees []plumbing.Hash
	queue = queue[:0]
	for _, h := range append(append([]plumbing.Hash(nil), wants...), sh.extraWants...) {
		target, typ, err := w.peel(h, add)
		if err != nil {
			return nil, err
		}
		switch typ {
		case plumbing.CommitObject:
			queue = append(queue, target)
		case plumbing.TreeObject:
			wantedTrees = append(wantedTrees, target)
		default:
			add(target)
		}
	}
	sent := map[plumbing.Hash]bool{}
	edges := map[plumbing.Hash]bool{}
	for len(queue) > 0 {
		h := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if sent[h] {
			continue
		}
		if clientHas[h] {
			edges[h] = true
			continue
		}
		sent[h] = true
		add(h)
		c, err := w.commit(h)
		if err != nil {
			return nil, err
		}
		roots = append(roots, c.tree)
		if sh.cut[h] {
			continue
		}
		queue = append(queue, c.parents...)
	}

	// Objects of the trees at the edge are the client's already.
	for _, h := range haveCommits {
		edges[h] = true
	}
	n := 0
	for _, h := range sortedHashes(edges) {
		if n++; n > maxEdges {
			break
		}
		c, err := w.commit(h)
		if err != nil {
			return nil, err
		}
		haveRoots = append(haveRoots, c.tree)
	}
	for _, t := range haveRoots {
		if err := w.walkTree(t, uninteresting, func(plumbing.Hash) {}); err != nil {
			return nil, err
		}
	}
	if f == nil {
		seen := uninteresting
		for _, t := range append(wantedTrees, roots...) {
			if err := w.walkTree(t, seen, add); err != nil {
				return nil, err
			}
		}
	} else {
		fw := &filterWalk{f: f, skip: uninteresting, depth: map[plumbing.Hash]uint64{}, add: add}
		for _, t := range wantedTrees {
			if err := w.filteredTree(fw, t, 0, true); err != nil {
				return nil, err
			}
		}
		for _, t := range roots {
			if err := w.filteredTree(fw, t, 0, false); err != nil {
				return nil, err
			}
		}
	}

	if includeTag {
		for _, ref := range st.refs {
			if !ref.peeled.IsZero() && sent[ref.peeled] && !added[ref.hash] && !uninteresting[ref.hash] {
				if _, _, err := w.peel(ref.hash, add); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// readTree reads tree t, one step of the walk's budget.
func (w *walker) readTree(t plumbing.Hash) ([]byte, error) {
	if err := w.tick(); err != nil {
		return nil, err
	}
	typ, b, err := w.r.Read(t)
	if err == nil && typ != plumbing.TreeObject {
		err = fmt.Errorf("is a %s", typ)
	}
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", t, err)
	}
	return b, nil
}

// walkTree calls fn for the tree t and every tree and blob under it not
// yet in seen, adding them to seen. Submodule entries are skipped.
func (w *walker) walkTree(t plumbing.Hash, seen map[plumbing.Hash]bool, fn func(plumbing.Hash)) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	fn(t)
	b, err := w.readTree(t)
	if err != nil {
		return err
	}
	// The walk below may evict b from the reader's cache, never change it.
	return forEachTreeEntry(b, func(e treeEntry) error {
		switch e.mode {
		case uint32(filemode.Dir):
			return w.walkTree(e.hash, seen, fn)
		case uint32(filemode.Submodule):
		default:
			if !seen[e.hash] {
				seen[e.hash] = true
				fn(e.hash)
			}
		}
		return nil
	})
}
