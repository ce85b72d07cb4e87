package gitproto

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
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

// setFilter records a filter spec, or a refusal git prints.
func (req *uploadRequest) setFilter(spec string) {
	f, err := parseFilter(spec)
	if err != nil {
		req.refuse = err.Error()
		return
	}
	req.filter = f
}

// setOption records one of the arguments v0 and v2 share: deepen, the
// shallow-since and shallow-exclude git may ask for (refused), filter.
func (req *uploadRequest) setOption(verb, arg string) error {
	switch verb {
	case "deepen":
		n, err := strconv.Atoi(arg)
		if err != nil || n <= 0 {
			return quire.Errorf(quire.EINVALID, "git upload-pack: invalid deepen %q", arg)
		}
		req.depth = n
	case "deepen-since", "deepen-not":
		req.refuse = "quire supports --depth but not --shallow-since or --shallow-exclude"
	case "filter":
		req.setFilter(arg)
	}
	return nil
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
				if req.caps, err = decodeCaps(caps); err != nil {
					return nil, bad("capabilities: %v", err)
				}
			}
			req.wants = append(req.wants, h)
		case "shallow":
			h, ok := parseHash(arg)
			if !ok {
				return nil, bad("expected an object id, got %q", line)
			}
			req.shallows = append(req.shallows, h)
		case "deepen", "deepen-since", "deepen-not", "filter":
			if err := req.setOption(verb, arg); err != nil {
				return nil, err
			}
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
func (srv *Server) UploadPack(ctx context.Context, a *quire.Asset, protocol int, body io.Reader, w io.Writer) (err error) {
	defer srv.b.observe(ctx, quire.GitOpClone, "UploadPack")(&err)
	if protocol == 2 {
		return srv.uploadPackV2(ctx, a, io.LimitReader(body, srv.opts.MaxRequestBytes), w)
	}
	req, err := parseUploadRequest(io.LimitReader(body, srv.opts.MaxRequestBytes))
	if err != nil {
		return err
	}
	if len(req.wants) == 0 {
		return nil
	}
	f, err := srv.startFetch(ctx, a, req, w)
	if f == nil {
		return err
	}
	defer f.close()
	pw, wk, st, clientShallow := f.pw, f.wk, f.st, f.clientShallow

	// Shallow: what the client will have without parents.
	sh, err := f.shallowBoundary(req)
	if err != nil {
		return err
	}
	if req.depth > 0 {
		sh.announce(pw)
		pw.flush()
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
		known, err := f.known(h)
		if err != nil {
			return err
		}
		if !known {
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
	return srv.sendPack(a, f.r, st, wk, req, neg.common, clientShallow, sh, w)
}

// sendPack writes the pack for a finished negotiation, from the cache when
// the same tips were packed for a client with nothing.
func (srv *Server) sendPack(a *quire.Asset, r Repository, st *refState, wk *walker, req *uploadRequest, common []plumbing.Hash, clientShallow map[plumbing.Hash]bool, sh *shallowInfo, w io.Writer) error {
	sb := newSideband(w, req.caps["side-band-64k"] || req.caps["side-band"], !req.caps["side-band-64k"])
	progress := !req.caps["no-progress"]
	ofs := req.caps["ofs-delta"]
	includeTag := req.caps["include-tag"]

	key := ""
	if len(common) == 0 {
		key = packKey(a.ID, st, req, sh, ofs, includeTag)
		if pack, objects, ok := r.CachedPack(key); ok {
			if progress {
				sb.progress("quire: %d objects, pack reused from cache\n", objects)
			}
			if _, err := sb.Write(pack); err != nil {
				return nil // the client went away
			}
			sb.close()
			return nil
		}
	}
	objs, err := wk.objectsToSend(st, req.wants, common, clientShallow, sh, includeTag, req.filter)
	if err != nil {
		srv.opts.OnError("upload-pack", err)
		sb.fail("quire: could not list objects to send")
		return nil
	}
	var out io.Writer = sb
	var keep *capBuffer
	if key != "" {
		keep = &capBuffer{max: srv.opts.PackCacheEntry}
		out = io.MultiWriter(sb, keep)
	}
	stats, err := r.WritePack(objs, ofs, out)
	if err != nil {
		if sb.err == nil {
			srv.opts.OnError("upload-pack", err)
			sb.fail("quire: could not build the pack")
		}
		return nil
	}
	if progress {
		sb.progress("quire: %d objects (%d copied as stored, %d deltas, %d compressed)\n", stats.Objects, stats.Reused, stats.Deltas, stats.Whole)
	}
	sb.close()
	if keep != nil && !keep.over {
		r.CachePack(key, bytes.Clone(keep.buf.Bytes()), stats.Objects)
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

// negotiation tracks the haves of one request.
type negotiation struct {
	wk            *walker
	clientShallow map[plumbing.Hash]bool
	common        []plumbing.Hash
	inCommon      map[plumbing.Hash]bool // common as a set: haves are many
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
		n.inCommon = map[plumbing.Hash]bool{}
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
		if n.theyHave[target] && n.inCommon[h] {
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
	if !n.inCommon[h] {
		n.inCommon[h] = true
		n.common = append(n.common, h)
	}
	return nil
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

// fetch is an upload request under way: the repository open, the wants
// checked against its refs, and the commits the client has without
// parents (its shallow boundary).
type fetch struct {
	r             Repository
	pw            *pktWriter
	wk            *walker
	st            *refState
	clientShallow map[plumbing.Hash]bool
	// restricted: the caller sees published versions only
	// (quire.PublishedOnly); visible is then what it may be told of.
	restricted bool
	visible    map[plumbing.Hash]bool
}

func (f *fetch) close() { f.r.Close() }

// known says whether the negotiation may acknowledge a have of h. A
// caller limited to published versions is told only of the tips it was
// shown and the commits they reach: acknowledging any other object the
// repository holds (a draft's commit or blob, a review's, a label log's)
// would confirm that it exists. The walk is made once per request, over
// the visible history, on the first have.
func (f *fetch) known(h plumbing.Hash) (bool, error) {
	if !f.restricted {
		return f.wk.r.Has(h), nil
	}
	if f.visible == nil {
		f.visible = map[plumbing.Hash]bool{}
		var stack []plumbing.Hash
		for tip := range f.st.tips {
			stack = append(stack, tip)
		}
		for len(stack) > 0 {
			c := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if f.visible[c] {
				continue
			}
			f.visible[c] = true
			ci, err := f.wk.commit(c)
			if err != nil {
				if cerr := f.wk.ctx.Err(); cerr != nil {
					return false, cerr
				}
				continue // a tag object: a tip, but no commit
			}
			stack = append(stack, ci.parents...)
		}
	}
	return f.visible[h], nil
}

// shallowBoundary is where the history the client will have stops: the
// boundary a deepen request asks for, or else the client's own shallow
// commits, whose parents it does not have.
func (f *fetch) shallowBoundary(req *uploadRequest) (*shallowInfo, error) {
	if req.depth > 0 {
		return f.wk.deepen(req.wants, f.clientShallow, req.depth, req.caps["deepen-relative"])
	}
	sh := &shallowInfo{cut: map[plumbing.Hash]bool{}}
	for h := range f.clientShallow {
		sh.cut[h] = true
	}
	return sh, nil
}

// announce writes the shallow and unshallow lines of sh, the same in v0
// and v2 (shallow-info section).
func (sh *shallowInfo) announce(pw *pktWriter) {
	for _, h := range sh.shallow {
		pw.line("shallow %s", h)
	}
	for _, h := range sh.unshallow {
		pw.line("unshallow %s", h)
	}
}

// startFetch opens a's repository for req and checks its wants, the start
// v0 and v2 share. A nil fetch means the answer is given: err, or a
// refusal already written to w (req.refuse, a want not reachable from an
// advertised ref).
func (srv *Server) startFetch(ctx context.Context, a *quire.Asset, req *uploadRequest, w io.Writer) (*fetch, error) {
	r, err := srv.open(ctx, a, true)
	if err != nil {
		return nil, err
	}
	f := &fetch{r: r, pw: newPktWriter(w), wk: newWalker(ctx, r), clientShallow: map[plumbing.Hash]bool{}, restricted: quire.PublishedOnly(ctx)}
	if req.refuse != "" {
		r.Close()
		f.pw.line("ERR %s", req.refuse)
		return nil, f.pw.err
	}
	if f.st, err = readRefs(f.wk, true); err != nil {
		r.Close()
		return nil, err
	}
	if h, err := f.wk.checkWants(f.st, req.wants); err != nil || !h.IsZero() {
		r.Close()
		if err != nil {
			return nil, err
		}
		f.pw.line("ERR upload-pack: not our ref %s", h)
		return nil, f.pw.err
	}
	for _, h := range req.shallows {
		f.clientShallow[h] = true
	}
	return f, nil
}
