package gitproto

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore"
	"github.com/quire/quire/valid"
)

// pushCommand is one ref update of a push.
type pushCommand struct {
	old, new plumbing.Hash
	ref      string
	draft    int    // N of refs/heads/draft/N, else 0
	reason   string // why it is refused; "" while accepted
}

func (c *pushCommand) refuse(format string, args ...any) {
	if c.reason == "" {
		c.reason = fmt.Sprintf(format, args...)
	}
}

// Refusal reasons the git client prints as "! [remote rejected] ... (reason)".
const (
	reasonDelete   = "deleting refs is not allowed; delete or archive a draft through the API"
	reasonMain     = "main is the live version; it moves only when a version is published or promoted through the API"
	reasonTag      = "tags are made by publishing a version through the API"
	reasonOtherRef = "only refs/heads/draft/<N> of an existing draft can be pushed"
	reasonAtomic   = "atomic push failed: another ref was refused"
	reasonFsck     = "fsck error in packed object"
)

// maxPushCommands bounds the ref updates of one push.
const maxPushCommands = 1000

func parseCommands(pr *pktReader) ([]*pushCommand, map[string]bool, error) {
	bad := func(format string, args ...any) error {
		return quire.Errorf(quire.EINVALID, "git receive-pack: "+format, args...)
	}
	var cmds []*pushCommand
	caps := map[string]bool{}
	for {
		line, flush, err := pr.readLine()
		if errors.Is(err, io.EOF) {
			if len(cmds) == 0 {
				return nil, caps, nil
			}
			return nil, nil, bad("request ended inside the command list")
		}
		if err != nil {
			return nil, nil, bad("%v", err)
		}
		if flush {
			return cmds, caps, nil
		}
		if strings.HasPrefix(line, "shallow ") {
			continue // a shallow client: connectivity is checked on the objects
		}
		line, capList, hasCaps := strings.Cut(line, "\x00")
		if hasCaps && len(cmds) == 0 {
			if caps, err = decodeCaps(capList); err != nil {
				return nil, nil, bad("capabilities: %v", err)
			}
		}
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			return nil, nil, bad("malformed command %q", line)
		}
		old, ok1 := parseHash(f[0])
		nw, ok2 := parseHash(f[1])
		if !ok1 || !ok2 || f[2] == "" {
			return nil, nil, bad("malformed command %q", line)
		}
		if len(cmds) >= maxPushCommands {
			return nil, nil, bad("more than %d ref updates in one push", maxPushCommands)
		}
		cmds = append(cmds, &pushCommand{old: old, new: nw, ref: f[2]})
	}
}

// Push options are bounded like git's own receive-pack bounds nothing
// but the pkt-line: a push may carry a few short ones.
const (
	maxPushOptions   = 32
	maxPushOptionLen = 1024
)

// parseOptions reads the push options (git push -o) that follow the
// command list when the client agreed to push-options.
func parseOptions(pr *pktReader) ([]string, error) {
	var out []string
	for {
		line, flush, err := pr.readLine()
		if err != nil {
			return nil, quire.Errorf(quire.EINVALID, "git receive-pack: push options: %v", err)
		}
		if flush {
			return out, nil
		}
		if len(out) >= maxPushOptions || len(line) > maxPushOptionLen {
			return nil, quire.Errorf(quire.EINVALID, "git receive-pack: at most %d push options of %d bytes each", maxPushOptions, maxPushOptionLen)
		}
		out = append(out, line)
	}
}

// classify refuses commands that no state of the repository allows.
func classify(c *pushCommand) {
	switch {
	case c.new.IsZero():
		c.refuse(reasonDelete)
	case c.ref == mainRef.String():
		c.refuse(reasonMain)
	case strings.HasPrefix(c.ref, "refs/tags/"):
		c.refuse(reasonTag)
	case strings.HasPrefix(c.ref, "refs/heads/draft/"):
		n, err := valid.VersionNumber(strings.TrimPrefix(c.ref, "refs/heads/draft/"))
		if err != nil {
			c.refuse(reasonOtherRef)
			return
		}
		c.draft = n
	default:
		c.refuse(reasonOtherRef)
	}
}

// ReceivePack applies one push: every ref update is refused with a reason
// unless it moves refs/heads/draft/N of an existing draft forward to
// commits whose trees obey the path and size rules of the API.
func (srv *Server) ReceivePack(ctx context.Context, p quire.GitPush, body io.Reader, w io.Writer) (err error) {
	defer srv.b.observe(ctx, quire.GitOpPush, "ReceivePack")(&err)
	pr := newPktReader(body)
	cmds, caps, err := parseCommands(pr)
	if err != nil {
		return err
	}
	if len(cmds) == 0 {
		return nil
	}
	var options []string
	if caps["push-options"] {
		if options, err = parseOptions(pr); err != nil {
			return err
		}
	}
	hooks := p.Hooks
	if hooks == nil {
		hooks = admitAll{}
	}
	push, err := srv.b.openPush(p.Asset)
	if err != nil {
		return err
	}
	defer push.Close()
	refused := hooks.Refused()
	needPack := false
	for _, c := range cmds {
		if refused != nil {
			c.refuse("%s", quire.ErrorMessage(refused))
		}
		classify(c)
		needPack = needPack || !c.new.IsZero()
	}

	unpack := "ok"
	received := false
	if needPack {
		if refused != nil {
			io.Copy(io.Discard, io.LimitReader(pr.r, srv.opts.MaxPushBytes))
		} else if err := push.Receive(pr.r); err != nil {
			unpack = quire.ErrorMessage(err)
			if quire.ErrorCode(err) == quire.EINTERNAL {
				srv.opts.OnError("receive-pack", err)
			}
			for _, c := range cmds {
				c.refuse("unpacker error")
			}
		} else {
			received = true
		}
	}

	var bad *gitstore.FsckError
	if received {
		bad, err = push.Fsck(ctx)
		if err != nil {
			unpack = "internal error"
			srv.opts.OnError("receive-pack", err)
			for _, c := range cmds {
				c.refuse("unpacker error")
			}
		}
		if bad != nil {
			unpack = reasonFsck
			for _, c := range cmds {
				c.refuse("%s: %s", reasonFsck, bad)
			}
		}
	}

	for _, c := range cmds {
		if c.reason == "" {
			if err := push.Check(ctx, c.new); err != nil {
				c.refuse("%s", quire.ErrorMessage(err))
				if quire.ErrorCode(err) == quire.EINTERNAL {
					srv.opts.OnError("receive-pack", err)
				}
			}
		}
	}

	// What no pushed ref reaches is not kept: the whole pack is refused,
	// so no stray object (a hidden payload, an inflating blob) lands. It
	// runs after the per-ref checks, whose reasons say more when a ref
	// is refused for its own content.
	if received && bad == nil && unpack == "ok" {
		var tips []plumbing.Hash
		for _, c := range cmds {
			if !c.new.IsZero() {
				tips = append(tips, c.new)
			}
		}
		n, err := push.Unreached(ctx, tips)
		switch {
		case err != nil:
			unpack = "internal error"
			srv.opts.OnError("receive-pack", err)
		case n > 0:
			unpack = fmt.Sprintf("the pack holds %d objects that no pushed ref reaches; quire keeps none", n)
		}
		if unpack != "ok" {
			for _, c := range cmds {
				c.refuse("unpacker error")
			}
		}
	}

	// Intents of the moves are recorded before them, so a crash between a
	// move and its event loses no event (app/intents.go).
	announced := false
	if moving := draftMoves(cmds); len(moving) > 0 {
		if err := hooks.Moving(ctx, moving); err != nil {
			srv.opts.OnError("receive-pack", err)
			for _, c := range cmds {
				c.refuse("the push could not be recorded in the event log")
			}
		} else {
			announced = true
		}
	}
	applyErr := applyPush(push, hooks, p.By, cmds, caps["atomic"])
	if applyErr != nil {
		srv.opts.OnError("receive-pack", applyErr)
		for _, c := range cmds {
			c.refuse("internal error")
		}
	}
	// The drafts moved: their events are recorded before the report says
	// "ok", as an API write's are before its answer.
	var moves []quire.DraftMove
	if applyErr == nil {
		moves = draftMoves(cmds)
	}
	if len(moves) > 0 || announced {
		if err := hooks.Moved(ctx, moves, applyErr); err != nil {
			srv.opts.OnError("receive-pack", err)
			for _, c := range cmds {
				c.refuse("the draft moved, but its event could not be recorded")
			}
		}
	}

	var notes []string
	if len(options) > 0 {
		var moved []int
		for _, c := range cmds {
			if c.reason == "" && c.draft > 0 {
				moved = append(moved, c.draft)
			}
		}
		if len(moved) > 0 {
			notes = hooks.Options(ctx, options, moved)
		}
	}

	sb := newSideband(w, caps["side-band-64k"] || caps["side-band"], !caps["side-band-64k"])
	for _, n := range notes { // asked for with -o: shown even with --quiet
		sb.progress("%s\n", oneLine(n))
	}
	if bad != nil { // as git's index-pack --strict says it
		sb.progress("error: object %s: %s\nfatal: %s\n", bad.Hash, bad.Err, reasonFsck)
	} else if unpack != "ok" { // shown as remote: lines, then git's own report
		sb.progress("quire: push refused: %s\n", oneLine(unpack))
	}
	if !caps["quiet"] {
		for _, c := range cmds {
			if c.reason == "" {
				sb.progress("quire: draft %d of %s %s is now at %s\n", c.draft, p.Asset.Kind, p.Asset.Slug, c.new.String()[:12])
			}
		}
	}
	if caps["report-status"] {
		var rep strings.Builder
		pw := newPktWriter(&rep)
		pw.line("unpack %s", oneLine(unpack))
		for _, c := range cmds {
			if c.reason == "" {
				pw.line("ok %s", c.ref)
			} else {
				pw.line("ng %s %s", c.ref, oneLine(c.reason))
			}
		}
		pw.flush()
		sb.Write([]byte(rep.String()))
	}
	sb.close()
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// draftMoves are the ref updates of cmds not refused.
func draftMoves(cmds []*pushCommand) []quire.DraftMove {
	var moves []quire.DraftMove
	for _, c := range cmds {
		if c.reason == "" {
			moves = append(moves, quire.DraftMove{Version: c.draft, Old: c.old.String(), New: c.new.String()})
		}
	}
	return moves
}

// applyPush updates the refs of the accepted commands under the
// repository's write lock: hooks admit each move (app: the draft must
// still be a draft at the commit the client saw, and move forward), then
// each ref moves by compare-and-swap, recorded on the versions log as
// by's.
func applyPush(push Push, hooks quire.PushHooks, by quire.Actor, cmds []*pushCommand, atomic bool) error {
	pending := false
	for _, c := range cmds {
		pending = pending || c.reason == ""
	}
	if !pending {
		return nil
	}
	unlock, err := push.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	for _, c := range cmds {
		if c.reason != "" {
			continue
		}
		err := hooks.Admit(draftRefs{push}, quire.DraftMove{Version: c.draft, Old: c.old.String(), New: c.new.String()})
		switch {
		case err == nil:
		case quire.ErrorCode(err) == quire.EINTERNAL:
			return err
		default:
			c.refuse("%s", quire.ErrorMessage(err))
		}
	}
	accepted := 0
	for _, c := range cmds {
		if c.reason == "" {
			accepted++
		}
	}
	if atomic && accepted != len(cmds) {
		for _, c := range cmds {
			c.refuse(reasonAtomic)
		}
		accepted = 0
	}
	if accepted == 0 {
		return nil
	}
	if err := push.Install(); err != nil {
		return err
	}
	for _, c := range cmds {
		if c.reason != "" {
			continue
		}
		err := push.Move(by, c.draft, c.old, c.new)
		if errors.Is(err, gitstore.ErrRefChanged) {
			c.refuse("draft %d changed concurrently; fetch and retry", c.draft)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// draftRefs is a Push as PushHooks.Admit reads it: commits as hex ids.
type draftRefs struct{ push Push }

func (r draftRefs) Draft(n int) (quire.VersionState, string, error) {
	state, commit, err := r.push.Draft(n)
	return state, commit.String(), err
}

func (r draftRefs) IsAncestor(old, new string) (bool, error) {
	a, okA := parseHash(old)
	b, okB := parseHash(new)
	if !okA || !okB {
		return false, quire.Errorf(quire.EINVALID, "not a commit id")
	}
	return r.push.IsAncestor(a, b)
}

// admitAll are the hooks of a push without a use case (the protocol's
// own tests): every update the protocol accepts moves, by
// compare-and-swap, and nothing is recorded.
type admitAll struct{}

func (admitAll) Refused() error                                        { return nil }
func (admitAll) Admit(quire.DraftRefs, quire.DraftMove) error          { return nil }
func (admitAll) Moving(context.Context, []quire.DraftMove) error       { return nil }
func (admitAll) Moved(context.Context, []quire.DraftMove, error) error { return nil }
func (admitAll) Options(context.Context, []string, []int) []string     { return nil }
