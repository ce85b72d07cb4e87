package gitstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/quire/quire/gitstore/odb"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
	"github.com/quire/quire"
)

// Refs that carry version state (DESIGN.md §2).
const (
	mainRef     = plumbing.ReferenceName("refs/heads/main")
	versionsRef = plumbing.ReferenceName("refs/quire/versions")
	versionsLog = "versions.json"
)

// DraftRef is the branch of draft n.
func DraftRef(n int) plumbing.ReferenceName {
	return plumbing.ReferenceName("refs/heads/draft/" + strconv.Itoa(n))
}

// TagRef is the tag of published version n.
func TagRef(n int) plumbing.ReferenceName {
	return plumbing.ReferenceName("refs/tags/v" + strconv.Itoa(n))
}

// ArchiveRef is the tag of archived version n.
func ArchiveRef(n int) plumbing.ReferenceName {
	return plumbing.ReferenceName("refs/tags/archive/v" + strconv.Itoa(n))
}

// versionLog is the allocation record of an asset's versions, kept as
// versions.json on refs/quire/versions so numbers are never reused.
type versionLog struct {
	Next     int                     `json:"next"`
	Versions map[string]*versionInfo `json:"versions"`
}

type versionInfo struct {
	CreatedAt time.Time  `json:"created_at"`
	CreatedBy string     `json:"created_by"`
	Base      int        `json:"base,omitempty"`
	DeletedAt *time.Time `json:"deleted_at,omitempty"`
	// Authors are the user ids of the principals who wrote to the draft
	// (authors.go); Tracked is set on drafts opened since they are kept,
	// so an older draft is told apart from one nobody else wrote to.
	Authors []string `json:"authors,omitempty"`
	Tracked bool     `json:"authors_tracked,omitempty"`
}

func (r *repo) readLog() (*versionLog, plumbing.Hash, error) {
	log := &versionLog{Next: 1, Versions: map[string]*versionInfo{}}
	tip, err := r.ref(versionsRef)
	if err != nil || tip.IsZero() {
		return log, tip, err
	}
	c, err := r.Commit(tip)
	if err != nil {
		return nil, tip, err
	}
	e, ok, err := r.Lookup(c.TreeHash, versionsLog)
	if err != nil || !ok {
		return log, tip, err
	}
	b, err := r.ReadBlob(e.Hash)
	if err != nil {
		return nil, tip, err
	}
	if err := json.Unmarshal(b, log); err != nil {
		return nil, tip, fmt.Errorf("decode %s: %w", versionsLog, err)
	}
	return log, tip, nil
}

func (r *repo) writeLog(by quire.Actor, when time.Time, log *versionLog, tip plumbing.Hash, msg string) error {
	b, err := json.MarshalIndent(log, "", "  ")
	if err != nil {
		return err
	}
	blob, err := r.WriteBlob(append(b, '\n'))
	if err != nil {
		return err
	}
	tree, err := r.WriteObject(&object.Tree{Entries: []object.TreeEntry{{Name: versionsLog, Mode: 0o100644, Hash: blob}}})
	if err != nil {
		return err
	}
	c, err := r.WriteCommit(by, when, tree, tip, msg)
	if err != nil {
		return err
	}
	return r.casRef(versionsRef, tip, c)
}

// noteLog records msg on the versions log without changing the log (a
// push, a promotion): a commit on the tip's tree, so no blob or tree is
// written again. It returns the tip it followed.
func (r *repo) noteLog(by quire.Actor, when time.Time, msg string) (plumbing.Hash, error) {
	tip, err := r.ref(versionsRef)
	if err != nil {
		return tip, err
	}
	if tip.IsZero() {
		return tip, r.writeLog(by, when, &versionLog{Next: 1, Versions: map[string]*versionInfo{}}, tip, msg)
	}
	c, err := r.Commit(tip)
	if err != nil {
		return tip, err
	}
	next, err := r.WriteCommit(by, when, c.TreeHash, tip, msg)
	if err != nil {
		return tip, err
	}
	return tip, r.casRef(versionsRef, tip, next)
}

// vstate is what the refs say about one version.
type vstate struct {
	n        int
	state    quire.VersionState
	commit   plumbing.Hash
	tag      *object.Tag // the vN tag, when published or archived
	archived *object.Tag // the archive/vN tag, when archived
}

// state reads the refs of version n. It returns ENOTFOUND when none exists.
func (r *repo) state(n int) (*vstate, error) {
	v := &vstate{n: n}
	if h, err := r.ref(ArchiveRef(n)); err != nil {
		return nil, err
	} else if !h.IsZero() {
		v.state = quire.StateArchived
		if v.archived, v.commit, err = r.peel(h); err != nil {
			return nil, err
		}
	}
	if h, err := r.ref(TagRef(n)); err != nil {
		return nil, err
	} else if !h.IsZero() {
		if v.state == "" {
			v.state = quire.StatePublished
		}
		if v.tag, v.commit, err = r.peel(h); err != nil {
			return nil, err
		}
	}
	if v.state == "" {
		h, err := r.ref(DraftRef(n))
		if err != nil {
			return nil, err
		}
		if h.IsZero() {
			return nil, quire.Errorf(quire.ENOTFOUND, "version %d not found", n)
		}
		v.state, v.commit = quire.StateDraft, h
	}
	return v, nil
}

// peel resolves a tag ref's target: an annotated tag or a bare commit.
func (r *repo) peel(h plumbing.Hash) (*object.Tag, plumbing.Hash, error) {
	t, err := object.GetTag(r.st, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, h, nil // a lightweight tag
	}
	if err != nil {
		return nil, h, err
	}
	return t, t.Target, nil
}

// draft returns the state of version n, which must be a draft.
func (r *repo) draft(n int) (*vstate, error) {
	v, err := r.state(n)
	if err != nil {
		return nil, err
	}
	if v.state != quire.StateDraft {
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is %s; only a draft can be changed", n, v.state)
	}
	return v, nil
}

// record builds the Version record of v.
func (r *repo) record(a *quire.Asset, v *vstate, log *versionLog, live plumbing.Hash) (*quire.Version, error) {
	out := &quire.Version{
		AssetID: a.ID, Kind: a.Kind, Number: v.n, State: v.state,
		Commit: v.commit.String(),
		Live:   v.state == quire.StatePublished && v.commit == live,
	}
	c, err := r.Commit(v.commit)
	if err != nil {
		return nil, err
	}
	out.UpdatedAt = c.Committer.When.UTC()
	if info := log.Versions[strconv.Itoa(v.n)]; info != nil && !info.CreatedAt.IsZero() {
		out.CreatedAt, out.CreatedBy, out.Base = info.CreatedAt.UTC(), info.CreatedBy, info.Base
	} else {
		out.CreatedAt, out.CreatedBy = c.Author.When.UTC(), c.Author.Email
	}
	if v.tag != nil {
		t := v.tag.Tagger.When.UTC()
		out.PublishedAt, out.UpdatedAt = &t, t
	}
	if v.archived != nil {
		t := v.archived.Tagger.When.UTC()
		out.ArchivedAt, out.UpdatedAt = &t, t
	}
	return out, nil
}

func (s *Store) assetRepo(a *quire.Asset) (*repo, error) {
	return s.repo(s.RepoPath(a))
}

// InitAsset creates the bare repository of a new asset.
func (s *Store) InitAsset(ctx context.Context, a *quire.Asset) error {
	_, err := s.initRepo(s.RepoPath(a))
	return err
}

// RemoveRepository deletes an asset's repository.
func (s *Store) RemoveRepository(ctx context.Context, a *quire.Asset) error {
	return s.removeRepo(s.RepoPath(a))
}

// CreateVersion opens draft N (the next number) from base, with files
// written into its first commit.
func (s *Store) CreateVersion(ctx context.Context, by quire.Actor, a *quire.Asset, base quire.Base, files []quire.FileContent) (_ *quire.Version, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "CreateVersion")(&err)
	edits, err := s.prepareFiles(files)
	if err != nil {
		return nil, err
	}
	w, log, logTip, err := s.beginLog(a)
	if err != nil {
		return nil, err
	}
	defer w.done()
	r := w.r
	var parent plumbing.Hash
	var from int
	switch {
	case base.Empty:
	case base.Version > 0:
		v, err := r.state(base.Version)
		if err != nil {
			return nil, quire.Errorf(quire.ENOTFOUND, "base version %d not found", base.Version)
		}
		parent, from = v.commit, base.Version
	default:
		if parent, err = r.ref(mainRef); err != nil {
			return nil, err
		}
		from = s.versionAt(r, parent)
	}
	var tree plumbing.Hash
	if !parent.IsZero() {
		c, err := r.Commit(parent)
		if err != nil {
			return nil, err
		}
		tree = c.TreeHash
	}
	if len(edits) > 0 {
		if tree, err = s.draftTree(r, tree, edits, files); err != nil {
			return nil, err
		}
	} else if tree.IsZero() {
		if tree, err = r.WriteObject(&object.Tree{}); err != nil {
			return nil, err
		}
	}

	return s.openDraft(&w, by, a, log, logTip, parent, from, tree, "")
}

// draftTree writes the blobs of files and returns tree changed by edits,
// checked against the version limits.
func (s *Store) draftTree(r *repo, tree plumbing.Hash, edits []odb.TreeEdit, files []quire.FileContent) (plumbing.Hash, error) {
	if err := r.writeBlobs(edits, files); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := r.checkCollisions(tree, edits); err != nil {
		return plumbing.ZeroHash, err
	}
	tree, err := r.EditTree(tree, edits)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	st, err := s.treeStats(r, tree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if err := s.checkVersionLimits(st); err != nil {
		return plumbing.ZeroHash, err
	}
	return tree, nil
}

// openDraft allocates the next version number and points its draft
// branch at a new commit of tree over parent (a version from), under the
// write w holds. message, when set, is the commit's message.
func (s *Store) openDraft(w *write, by quire.Actor, a *quire.Asset, log *versionLog, logTip, parent plumbing.Hash, from int, tree plumbing.Hash, message string) (*quire.Version, error) {
	r := w.r
	n := log.Next
	now := s.opts.Now()
	msg := fmt.Sprintf("Open draft %d", n)
	if from > 0 {
		msg += fmt.Sprintf(" from v%d", from)
	}
	if message != "" {
		msg = strings.TrimRight(message, "\n")
	}
	c, err := r.WriteCommit(by, now, tree, parent, msg+"\n")
	if err != nil {
		return nil, err
	}
	log.Next = n + 1
	info := &versionInfo{CreatedAt: now.UTC(), CreatedBy: by.Email, Base: from, Tracked: true}
	info.addAuthor(by)
	log.Versions[strconv.Itoa(n)] = info
	if err := r.writeLog(by, now, log, logTip, fmt.Sprintf("Allocate version %d\n", n)); err != nil {
		return nil, err
	}
	if err := w.cas(DraftRef(n), plumbing.ZeroHash, c); err != nil {
		return nil, err
	}
	return r.record(a, &vstate{n: n, state: quire.StateDraft, commit: c}, log, plumbing.ZeroHash)
}

// versionAt returns the published version whose tag points at commit c, or 0.
func (s *Store) versionAt(r *repo, c plumbing.Hash) int {
	if c.IsZero() {
		return 0
	}
	log, _, err := r.readLog()
	if err != nil {
		return 0
	}
	for n := log.Next - 1; n > 0; n-- {
		if h, err := r.ref(TagRef(n)); err == nil && !h.IsZero() {
			if _, target, err := r.peel(h); err == nil && target == c {
				return n
			}
		}
	}
	return 0
}

// Versions lists every version of an asset, oldest first.
func (s *Store) Versions(ctx context.Context, a *quire.Asset) ([]*quire.Version, error) {
	out, _, err := s.VersionsPage(ctx, a, "", quire.ListOptions{})
	return out, err
}

// NextVersion is the number the asset's next version will get: it moves
// with every version created, and only then (app's event intents read
// it, one ref and one blob, where listing the versions reads a ref each).
func (s *Store) NextVersion(ctx context.Context, a *quire.Asset) (int, error) {
	r, err := s.assetRepo(a)
	if err != nil {
		return 0, err
	}
	log, _, err := r.readLog()
	if err != nil {
		return 0, err
	}
	return log.Next, nil
}

// VersionsPage lists a page of an asset's versions in state ("" for any),
// oldest first. The cursor is the number of the last version of the page
// before (so, with no deleted versions and no state, the count of versions
// before the page); a page reads the refs of the versions it passes over,
// not of every version. A zero Limit means no limit.
func (s *Store) VersionsPage(ctx context.Context, a *quire.Asset, state quire.VersionState, opts quire.ListOptions) (_ []*quire.Version, _ string, err error) {
	defer s.observe(ctx, quire.GitOpRead, "Versions")(&err)
	after := 0
	if opts.Cursor != "" {
		n, err := strconv.Atoi(opts.Cursor)
		if err != nil || n < 0 {
			return nil, "", quire.Errorf(quire.EINVALID, "invalid cursor")
		}
		after = n
	}
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, "", err
	}
	log, _, err := r.readLog()
	if err != nil {
		return nil, "", err
	}
	live, err := r.ref(mainRef)
	if err != nil {
		return nil, "", err
	}
	out := []*quire.Version{}
	last := 0
	for n := after + 1; n < log.Next; n++ {
		if s.versionRead != nil {
			s.versionRead(n)
		}
		v, err := r.state(n)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		if state != "" && v.state != state {
			continue
		}
		if opts.Limit > 0 && len(out) == opts.Limit {
			return out, strconv.Itoa(last), nil // there is a next page
		}
		rec, err := r.record(a, v, log, live)
		if err != nil {
			return nil, "", err
		}
		out, last = append(out, rec), n
	}
	return out, "", nil
}

// Version returns version n.
func (s *Store) Version(ctx context.Context, a *quire.Asset, n int) (_ *quire.Version, err error) {
	defer s.observe(ctx, quire.GitOpRead, "Version")(&err)
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, err
	}
	return s.versionRecord(r, a, n)
}

func (s *Store) versionRecord(r *repo, a *quire.Asset, n int) (*quire.Version, error) {
	v, err := r.state(n)
	if err != nil {
		return nil, err
	}
	log, _, err := r.readLog()
	if err != nil {
		return nil, err
	}
	live, err := r.ref(mainRef)
	if err != nil {
		return nil, err
	}
	return r.record(a, v, log, live)
}

// LiveVersion returns the version main points at.
func (s *Store) LiveVersion(ctx context.Context, a *quire.Asset) (_ *quire.Version, err error) {
	defer s.observe(ctx, quire.GitOpRead, "LiveVersion")(&err)
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, err
	}
	live, err := r.ref(mainRef)
	if err != nil {
		return nil, err
	}
	n := s.versionAt(r, live)
	if n == 0 {
		return nil, quire.Errorf(quire.ENOTFOUND, "no live version: publish one first")
	}
	return s.versionRecord(r, a, n)
}

// DeleteVersion deletes draft n. Its number is not reused.
func (s *Store) DeleteVersion(ctx context.Context, by quire.Actor, a *quire.Asset, n int) (err error) {
	defer s.observe(ctx, quire.GitOpCommit, "DeleteVersion")(&err)
	w, v, err := s.beginVersion(a, n)
	if err != nil {
		return err
	}
	defer w.done()
	r := w.r
	if v.state != quire.StateDraft {
		return quire.Errorf(quire.ECONFLICT, "version %d is %s; only a draft can be deleted", n, v.state)
	}
	log, tip, err := r.readLog()
	if err != nil {
		return err
	}
	now := s.opts.Now().UTC()
	if info := log.Versions[strconv.Itoa(n)]; info != nil {
		info.DeletedAt = &now
	}
	if err := r.writeLog(by, now, log, tip, fmt.Sprintf("Delete draft %d\n", n)); err != nil {
		return err
	}
	if err := w.remove(DraftRef(n)); err != nil {
		return err
	}
	return nil
}

// PublishVersion tags draft n as vN, makes it live and removes its branch.
func (s *Store) PublishVersion(ctx context.Context, by quire.Actor, a *quire.Asset, n int, check func(quire.ReadFunc) error) (_ *quire.Version, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "PublishVersion")(&err)
	w, v, err := s.beginVersion(a, n)
	if err != nil {
		return nil, err
	}
	defer w.done()
	r := w.r
	if v.state != quire.StateDraft {
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is already %s", n, v.state)
	}
	if err := s.publishDraft(&w, by, v, check); err != nil {
		return nil, err
	}
	return s.versionRecord(r, a, n)
}

// publishDraft is the publish step of the write w holds: once check
// approves draft v's files, tag it, make it live and remove its branch.
func (s *Store) publishDraft(w *write, by quire.Actor, v *vstate, check func(quire.ReadFunc) error) error {
	r, n := w.r, v.n
	if check != nil {
		c, err := r.Commit(v.commit)
		if err != nil {
			return err
		}
		if err := check(r.reader(c.TreeHash)); err != nil {
			return err
		}
	}
	now := s.opts.Now()
	if err := w.tag(by, now, TagRef(n), fmt.Sprintf("v%d", n), v.commit, fmt.Sprintf("Publish version %d\n", n)); err != nil {
		return err
	}
	live, err := r.ref(mainRef)
	if err != nil {
		return err
	}
	if err := w.cas(mainRef, live, v.commit); err != nil {
		return err
	}
	return w.remove(DraftRef(n))
}

// reader returns a ReadFunc over the tree at root.
func (r *repo) reader(root plumbing.Hash) quire.ReadFunc {
	return func(path string) ([]byte, bool, error) {
		e, ok, err := r.Lookup(root, path)
		if err != nil || !ok {
			return nil, false, err
		}
		b, err := r.ReadBlob(e.Hash)
		return b, err == nil, err
	}
}

// tag writes an annotated tag object and creates its ref, which must not exist.
func (w *write) tag(by quire.Actor, when time.Time, ref plumbing.ReferenceName, name string, target plumbing.Hash, msg string) error {
	h, err := w.r.WriteObject(&object.Tag{
		Name: name, Tagger: odb.Signature(by, when), Message: odb.ObjectMessage(msg),
		TargetType: plumbing.CommitObject, Target: target,
	})
	if err != nil {
		return err
	}
	if err := w.cas(ref, plumbing.ZeroHash, h); errors.Is(err, storage.ErrReferenceHasChanged) {
		return quire.Errorf(quire.ECONFLICT, "tag %s already exists", name)
	} else if err != nil {
		return err
	}
	return nil
}

// PromoteVersion makes published version n live (a rollback when n is older).
func (s *Store) PromoteVersion(ctx context.Context, by quire.Actor, a *quire.Asset, n int) (_ *quire.Version, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "PromoteVersion")(&err)
	w, v, err := s.beginVersion(a, n)
	if err != nil {
		return nil, err
	}
	defer w.done()
	r := w.r
	if v.state != quire.StatePublished {
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is %s; only a published version can be promoted", n, v.state)
	}
	live, err := r.ref(mainRef)
	if err != nil {
		return nil, err
	}
	if live != v.commit {
		if err := w.cas(mainRef, live, v.commit); err != nil {
			return nil, err
		}
		// Moving main makes no object of its own: record who promoted
		// what in the versions log, so history shows rollbacks too.
		if _, err := r.noteLog(by, s.opts.Now(), fmt.Sprintf("Promote version %d\n", n)); err != nil {
			return nil, err
		}
	}
	return s.versionRecord(r, a, n)
}

// ArchiveVersion archives a draft or a published version that is not live.
func (s *Store) ArchiveVersion(ctx context.Context, by quire.Actor, a *quire.Asset, n int) (_ *quire.Version, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "ArchiveVersion")(&err)
	w, v, err := s.beginVersion(a, n)
	if err != nil {
		return nil, err
	}
	defer w.done()
	r := w.r
	live, err := r.ref(mainRef)
	if err != nil {
		return nil, err
	}
	switch {
	case v.state == quire.StateArchived:
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is already archived", n)
	case v.state == quire.StatePublished && v.commit == live:
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is live; promote another version before archiving it", n)
	}
	if err := w.tag(by, s.opts.Now(), ArchiveRef(n), fmt.Sprintf("archive/v%d", n), v.commit, fmt.Sprintf("Archive version %d\n", n)); err != nil {
		return nil, err
	}
	if v.state == quire.StateDraft {
		if err := w.remove(DraftRef(n)); err != nil {
			return nil, err
		}
	}
	return s.versionRecord(r, a, n)
}
