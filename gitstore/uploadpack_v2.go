package gitstore

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quire/quire"
)

// Protocol v2 (git's Documentation/gitprotocol-v2.txt), as git 2.39 asks
// for by default with "Git-Protocol: version=2": info/refs answers the
// capabilities, then each POST carries one command. ls-refs lists only
// the refs under the prefixes the client names (a fetch of one branch no
// longer reads every draft), and fetch negotiates as v0's stateless
// rounds do, with v2's sectioned response.

// advertiseV2 writes the v2 capability advertisement. As git
// http-backend does for v2, there is no "# service=" preamble.
func advertiseV2(w io.Writer) error {
	pw := &pktWriter{w: w}
	pw.line("version 2")
	pw.line(gitAgent)
	pw.line("ls-refs")
	pw.line("fetch=shallow filter")
	pw.line("object-format=sha1")
	pw.flush()
	return pw.err
}

// v2Request is one v2 command with its arguments.
type v2Request struct {
	command string
	args    []string
}

func parseV2Request(body io.Reader) (*v2Request, error) {
	bad := func(format string, args ...any) error {
		return quire.Errorf(quire.EINVALID, "git upload-pack: "+format, args...)
	}
	pr := newPktReader(body)
	req := &v2Request{}
	inArgs := false
	for {
		kind, b, err := pr.read()
		if err != nil {
			return nil, bad("%v", err)
		}
		switch kind {
		case pktEOF:
			if req.command == "" {
				return req, nil // an empty request: nothing to answer
			}
			return nil, bad("request ended before its flush")
		case pktFlush:
			return req, nil
		case pktDelim:
			if inArgs {
				return nil, bad("unexpected delimiter")
			}
			inArgs = true
			continue
		case pktEnd:
			return nil, bad("unexpected response-end packet")
		}
		line := strings.TrimSuffix(string(b), "\n")
		if inArgs {
			req.args = append(req.args, line)
			continue
		}
		key, val, _ := strings.Cut(line, "=")
		switch key {
		case "command":
			if req.command != "" {
				return nil, bad("two commands in one request")
			}
			req.command = val
		case "object-format":
			if val != "sha1" {
				return nil, bad("object-format %q is not supported; quire repositories use sha1", val)
			}
		case "agent", "server-option", "session-id":
		default:
			return nil, bad("unexpected capability %q", line)
		}
	}
}

// uploadPackV2 answers one v2 command.
func (g *Git) uploadPackV2(ctx context.Context, a *quire.Asset, body io.Reader, w io.Writer) error {
	req, err := parseV2Request(body)
	if err != nil {
		return err
	}
	switch req.command {
	case "":
		return nil
	case "ls-refs":
		return g.lsRefs(ctx, a, req.args, w)
	case "fetch":
		return g.fetchV2(ctx, a, req.args, w)
	default:
		return quire.Errorf(quire.EINVALID, "git upload-pack: unknown command %q; quire serves ls-refs and fetch", req.command)
	}
}

// lsRefs answers ls-refs: the refs under any ref-prefix (all without
// one), HEAD with its symref target when asked, tags peeled when asked.
func (g *Git) lsRefs(ctx context.Context, a *quire.Asset, args []string, w io.Writer) error {
	var peel, symrefs bool
	var prefixes []string
	for _, arg := range args {
		switch {
		case arg == "peel":
			peel = true
		case arg == "symrefs":
			symrefs = true
		case arg == "unborn":
			// Not advertised: a repository with nothing live lists no HEAD.
		case strings.HasPrefix(arg, "ref-prefix "):
			prefixes = append(prefixes, strings.TrimPrefix(arg, "ref-prefix "))
		default:
			return quire.Errorf(quire.EINVALID, "git upload-pack: unexpected ls-refs argument %q", arg)
		}
	}
	// As git does, a client naming very many prefixes gets every ref.
	if len(prefixes) > 65536 {
		prefixes = nil
	}
	m := refMatcher(prefixes)
	r, err := g.gitRepo(a)
	if err != nil {
		return err
	}
	// HEAD is main: list main whenever HEAD is asked for.
	lm := m
	if len(m) > 0 && m.match("HEAD") {
		lm = append(slices.Clip(m), mainRef.String())
	}
	refs, head, err := listRefs(r, lm)
	if err != nil {
		return err
	}
	var wk *walker
	if peel {
		ps, err := g.idx.OpenPacks(r.path)
		if err != nil {
			return err
		}
		defer ps.Close()
		wk = newWalker(ctx, r, ps)
	}
	pw := &pktWriter{w: w}
	if !head.IsZero() && m.match("HEAD") {
		if symrefs {
			pw.line("%s HEAD symref-target:%s", head, mainRef)
		} else {
			pw.line("%s HEAD", head)
		}
	}
	for _, ref := range refs {
		if !m.match(ref.name) {
			continue
		}
		if peel && strings.HasPrefix(ref.name, "refs/tags/") {
			peeled, _, err := wk.peel(ref.hash, nil)
			if err != nil {
				return err
			}
			if peeled != ref.hash {
				pw.line("%s %s peeled:%s", ref.hash, ref.name, peeled)
				continue
			}
		}
		pw.line("%s %s", ref.hash, ref.name)
	}
	pw.flush()
	return pw.err
}

// parseFetchV2 reads the arguments of a v2 fetch into the request v0
// rounds use; v2's arguments stand for v0's capabilities.
func parseFetchV2(args []string) (*uploadRequest, error) {
	bad := func(format string, args ...any) error {
		return quire.Errorf(quire.EINVALID, "git upload-pack: "+format, args...)
	}
	// v2 always multiplexes the pack with 64k side-band packets.
	req := &uploadRequest{caps: map[string]bool{"side-band-64k": true}}
	hash := func(line, arg string) (plumbing.Hash, error) {
		h, ok := parseHash(arg)
		if !ok {
			return h, bad("expected an object id, got %q", line)
		}
		return h, nil
	}
	for _, line := range args {
		verb, arg, _ := strings.Cut(line, " ")
		switch verb {
		case "want", "have", "shallow":
			h, err := hash(line, arg)
			if err != nil {
				return nil, err
			}
			switch verb {
			case "want":
				req.wants = append(req.wants, h)
			case "have":
				req.haves = append(req.haves, h)
			default:
				req.shallows = append(req.shallows, h)
			}
		case "done":
			req.done = true
		case "thin-pack":
			// Never sent: quire's packs are whole (see uploadPackCaps).
		case "no-progress", "include-tag", "ofs-delta", "deepen-relative":
			req.caps[verb] = true
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
			return nil, bad("unexpected fetch argument %q", line)
		}
	}
	if len(req.wants) == 0 {
		return nil, bad("fetch without a want")
	}
	return req, nil
}

// fetchV2 answers a v2 fetch: the acknowledgments of a negotiation round,
// then, once the client is done or every want reaches a common commit,
// the shallow-info and packfile sections.
func (g *Git) fetchV2(ctx context.Context, a *quire.Asset, args []string, w io.Writer) error {
	req, err := parseFetchV2(args)
	if err != nil {
		return err
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

	clientShallow := map[plumbing.Hash]bool{}
	for _, h := range req.shallows {
		clientShallow[h] = true
	}
	neg := &negotiation{wk: wk, clientShallow: clientShallow}
	for _, h := range req.haves {
		if !wk.obj.Has(h) {
			continue
		}
		if err := neg.have(h); err != nil {
			return err
		}
	}
	if !req.done {
		pw.line("acknowledgments")
		if len(neg.common) == 0 {
			pw.line("NAK")
		}
		for _, h := range neg.common {
			pw.line("ACK %s", h)
		}
		if !neg.okToGiveUp(req.wants) {
			pw.flush()
			return pw.err
		}
		pw.line("ready")
		pw.delim()
	}

	sh := &shallowInfo{cut: map[plumbing.Hash]bool{}}
	if req.depth > 0 {
		if sh, err = wk.deepen(req.wants, clientShallow, req.depth, req.caps["deepen-relative"]); err != nil {
			return err
		}
	} else {
		for h := range clientShallow {
			sh.cut[h] = true
		}
	}
	if req.depth > 0 || len(req.shallows) > 0 {
		pw.line("shallow-info")
		for _, h := range sh.shallow {
			pw.line("shallow %s", h)
		}
		for _, h := range sh.unshallow {
			pw.line("unshallow %s", h)
		}
		pw.delim()
	}
	pw.line("packfile")
	if pw.err != nil {
		return pw.err
	}
	return g.sendPack(ctx, a, r, st, wk, req, neg.common, clientShallow, sh, w)
}

// listRefs lists the advertised refs of r that m matches, sorted by
// name, without peeling tags, and the live commit (zero when nothing is
// live or m does not match main).
func listRefs(r *repo, m refMatcher) ([]advRef, plumbing.Hash, error) {
	refs, err := listLooseRefs(r.path, m)
	if errors.Is(err, errRefFallback) {
		refs, err = listRefsGoGit(r, m)
	}
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	sortRefs(refs)
	var head plumbing.Hash
	for _, ref := range refs {
		if ref.name == mainRef.String() {
			head = ref.hash
		}
	}
	return refs, head, nil
}

// listRefsGoGit lists refs through go-git, packed ones included.
func listRefsGoGit(r *repo, m refMatcher) ([]advRef, error) {
	it, err := r.st.IterReferences()
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var refs []advRef
	err = it.ForEach(func(ref *plumbing.Reference) error {
		name := ref.Name().String()
		if ref.Type() == plumbing.HashReference && visibleRef(name) && m.match(name) {
			refs = append(refs, advRef{name: name, hash: ref.Hash()})
		}
		return nil
	})
	return refs, err
}
