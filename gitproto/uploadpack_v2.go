package gitproto

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
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
	pw := newPktWriter(w)
	pw.line("version 2")
	pw.line("%s=%s", capability.Agent, agent)
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
func (srv *Server) uploadPackV2(ctx context.Context, a *quire.Asset, body io.Reader, w io.Writer) error {
	req, err := parseV2Request(body)
	if err != nil {
		return err
	}
	switch req.command {
	case "":
		return nil
	case "ls-refs":
		return srv.lsRefs(ctx, a, req.args, w)
	case "fetch":
		return srv.fetchV2(ctx, a, req.args, w)
	default:
		return quire.Errorf(quire.EINVALID, "git upload-pack: unknown command %q; quire serves ls-refs and fetch", req.command)
	}
}

// lsRefs answers ls-refs: the refs under any ref-prefix (all without
// one), HEAD with its symref target when asked, tags peeled when asked.
func (srv *Server) lsRefs(ctx context.Context, a *quire.Asset, args []string, w io.Writer) error {
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
	r, err := srv.open(ctx, a, peel)
	if err != nil {
		return err
	}
	defer r.Close()
	// HEAD is main: list main whenever HEAD is asked for.
	lp := prefixes
	if len(prefixes) > 0 && matchPrefix(prefixes, "HEAD") {
		lp = append(slices.Clip(prefixes), mainRef.String())
	}
	refs, head, err := r.Refs(lp)
	if err != nil {
		return err
	}
	var wk *walker
	if peel {
		wk = newWalker(ctx, r)
	}
	pw := newPktWriter(w)
	if !head.IsZero() && matchPrefix(prefixes, "HEAD") {
		if symrefs {
			pw.line("%s HEAD symref-target:%s", head, mainRef)
		} else {
			pw.line("%s HEAD", head)
		}
	}
	for _, ref := range refs {
		if !matchPrefix(prefixes, ref.Name) {
			continue
		}
		if peel && strings.HasPrefix(ref.Name, "refs/tags/") {
			peeled, _, err := wk.peel(ref.Hash, nil)
			if err != nil {
				return err
			}
			if peeled != ref.Hash {
				pw.line("%s %s peeled:%s", ref.Hash, ref.Name, peeled)
				continue
			}
		}
		pw.line("%s %s", ref.Hash, ref.Name)
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
		case "deepen", "deepen-since", "deepen-not", "filter":
			if err := req.setOption(verb, arg); err != nil {
				return nil, err
			}
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
func (srv *Server) fetchV2(ctx context.Context, a *quire.Asset, args []string, w io.Writer) error {
	req, err := parseFetchV2(args)
	if err != nil {
		return err
	}
	f, err := srv.startFetch(ctx, a, req, w)
	if f == nil {
		return err
	}
	defer f.close()
	pw, wk, st, clientShallow := f.pw, f.wk, f.st, f.clientShallow
	neg := &negotiation{wk: wk, clientShallow: clientShallow}
	for _, h := range req.haves {
		known, err := f.known(h)
		if err != nil {
			return err
		}
		if !known {
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

	sh, err := f.shallowBoundary(req)
	if err != nil {
		return err
	}
	if req.depth > 0 || len(req.shallows) > 0 {
		pw.line("shallow-info")
		sh.announce(pw)
		pw.delim()
	}
	pw.line("packfile")
	if pw.err != nil {
		return pw.err
	}
	return srv.sendPack(a, f.r, st, wk, req, neg.common, clientShallow, sh, w)
}

// matchPrefix reports whether name is under one of prefixes; no prefixes
// match every name.
func matchPrefix(prefixes []string, name string) bool {
	return len(prefixes) == 0 || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}
