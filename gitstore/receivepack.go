package gitstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/quire/quire/gitstore/odb"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	gogitstorer "github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
	"github.com/quire/quire"
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
	reasonNonFF    = "non-fast-forward: fetch, then merge or rebase before pushing"
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
			for _, c := range strings.Fields(capList) {
				name, _, _ := strings.Cut(c, "=")
				caps[name] = true
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
func (g *Git) ReceivePack(ctx context.Context, p quire.GitPush, body io.Reader, w io.Writer) (err error) {
	defer g.s.observe(ctx, quire.GitOpPush, "ReceivePack")(&err)
	pr := newPktReader(body)
	cmds, caps, err := parseCommands(pr)
	if err != nil {
		return err
	}
	if len(cmds) == 0 {
		return nil
	}
	r, err := g.gitRepo(p.Asset)
	if err != nil {
		return err
	}
	needPack := false
	for _, c := range cmds {
		if p.Refused != nil {
			c.refuse("%s", quire.ErrorMessage(p.Refused))
		}
		classify(c)
		needPack = needPack || !c.new.IsZero()
	}

	unpack := "ok"
	var q *quarantine
	if needPack {
		if p.Refused != nil {
			io.Copy(io.Discard, io.LimitReader(pr.r, g.opts.MaxPushBytes))
		} else {
			q, err = g.receivePackfile(r, pr.r)
			if err != nil {
				unpack = quire.ErrorMessage(err)
				if quire.ErrorCode(err) == quire.EINTERNAL {
					g.opts.OnError("receive-pack", err)
				}
				for _, c := range cmds {
					c.refuse("unpacker error")
				}
			}
		}
	}
	defer q.discard()

	var bad *packFsckError
	if q != nil && unpack == "ok" {
		bad, err = q.fsck(ctx)
		if err != nil {
			unpack = "internal error"
			g.opts.OnError("receive-pack", err)
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

	objs := &pushObjects{q: q, r: r}
	check := newPushChecker(g.s, objs)
	check.kind = p.Asset.Kind
	for _, c := range cmds {
		if c.reason == "" {
			if err := check.commits(ctx, c.new); err != nil {
				c.refuse("%s", quire.ErrorMessage(err))
				if quire.ErrorCode(err) == quire.EINTERNAL {
					g.opts.OnError("receive-pack", err)
				}
			}
		}
	}

	updated, err := g.applyPush(r, p.By, cmds, objs, q, caps["atomic"])
	if err != nil {
		g.opts.OnError("receive-pack", err)
		for _, c := range cmds {
			c.refuse("internal error")
		}
	}
	if updated {
		g.s.changed(p.Asset)
	}

	sb := newSideband(w, caps["side-band-64k"] || caps["side-band"], !caps["side-band-64k"])
	if bad != nil { // as git's index-pack --strict says it
		sb.progress("error: object %s: %s\nfatal: %s\n", bad.hash, bad.err, reasonFsck)
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
		pw := &pktWriter{w: &rep}
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

// applyPush updates the refs of the accepted commands under the
// repository's write lock: each draft must still be a draft at the commit
// the client saw (compare-and-swap), and move forward. It reports whether
// a ref moved. Each move is recorded on the versions log as by's
// (recordPush).
func (g *Git) applyPush(r *repo, by quire.Actor, cmds []*pushCommand, objs *pushObjects, q *quarantine, atomic bool) (bool, error) {
	pending := false
	for _, c := range cmds {
		pending = pending || c.reason == ""
	}
	if !pending {
		return false, nil
	}
	unlock, err := g.s.locks.lock(r.path)
	if err != nil {
		return false, err
	}
	defer unlock()
	for _, c := range cmds {
		if c.reason != "" {
			continue
		}
		v, err := r.state(c.draft)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			c.refuse("draft %d does not exist; create it through the API", c.draft)
			continue
		}
		if err != nil {
			return false, err
		}
		if v.state != quire.StateDraft {
			c.refuse("version %d is %s; only a draft accepts pushes", c.draft, v.state)
			continue
		}
		if v.commit != c.old {
			c.refuse("draft %d is at %s, not %s: fetch and retry", c.draft, short(v.commit), short(c.old))
			continue
		}
		ff, err := isAncestor(objs, v.commit, c.new)
		if err != nil {
			return false, err
		}
		if !ff {
			c.refuse(reasonNonFF)
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
		return false, nil
	}
	if q != nil {
		if err := q.install(r.path, g.s.opts.Fsync); err != nil {
			return false, err
		}
		r.st.Reindex()
	}
	moved := false
	for _, c := range cmds {
		if c.reason != "" {
			continue
		}
		undo, err := g.recordPush(r, by, objs, c)
		if err != nil {
			return moved, err
		}
		err = r.casRef(DraftRef(c.draft), c.old, c.new)
		if err != nil {
			undo()
		}
		if errors.Is(err, storage.ErrReferenceHasChanged) {
			c.refuse("draft %d changed concurrently; fetch and retry", c.draft)
			continue
		}
		if err != nil {
			return moved, err
		}
		moved = true
	}
	return moved, nil
}

func short(h plumbing.Hash) string {
	if h.IsZero() {
		return "nothing"
	}
	return h.String()[:12]
}

// isAncestor reports whether a is reachable from b (a fast-forward from a to b).
func isAncestor(objs *pushObjects, a, b plumbing.Hash) (bool, error) {
	seen := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{b}
	for len(queue) > 0 {
		h := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if h == a {
			return true, nil
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := object.GetCommit(objs, h)
		if err != nil {
			return false, err
		}
		queue = append(queue, c.ParentHashes...)
	}
	return false, nil
}

// quarantine is a received pack kept outside the object store until a ref
// update accepts it, so refused pushes leave nothing behind.
type quarantine struct {
	dir      string
	name     string // pack-<checksum>
	idx      *idxfile.MemoryIndex
	pack     *packfile.Packfile
	objects  map[plumbing.Hash]bool
	empty    bool
	checksum plumbing.Hash
}

// receivePackfile stores the pack of a push in quarantine and indexes it.
func (g *Git) receivePackfile(r *repo, src io.Reader) (*quarantine, error) {
	dir, err := os.MkdirTemp(r.path, "incoming-")
	if err != nil {
		return nil, err
	}
	q := &quarantine{dir: dir, objects: map[plumbing.Hash]bool{}}
	f, err := os.Create(filepath.Join(dir, "tmp.pack"))
	if err != nil {
		q.discard()
		return nil, err
	}
	n, err := io.Copy(f, io.LimitReader(src, g.opts.MaxPushBytes+1))
	if err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	if err != nil {
		q.discard()
		return nil, err
	}
	if n > g.opts.MaxPushBytes {
		q.discard()
		return nil, quire.Errorf(quire.ETOOLARGE, "the pack is larger than the push limit of %d bytes", g.opts.MaxPushBytes)
	}
	if n == 0 {
		q.empty = true
		return q, nil
	}
	if err := q.index(g.s.opts.Limits); err != nil {
		q.discard()
		return nil, err
	}
	return q, nil
}

// maxPushObject bounds any object of a push before it is inflated: blobs
// obey MaxFile (checked later with a clear message), trees and commits are
// small; this only stops a pack from making the server inflate gigabytes.
func maxPushObject(l quire.Limits) int64 {
	return max(l.MaxFile, 16<<20)
}

// index checks object sizes, parses the pack and builds its index.
func (q *quarantine) index(l quire.Limits) error {
	if err := prescan(filepath.Join(q.dir, "tmp.pack"), maxPushObject(l)); err != nil {
		return err
	}
	f, err := osfs.New(q.dir).Open("tmp.pack")
	if err != nil {
		return err
	}
	iw := new(idxfile.Writer)
	parser, err := packfile.NewParser(packfile.NewScanner(f), iw)
	if err != nil {
		f.Close()
		return err
	}
	sum, err := parser.Parse()
	f.Close()
	if errors.Is(err, packfile.ErrReferenceDeltaNotFound) {
		return quire.Errorf(quire.EINVALID, "thin packs are not accepted (the server advertises no-thin)")
	}
	if err != nil {
		return quire.Errorf(quire.EINVALID, "invalid pack: %v", err)
	}
	idx, err := iw.Index()
	if err != nil {
		return quire.Errorf(quire.EINVALID, "invalid pack: %v", err)
	}
	q.idx, q.checksum, q.name = idx, sum, "pack-"+sum.String()
	it, err := idx.Entries()
	if err != nil {
		return err
	}
	for {
		e, err := it.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		q.objects[e.Hash] = true
	}
	it.Close()
	pf, err := osfs.New(q.dir).Open("tmp.pack")
	if err != nil {
		return err
	}
	q.pack = packfile.NewPackfile(idx, nil, pf, 0)
	return nil
}

// prescan reads every object header of the pack at path, and the sizes a
// delta declares, refusing objects larger than limit before anything is
// inflated into memory.
func prescan(path string, limit int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := packfile.NewScanner(struct{ io.Reader }{f}) // read once, forward
	_, count, err := sc.Header()
	if err != nil {
		return quire.Errorf(quire.EINVALID, "invalid pack: %v", err)
	}
	tooBig := func(n int64) error {
		return quire.Errorf(quire.ETOOLARGE, "the pack holds an object of %d bytes; the limit is %d", n, limit)
	}
	head := &deltaHead{}
	for range count {
		oh, err := sc.NextObjectHeader()
		if err != nil {
			return quire.Errorf(quire.EINVALID, "invalid pack: %v", err)
		}
		if oh.Length > limit {
			return tooBig(oh.Length)
		}
		head.n = 0
		if _, _, err := sc.NextObject(head); err != nil {
			return quire.Errorf(quire.EINVALID, "invalid pack: %v", err)
		}
		if oh.Type.IsDelta() {
			if target := head.targetSize(); target > limit || target < 0 {
				return tooBig(target)
			}
		}
	}
	return nil
}

// deltaHead keeps the first bytes of an inflated delta: its source and
// target sizes.
type deltaHead struct {
	b [32]byte
	n int
}

func (d *deltaHead) Write(p []byte) (int, error) {
	if d.n < len(d.b) {
		d.n += copy(d.b[d.n:], p)
	}
	return len(p), nil
}

func (d *deltaHead) targetSize() int64 {
	b := d.b[:d.n]
	varint := func() int64 {
		var v int64
		shift := uint(0)
		for len(b) > 0 {
			c := b[0]
			b = b[1:]
			v |= int64(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 || shift > 56 {
				return v
			}
		}
		return -1
	}
	if varint() < 0 {
		return -1
	}
	return varint()
}

// install moves the quarantined pack into the repository at dir. The index
// goes first: go-git lists packs by their .pack file.
func (q *quarantine) install(dir string, fsync bool) error {
	if q.empty || len(q.objects) == 0 {
		return nil
	}
	packDir := filepath.Join(dir, "objects", "pack")
	if err := os.MkdirAll(packDir, 0o755); err != nil {
		return err
	}
	dst := filepath.Join(packDir, q.name)
	if _, err := os.Stat(dst + ".pack"); err == nil {
		return nil // the same pack was pushed before
	}
	idxTmp := filepath.Join(q.dir, "tmp.idx")
	f, err := os.Create(idxTmp)
	if err != nil {
		return err
	}
	if _, err := idxfile.NewEncoder(f).Encode(q.idx); err != nil {
		f.Close()
		return err
	}
	if fsync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if fsync {
		if err := odb.SyncPath(filepath.Join(q.dir, "tmp.pack")); err != nil {
			return err
		}
	}
	if err := os.Rename(idxTmp, dst+".idx"); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(q.dir, "tmp.pack"), dst+".pack"); err != nil {
		os.Remove(dst + ".idx")
		return err
	}
	if fsync {
		return odb.SyncPath(dst + ".pack")
	}
	return nil
}

// packFsckError is an object of a pushed pack that git fsck refuses.
type packFsckError struct {
	typ  plumbing.ObjectType
	hash plumbing.Hash
	err  *odb.FsckError
}

func (e *packFsckError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.typ, short(e.hash), e.err)
}

// fsck checks every commit, tree and tag of the pack, reachable or not, as
// git receive-pack does with receive.fsckObjects (odb/fsck.go), and reports the
// first one git fsck --strict would refuse. Blobs are not read: their
// rules are the path and content checks of pushChecker.
func (q *quarantine) fsck(ctx context.Context) (*packFsckError, error) {
	if q.pack == nil {
		return nil, nil
	}
	opts := odb.FsckOptions{NoGitmodules: true}
	for _, t := range []plumbing.ObjectType{plumbing.CommitObject, plumbing.TreeObject, plumbing.TagObject} {
		it, err := q.pack.GetByType(t)
		if err != nil {
			return nil, err
		}
		bad, err := fsckEach(ctx, it, t, opts)
		if err != nil || bad != nil {
			return bad, err
		}
	}
	return nil, nil
}

// fsckEach checks the objects of type t that it yields.
func fsckEach(ctx context.Context, it gogitstorer.EncodedObjectIter, t plumbing.ObjectType, opts odb.FsckOptions) (*packFsckError, error) {
	defer it.Close()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		obj, err := it.Next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		rd, err := obj.Reader()
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(rd)
		rd.Close()
		if err != nil {
			return nil, err
		}
		if e := odb.FsckObject(t, b, opts); e != nil {
			return &packFsckError{typ: t, hash: obj.Hash(), err: e}, nil
		}
	}
}

// discard removes whatever is left of the quarantine.
func (q *quarantine) discard() {
	if q == nil {
		return
	}
	if q.pack != nil {
		q.pack.Close()
		q.pack = nil
	}
	os.RemoveAll(q.dir)
}

// pushObjects reads objects from the quarantined pack, then the repository.
type pushObjects struct {
	q *quarantine
	r *repo
}

var _ gogitstorer.EncodedObjectStorer = (*pushObjects)(nil)

func (o *pushObjects) inPack(h plumbing.Hash) bool {
	return o.q != nil && o.q.objects[h]
}

func (o *pushObjects) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (o *pushObjects) SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error) {
	return plumbing.ZeroHash, errors.New("read only")
}

func (o *pushObjects) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o.inPack(h) {
		obj, err := o.q.pack.Get(h)
		if err != nil {
			return nil, err
		}
		if t != plumbing.AnyObject && obj.Type() != t {
			return nil, plumbing.ErrObjectNotFound
		}
		return obj, nil
	}
	return o.r.st.EncodedObject(t, h)
}

func (o *pushObjects) IterEncodedObjects(plumbing.ObjectType) (gogitstorer.EncodedObjectIter, error) {
	return nil, errors.New("not supported")
}

func (o *pushObjects) HasEncodedObject(h plumbing.Hash) error {
	if o.inPack(h) {
		return nil
	}
	return o.r.st.HasEncodedObject(h)
}

func (o *pushObjects) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if o.inPack(h) {
		off, err := o.q.idx.FindOffset(h)
		if err != nil {
			return 0, err
		}
		return o.q.pack.GetSizeByOffset(off)
	}
	return o.r.st.EncodedObjectSize(h)
}

func (o *pushObjects) AddAlternate(string) error { return errors.New("not supported") }

// pushChecker applies the API's rules to pushed content: every new commit
// must be complete, and its tree must hold only regular files whose paths
// pass valid.FilePath, within the file and version limits.
type pushChecker struct {
	s       *Store
	objs    *pushObjects
	limits  quire.Limits
	trees   map[string]treeStats // tree id + path prefix -> totals
	sizes   map[plumbing.Hash]int64
	checked map[plumbing.Hash]bool // commits already checked
	kind    quire.Kind             // of the asset pushed to, for checkNames
}

func newPushChecker(s *Store, objs *pushObjects) *pushChecker {
	return &pushChecker{
		s: s, objs: objs, limits: s.opts.Limits,
		trees: map[string]treeStats{}, sizes: map[plumbing.Hash]int64{}, checked: map[plumbing.Hash]bool{},
	}
}

// commits checks every commit reachable from tip that the repository does
// not hold yet (those it holds were checked when they arrived).
func (pc *pushChecker) commits(ctx context.Context, tip plumbing.Hash) error {
	obj, err := pc.objs.EncodedObject(plumbing.AnyObject, tip)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return quire.Errorf(quire.EINVALID, "missing necessary objects")
	}
	if err != nil {
		return err
	}
	if obj.Type() != plumbing.CommitObject {
		return quire.Errorf(quire.EINVALID, "%s is a %s, not a commit", short(tip), obj.Type())
	}
	queue := []plumbing.Hash{tip}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if pc.checked[h] {
			continue
		}
		pc.checked[h] = true
		if !pc.objs.inPack(h) {
			if pc.objs.r.st.HasEncodedObject(h) == nil {
				continue // already in the repository, with its history
			}
			return quire.Errorf(quire.EINVALID, "missing necessary objects: commit %s", short(h))
		}
		c, err := object.GetCommit(pc.objs, h)
		if err != nil {
			return quire.Errorf(quire.EINVALID, "commit %s: %v", short(h), err)
		}
		st, err := pc.tree(c.TreeHash, "")
		if err != nil {
			return withCommit(h, err)
		}
		if err := pc.s.checkVersionLimits(st); err != nil {
			return withCommit(h, err)
		}
		queue = append(queue, c.ParentHashes...)
	}
	return nil
}

func withCommit(h plumbing.Hash, err error) error {
	var qe *quire.Error
	if errors.As(err, &qe) && qe.Code != quire.EINTERNAL {
		return quire.Errorf(qe.Code, "commit %s: %s", short(h), qe.Message)
	}
	return err
}

// tree checks the tree h found at prefix and returns its totals.
func (pc *pushChecker) tree(h plumbing.Hash, prefix string) (treeStats, error) {
	key := h.String() + "\x00" + prefix
	if st, ok := pc.trees[key]; ok {
		return st, nil
	}
	t, err := object.GetTree(pc.objs, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return treeStats{}, quire.Errorf(quire.EINVALID, "missing necessary objects: tree %s", short(h))
	}
	if err != nil {
		return treeStats{}, quire.Errorf(quire.EINVALID, "tree %s: %v", short(h), err)
	}
	var st treeStats
	for _, e := range t.Entries {
		p := prefix + e.Name
		if err := valid.FilePath(p); err != nil {
			return st, quire.Errorf(quire.EINVALID, "%s: %s", valid.Display(p), quire.ErrorMessage(err))
		}
		switch e.Mode {
		case filemode.Dir:
			sub, err := pc.tree(e.Hash, p+"/")
			if err != nil {
				return st, err
			}
			st.files += sub.files
			st.bytes += sub.bytes
		case filemode.Regular, filemode.Executable:
			size, ok := pc.sizes[e.Hash]
			if !ok {
				size, err = pc.objs.EncodedObjectSize(e.Hash)
				if errors.Is(err, plumbing.ErrObjectNotFound) {
					return st, quire.Errorf(quire.EINVALID, "missing necessary objects: blob %s", short(e.Hash))
				}
				if err != nil {
					return st, err
				}
				pc.sizes[e.Hash] = size
			}
			if size > pc.limits.MaxFile {
				return st, quire.Errorf(quire.ETOOLARGE, "file %s is %d bytes; the limit is %d", p, size, pc.limits.MaxFile)
			}
			if valid.ContentChecked(p) {
				if err := pc.checkContent(p, e.Hash); err != nil {
					return st, err
				}
			}
			st.files++
			st.bytes += size
		case filemode.Symlink:
			return st, quire.Errorf(quire.EINVALID, "%s: symbolic links are not allowed", p)
		case filemode.Submodule:
			return st, quire.Errorf(quire.EINVALID, "%s: submodules are not allowed", p)
		default:
			return st, quire.Errorf(quire.EINVALID, "%s: file mode %o is not allowed", p, uint32(e.Mode))
		}
		if st.files > pc.limits.MaxVersionFiles {
			return st, pc.s.checkVersionLimits(st)
		}
	}
	if err := pc.checkNames(prefix, t.Entries); err != nil {
		return st, err
	}
	pc.trees[key] = st
	return st, nil
}

// checkContent applies the API's content rules (valid.FileContent) to a
// pushed blob.
func (pc *pushChecker) checkContent(p string, h plumbing.Hash) error {
	obj, err := pc.objs.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return quire.Errorf(quire.EINVALID, "missing necessary objects: blob %s", short(h))
	}
	rd, err := obj.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	if err != nil {
		return err
	}
	return valid.FileContent(p, b)
}
