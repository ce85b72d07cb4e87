package gitstore

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/quire/quire/gitstore/odb"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/quire/quire"
)

// uploadRequest is one stateless upload-pack request (gitprotocol-pack.txt,
// "Packfile Negotiation"): wants and shallow options up to a flush, then
// optionally haves ending in a flush (another round follows) or "done".
type uploadRequest struct {
	wants     []plumbing.Hash
	caps      map[string]bool
	shallows  []plumbing.Hash // commits the client has without their parents
	depth     int             // deepen N; 0 for none
	haves     []plumbing.Hash
	done      bool
	wantsOnly bool          // the request ended after the wants: a stateless deepen probe
	filter    *objectFilter // partial clone; nil for every object
	refuse    string        // a request quire will not serve, said in-protocol
}

// infiniteDepth is what git sends for --unshallow.
const infiniteDepth = 0x7fffffff

func parseHash(s string) (plumbing.Hash, bool) {
	if len(s) != 40 {
		return plumbing.ZeroHash, false
	}
	var h plumbing.Hash
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return plumbing.ZeroHash, false
	}
	return h, true
}

// setFilter records a filter spec, or a refusal git prints.
func (req *uploadRequest) setFilter(spec string) {
	f, err := parseFilter(spec)
	if err != nil {
		req.refuse = err.Error()
		return
	}
	req.filter = f
}

func parseUploadRequest(body io.Reader) (*uploadRequest, error) {
	bad := func(format string, args ...any) error {
		return quire.Errorf(quire.EINVALID, "git upload-pack: "+format, args...)
	}
	pr := newPktReader(body)
	req := &uploadRequest{caps: map[string]bool{}}
	for {
		line, flush, err := pr.readLine()
		if errors.Is(err, io.EOF) {
			if len(req.wants) == 0 {
				return req, nil
			}
			return nil, bad("request ended inside the want list")
		}
		if err != nil {
			return nil, bad("%v", err)
		}
		if flush {
			break
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch verb {
		case "want":
			hexID, caps, _ := strings.Cut(arg, " ")
			h, ok := parseHash(hexID)
			if !ok {
				return nil, bad("expected an object id, got %q", line)
			}
			if len(req.wants) == 0 {
				for _, c := range strings.Fields(caps) {
					name, _, _ := strings.Cut(c, "=")
					req.caps[name] = true
				}
			}
			req.wants = append(req.wants, h)
		case "shallow":
			h, ok := parseHash(arg)
			if !ok {
				return nil, bad("expected an object id, got %q", line)
			}
			req.shallows = append(req.shallows, h)
		case "deepen":
			n, err := strconv.Atoi(arg)
			if err != nil || n <= 0 {
				return nil, bad("invalid deepen %q", arg)
			}
			req.depth = n
		case "deepen-since", "deepen-not":
			req.refuse = "quire supports --depth but not --shallow-since or --shallow-exclude"
		case "filter":
			req.setFilter(arg)
		default:
			return nil, bad("unexpected line %q", line)
		}
	}
	if len(req.wants) == 0 {
		return req, nil // "nothing wanted": the client had everything
	}
	for {
		line, flush, err := pr.readLine()
		if errors.Is(err, io.EOF) {
			if len(req.haves) == 0 {
				req.wantsOnly = true
				return req, nil
			}
			return nil, bad("request ended inside the have list")
		}
		if err != nil {
			return nil, bad("%v", err)
		}
		if flush {
			return req, nil
		}
		if line == "done" {
			req.done = true
			return req, nil
		}
		verb, arg, _ := strings.Cut(line, " ")
		if verb != "have" {
			return nil, bad("expected have or done, got %q", line)
		}
		h, ok := parseHash(arg)
		if !ok {
			return nil, bad("expected an object id, got %q", line)
		}
		req.haves = append(req.haves, h)
	}
}

// UploadPack answers one upload-pack request: with protocol 2 a v2
// command, otherwise a v0 negotiation round or the pack.
func (g *Git) UploadPack(ctx context.Context, a *quire.Asset, protocol int, body io.Reader, w io.Writer) (err error) {
	defer g.s.observe(ctx, quire.GitOpClone, "UploadPack")(&err)
	if protocol == 2 {
		return g.uploadPackV2(ctx, a, io.LimitReader(body, g.opts.MaxRequestBytes), w)
	}
	req, err := parseUploadRequest(io.LimitReader(body, g.opts.MaxRequestBytes))
	if err != nil {
		return err
	}
	if len(req.wants) == 0 {
		return nil
	}
	r, err := g.gitRepo(a)
	if err != nil {
		return err
	}
	pw := &pktWriter{w: w}
	if req.refuse != "" {
		pw.line("ERR %s", req.refuse)
		return pw.err
	}
	ps, err := g.idx.OpenPacks(r.path)
	if err != nil {
		return err
	}
	defer ps.Close()
	wk := newWalker(ctx, r, ps)
	st, err := g.readRefs(wk)
	if err != nil {
		return err
	}
	if h, err := wk.checkWants(st, req.wants); err != nil {
		return err
	} else if !h.IsZero() {
		pw.line("ERR upload-pack: not our ref %s", h)
		return pw.err
	}

	// Shallow: what the client will have without parents.
	clientShallow := map[plumbing.Hash]bool{}
	for _, h := range req.shallows {
		clientShallow[h] = true
	}
	sh := &shallowInfo{cut: map[plumbing.Hash]bool{}}
	if req.depth > 0 {
		if sh, err = wk.deepen(req.wants, clientShallow, req.depth, req.caps["deepen-relative"]); err != nil {
			return err
		}
		for _, h := range sh.shallow {
			pw.line("shallow %s", h)
		}
		for _, h := range sh.unshallow {
			pw.line("unshallow %s", h)
		}
		pw.flush()
	} else {
		for h := range clientShallow {
			sh.cut[h] = true
		}
	}
	if req.wantsOnly {
		return pw.err
	}

	// Negotiation (upload-pack.c get_common_commits, stateless): ACK every
	// have we hold, say "ready" once every want reaches one, NAK at the end
	// of a round. The pack goes out on "done", or at once with no-done.
	multiAck := 0
	switch {
	case req.caps["multi_ack_detailed"]:
		multiAck = 2
	case req.caps["multi_ack"]:
		multiAck = 1
	}
	neg := &negotiation{wk: wk, clientShallow: clientShallow}
	var last plumbing.Hash
	gotCommon, gotOther, sentReady := false, false, false
	for _, h := range req.haves {
		if !wk.obj.Has(h) {
			gotOther = true
			if multiAck > 0 && neg.okToGiveUp(req.wants) {
				if multiAck == 2 {
					sentReady = true
					pw.line("ACK %s ready", h)
				} else {
					pw.line("ACK %s continue", h)
				}
			}
			continue
		}
		if err := neg.have(h); err != nil {
			return err
		}
		gotCommon, last = true, h
		switch {
		case multiAck == 2:
			pw.line("ACK %s common", h)
		case multiAck == 1:
			pw.line("ACK %s continue", h)
		case len(neg.common) == 1:
			pw.line("ACK %s", h)
		}
	}
	if !req.done {
		if multiAck == 2 && gotCommon && !gotOther && neg.okToGiveUp(req.wants) {
			sentReady = true
			pw.line("ACK %s ready", last)
		}
		if len(neg.common) == 0 || multiAck > 0 {
			pw.line("NAK")
		}
		if !(req.caps["no-done"] && sentReady) {
			return pw.err
		}
		pw.line("ACK %s", last)
	} else if len(neg.common) > 0 {
		if multiAck > 0 {
			pw.line("ACK %s", last)
		}
	} else {
		pw.line("NAK")
	}
	if pw.err != nil {
		return pw.err
	}
	return g.sendPack(ctx, a, r, st, wk, req, neg.common, clientShallow, sh, w)
}

// sendPack writes the pack for a finished negotiation, from the cache when
// the same tips were packed for a client with nothing.
func (g *Git) sendPack(ctx context.Context, a *quire.Asset, r *repo, st *refState, wk *walker, req *uploadRequest, common []plumbing.Hash, clientShallow map[plumbing.Hash]bool, sh *shallowInfo, w io.Writer) error {
	sb := newSideband(w, req.caps["side-band-64k"] || req.caps["side-band"], !req.caps["side-band-64k"])
	progress := !req.caps["no-progress"]
	ofs := req.caps["ofs-delta"]
	includeTag := req.caps["include-tag"]

	key := ""
	if len(common) == 0 {
		key = packKey(a.ID, st, req, sh, ofs, includeTag)
		if e, ok := g.packs.Get(key); ok {
			if progress {
				sb.progress("quire: %d objects, pack reused from cache\n", e.Objects)
			}
			if _, err := sb.Write(e.Pack); err != nil {
				return nil // the client went away
			}
			sb.close()
			return nil
		}
	}
	objs, err := wk.objectsToSend(st, req.wants, common, clientShallow, sh, includeTag, req.filter)
	if err != nil {
		g.opts.OnError("upload-pack", err)
		sb.fail("quire: could not list objects to send")
		return nil
	}
	var out io.Writer = sb
	var keep *capBuffer
	if key != "" {
		keep = &capBuffer{max: g.opts.PackCacheEntry}
		out = io.MultiWriter(sb, keep)
	}
	stats, err := odb.WritePack(g.zlib, wk.obj, objs, ofs, out)
	if err != nil {
		if sb.err == nil {
			g.opts.OnError("upload-pack", err)
			sb.fail("quire: could not build the pack")
		}
		return nil
	}
	if progress {
		sb.progress("quire: %d objects (%d copied as stored, %d deltas, %d compressed)\n", stats.Objects(), stats.Reused, stats.Deltas, stats.Whole)
	}
	sb.close()
	if keep != nil && !keep.over {
		g.packs.Put(&odb.PackEntry{Key: key, AssetID: a.ID, Pack: bytes.Clone(keep.buf.Bytes()), Objects: stats.Objects()})
	}
	return nil
}

// packKey names the pack for a request with no haves.
func packKey(assetID string, st *refState, req *uploadRequest, sh *shallowInfo, ofs, includeTag bool) string {
	h := sha1.New()
	io.WriteString(h, st.fingerprint())
	wants := append([]plumbing.Hash(nil), req.wants...)
	sort.Slice(wants, func(i, j int) bool { return bytes.Compare(wants[i][:], wants[j][:]) < 0 })
	for _, w := range wants {
		h.Write(w[:])
	}
	fmt.Fprintf(h, "\x00depth=%d ofs=%t tag=%t", req.depth, ofs, includeTag)
	if req.filter != nil {
		fmt.Fprintf(h, " filter=%s", req.filter.spec)
	}
	cut := make([]string, 0, len(sh.cut))
	for c := range sh.cut {
		cut = append(cut, c.String())
	}
	sort.Strings(cut)
	io.WriteString(h, strings.Join(cut, ","))
	return assetID + ":" + hex.EncodeToString(h.Sum(nil))
}

// capBuffer keeps what is written until it passes max.
type capBuffer struct {
	buf  bytes.Buffer
	max  int64
	over bool
}

func (c *capBuffer) Write(p []byte) (int, error) {
	if !c.over {
		if int64(c.buf.Len()+len(p)) > c.max {
			c.over = true
			c.buf = bytes.Buffer{}
		} else {
			c.buf.Write(p)
		}
	}
	return len(p), nil
}

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
	r       *repo
	obj     *odb.ObjectReader
	commits map[plumbing.Hash]*commitInfo
	steps   int
}

func newWalker(ctx context.Context, r *repo, ps *odb.PackSet) *walker {
	return &walker{ctx: ctx, r: r, obj: odb.NewObjectReader(r.DB, ps), commits: map[plumbing.Hash]*commitInfo{}}
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
	t, b, err := w.obj.Read(h)
	if err == nil && t != plumbing.CommitObject {
		err = fmt.Errorf("is a %s", t)
	}
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	pc, err := odb.ParseCommit(b)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	ci := &commitInfo{parents: pc.Parents, tree: pc.Tree, when: pc.When}
	w.commits[h] = ci
	return ci, nil
}

// peel follows tags from h; it returns the object and its type.
func (w *walker) peel(h plumbing.Hash, tags func(plumbing.Hash)) (plumbing.Hash, plumbing.ObjectType, error) {
	for range 16 {
		if _, ok := w.commits[h]; ok {
			return h, plumbing.CommitObject, nil
		}
		t, b, err := w.obj.Read(h)
		if err != nil {
			return h, plumbing.InvalidObject, fmt.Errorf("object %s: %w", h, err)
		}
		if t != plumbing.TagObject {
			return h, t, nil
		}
		target, err := odb.ParseTagTarget(b)
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
			t, b, err := w.obj.Read(h)
			if err != nil {
				continue
			}
			switch t {
			case plumbing.TagObject:
				if target, err := odb.ParseTagTarget(b); err == nil {
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

// negotiation tracks the haves of one request.
type negotiation struct {
	wk            *walker
	clientShallow map[plumbing.Hash]bool
	common        []plumbing.Hash
	theyHave      map[plumbing.Hash]bool // common commits and their parents
	oldest        int64
	reached       map[plumbing.Hash]bool // wants known to reach theyHave
	gen           int                    // bumped when theyHave grows
	failedGen     int                    // gen of the last okToGiveUp that failed, plus one
}

func (n *negotiation) have(h plumbing.Hash) error {
	if n.theyHave == nil {
		n.theyHave = map[plumbing.Hash]bool{}
		n.reached = map[plumbing.Hash]bool{}
	}
	target, typ, err := n.wk.peel(h, nil)
	if err != nil {
		return err
	}
	if typ == plumbing.CommitObject {
		c, err := n.wk.commit(target)
		if err != nil {
			return err
		}
		if n.theyHave[target] && contains(n.common, h) {
			return nil
		}
		n.theyHave[target] = true
		n.gen++
		if n.oldest == 0 || c.when < n.oldest {
			n.oldest = c.when
		}
		if !n.clientShallow[target] {
			for _, p := range c.parents {
				n.theyHave[p] = true
			}
		}
	}
	if !contains(n.common, h) {
		n.common = append(n.common, h)
	}
	return nil
}

func contains(list []plumbing.Hash, h plumbing.Hash) bool {
	for _, x := range list {
		if x == h {
			return true
		}
	}
	return false
}

// okToGiveUp reports whether every wanted commit reaches a commit the
// client has: the pack then need not grow with more negotiation.
func (n *negotiation) okToGiveUp(wants []plumbing.Hash) bool {
	if len(n.common) == 0 || n.failedGen == n.gen+1 {
		return false
	}
	for _, want := range wants {
		if n.reached[want] {
			continue
		}
		target, typ, err := n.wk.peel(want, nil)
		if err != nil {
			return false
		}
		if typ != plumbing.CommitObject {
			continue
		}
		if !n.reaches(target) {
			n.failedGen = n.gen + 1
			return false
		}
		n.reached[want] = true
	}
	return true
}

func (n *negotiation) reaches(from plumbing.Hash) bool {
	seen := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{from}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if seen[h] {
			continue
		}
		seen[h] = true
		if n.theyHave[h] {
			return true
		}
		c, err := n.wk.commit(h)
		if err != nil {
			return false
		}
		if c.when < n.oldest {
			continue // older than anything the client has: cannot reach it
		}
		queue = append(queue, c.parents...)
	}
	return false
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
			if t, _, err := w.obj.Read(h); err == nil && t == plumbing.CommitObject {
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

// walkTree calls fn for the tree t and every tree and blob under it not
// yet in seen, adding them to seen. Submodule entries are skipped.
func (w *walker) walkTree(t plumbing.Hash, seen map[plumbing.Hash]bool, fn func(plumbing.Hash)) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	fn(t)
	if err := w.tick(); err != nil {
		return err
	}
	typ, b, err := w.obj.Read(t)
	if err == nil && typ != plumbing.TreeObject {
		err = fmt.Errorf("is a %s", typ)
	}
	if err != nil {
		return fmt.Errorf("tree %s: %w", t, err)
	}
	// The walk below may evict b from the reader's cache, never change it.
	return odb.ForEachTreeEntry(b, func(e odb.TreeEntry) error {
		switch e.Mode {
		case uint32(filemode.Dir):
			return w.walkTree(e.Hash, seen, fn)
		case uint32(filemode.Submodule):
		default:
			if !seen[e.Hash] {
				seen[e.Hash] = true
				fn(e.Hash)
			}
		}
		return nil
	})
}
