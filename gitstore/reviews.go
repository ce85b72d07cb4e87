package gitstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
)

// Reviews live in the asset's repository, one ref per review, the way
// Gerrit's NoteDb keeps a change's metadata: refs/reviews/<number> is a
// chain of commits, one per event (opened, commented, verdict, head
// moved, merged, closed, override), authored by the acting user at the
// time of the event.
// Each commit's tree is the review's whole state:
//
//	review.json            the review (quire.Review)
//	comments/<id>.json     one comment each
//	verdicts/<user>.json   each reviewer's latest verdict
//
// so `git log -p refs/reviews/1` reads as the conversation, and a mirror
// clone or `git fetch origin 'refs/reviews/*:refs/reviews/*'` carries it.
// Every event is one editRef on one ref, under the repository's write
// lock: a crash leaves the review at the event before or after.
//
// Every draft write records its new head on the open review
// (reviewhead.go), but reads do not take the head from that record: it
// is the draft's branch while the version is a draft (so an API write and
// a git push move it alike), the vN tag's commit once published, and the
// head last recorded otherwise. A review whose draft was published (or
// deleted) by a write that died before it recorded the merge (or close)
// reads as merged (or closed) all the same.
const (
	reviewsPrefix = "refs/reviews/"
	reviewFile    = "review.json"
	commentsDir   = "comments"
	verdictsDir   = "verdicts"
)

// ReviewRef is the ref of review n.
func ReviewRef(n int) plumbing.ReferenceName {
	return plumbing.ReferenceName(reviewsPrefix + strconv.Itoa(n))
}

// reviewNumbers lists the reviews of r with their tips, by number.
func (r *repo) reviewNumbers() ([]int, map[int]plumbing.Hash, error) {
	refs, _, err := listRefs(r, refMatcher{reviewsPrefix})
	if err != nil {
		return nil, nil, err
	}
	tips := map[int]plumbing.Hash{}
	var nums []int
	for _, ref := range refs {
		n, err := strconv.Atoi(strings.TrimPrefix(ref.Name, reviewsPrefix))
		if err != nil || n <= 0 {
			continue // not one of ours
		}
		nums = append(nums, n)
		tips[n] = ref.Hash
	}
	sort.Ints(nums)
	return nums, tips, nil
}

// readJSON decodes the blob at path of tree into v; found is false when
// there is none.
func (r *repo) readJSON(tree plumbing.Hash, path string, v any) (bool, error) {
	e, ok, err := r.Lookup(tree, path)
	if err != nil || !ok {
		return false, err
	}
	b, err := r.ReadBlob(e.Hash)
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("decode %s: %w", path, err)
	}
	return true, nil
}

// jsonEdit writes v as the blob at path.
func (r *repo) jsonEdit(path string, v any) (odb.TreeEdit, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return odb.TreeEdit{}, err
	}
	h, err := r.WriteBlob(append(b, '\n'))
	if err != nil {
		return odb.TreeEdit{}, err
	}
	return odb.TreeEdit{Path: path, Blob: h}, nil
}

// readReview reads review.json at the review commit tip.
func (r *repo) readReview(tip plumbing.Hash) (*quire.Review, plumbing.Hash, error) {
	c, err := r.Commit(tip)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	rv := &quire.Review{}
	ok, err := r.readJSON(c.TreeHash, reviewFile, rv)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	if !ok {
		return nil, plumbing.ZeroHash, fmt.Errorf("review commit %s has no %s", tip, reviewFile)
	}
	return rv, c.TreeHash, nil
}

// versionStates memoizes r.state per version for one read.
type versionStates map[int]*vstate

func (vs versionStates) get(r *repo, n int) (*vstate, error) {
	if v, ok := vs[n]; ok {
		return v, nil
	}
	v, err := r.state(n)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		v, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	vs[n] = v
	return v, nil
}

// settle fills in what the refs say about an open review: its head (the
// draft's commit, or the published tag's) and, when its draft is no
// longer one, the state a write that died early would have recorded.
func (r *repo) settle(rv *quire.Review, vs versionStates) error {
	if rv.State != quire.ReviewOpen {
		return nil
	}
	v, err := vs.get(r, rv.Version)
	if err != nil {
		return err
	}
	switch {
	case v == nil:
		rv.State = quire.ReviewClosed
	case v.state == quire.StateDraft:
		rv.Head.Commit = v.commit.String()
	case v.state == quire.StatePublished:
		rv.Head.Commit, rv.State = v.commit.String(), quire.ReviewMerged
	default:
		rv.State = quire.ReviewClosed
	}
	return nil
}

// thread reads the whole review at tip: the review settled, its comments
// (oldest first) with outdated set, its verdicts with stale set, and the
// draft's authors (authors.go).
func (r *repo) thread(tip plumbing.Hash, vs versionStates) (*quire.ReviewThread, error) {
	rv, tree, err := r.readReview(tip)
	if err != nil {
		return nil, err
	}
	if err := r.settle(rv, vs); err != nil {
		return nil, err
	}
	rt := &quire.ReviewThread{Review: rv, Comments: []*quire.Comment{}, Verdicts: []*quire.Verdict{}}
	if err := readDir(r, tree, commentsDir, func() *quire.Comment { return &quire.Comment{} }, &rt.Comments); err != nil {
		return nil, err
	}
	if err := readDir(r, tree, verdictsDir, func() *quire.Verdict { return &quire.Verdict{} }, &rt.Verdicts); err != nil {
		return nil, err
	}
	sort.SliceStable(rt.Comments, func(i, j int) bool {
		a, b := rt.Comments[i], rt.Comments[j]
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.Before(b.CreatedAt)
		}
		return a.ID < b.ID
	})
	sort.SliceStable(rt.Verdicts, func(i, j int) bool { return rt.Verdicts[i].CreatedAt.Before(rt.Verdicts[j].CreatedAt) })
	head := rv.Head.Commit
	for _, v := range rt.Verdicts {
		v.Stale = v.Commit != head
	}
	lines := lineReader{r: r, files: map[string][]string{}}
	for _, c := range rt.Comments {
		c.Outdated = false
		if c.Side != quire.SideHead || c.Path == "" || c.Commit == head || c.Anchor == nil {
			continue
		}
		now, err := lines.line(head, c.Path, c.Line)
		if err != nil {
			return nil, err
		}
		c.Outdated = now == nil || *now != *c.Anchor
	}
	if rt.Authors, rt.AuthorEmails, err = r.draftAuthors(rv.Version, rv.Head.Commit, rv.Base.Commit); err != nil {
		return nil, err
	}
	return rt, nil
}

// readDir decodes every blob under dir of tree into a new T each.
func readDir[T any](r *repo, tree plumbing.Hash, dir string, mk func() *T, out *[]*T) error {
	sub, ok, err := r.lookupDir(tree, dir)
	if err != nil || !ok {
		return err
	}
	return r.WalkFiles(sub, "", func(name string, e object.TreeEntry) error {
		b, err := r.ReadBlob(e.Hash)
		if err != nil {
			return err
		}
		v := mk()
		if err := json.Unmarshal(b, v); err != nil {
			return fmt.Errorf("decode %s/%s: %w", dir, name, err)
		}
		*out = append(*out, v)
		return nil
	})
}

// reviewBase is the base of draft v: the version it was opened from (by
// the versions log) and that version's commit, or none.
func (r *repo) reviewBase(n int) (quire.ReviewBase, error) {
	log, _, err := r.readLog()
	if err != nil {
		return quire.ReviewBase{}, err
	}
	info := log.Versions[strconv.Itoa(n)]
	if info == nil || info.Base == 0 {
		return quire.ReviewBase{}, nil
	}
	v, err := r.state(info.Base)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return quire.ReviewBase{}, nil
	}
	if err != nil {
		return quire.ReviewBase{}, err
	}
	return quire.ReviewBase{Version: info.Base, Commit: v.commit.String()}, nil
}

// openReviewOf finds the open review of version n (nil, 0 for none).
func (r *repo) openReviewOf(n int, vs versionStates) (*quire.Review, plumbing.Hash, error) {
	nums, tips, err := r.reviewNumbers()
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	for i := len(nums) - 1; i >= 0; i-- {
		rv, _, err := r.readReview(tips[nums[i]])
		if err != nil {
			return nil, plumbing.ZeroHash, err
		}
		if rv.Version != n || rv.State != quire.ReviewOpen {
			continue
		}
		if err := r.settle(rv, vs); err != nil {
			return nil, plumbing.ZeroHash, err
		}
		if rv.State == quire.ReviewOpen {
			return rv, tips[nums[i]], nil
		}
	}
	return nil, plumbing.ZeroHash, nil
}

// OpenReview opens review rv of draft rv.Version.
func (s *Store) OpenReview(ctx context.Context, by quire.Actor, a *quire.Asset, rv *quire.Review) (_ *quire.ReviewThread, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "OpenReview")(&err)
	w, v, err := s.beginVersion(a, rv.Version)
	if err != nil {
		return nil, err
	}
	defer w.done()
	w.hooks = false
	if v.state != quire.StateDraft {
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is %s; only a draft can be reviewed", rv.Version, v.state)
	}
	vs := versionStates{rv.Version: v}
	if open, _, err := w.r.openReviewOf(rv.Version, vs); err != nil {
		return nil, err
	} else if open != nil {
		return nil, quire.Errorf(quire.ECONFLICT, "draft %d already has open review %d", rv.Version, open.Number).
			WithDetail("review", open.Number)
	}
	nums, _, err := w.r.reviewNumbers()
	if err != nil {
		return nil, err
	}
	rv.Number = 1
	if len(nums) > 0 {
		rv.Number = nums[len(nums)-1] + 1
	}
	if rv.Base, err = w.r.reviewBase(rv.Version); err != nil {
		return nil, err
	}
	now := s.opts.Now().UTC()
	rv.State, rv.Head.Commit, rv.CreatedAt, rv.UpdatedAt = quire.ReviewOpen, v.commit.String(), now, now
	rv.Author = quire.ReviewUserOf(by)
	ref := ReviewRef(rv.Number)
	_, err = w.editRef(by, ref, plumbing.ZeroHash, reviewConflict, func(plumbing.Hash) (plumbing.Hash, string, error) {
		e, err := w.r.jsonEdit(reviewFile, rv)
		if err != nil {
			return plumbing.ZeroHash, "", err
		}
		tree, err := w.r.EditTree(plumbing.ZeroHash, []odb.TreeEdit{e})
		return tree, fmt.Sprintf("Open review %d of draft %d: %s", rv.Number, rv.Version, oneLine(rv.Title)), err
	})
	if err != nil {
		return nil, err
	}
	tip, err := w.r.ref(ref)
	if err != nil {
		return nil, err
	}
	_ = w.indexReview(rv.Version, tip) // as in UpdateReview
	return w.r.thread(tip, vs)
}

func reviewConflict() error {
	return quire.Errorf(quire.ECONFLICT, "review changed concurrently; retry")
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

// Reviews lists a's reviews in state ("" for any), by number.
func (s *Store) Reviews(ctx context.Context, a *quire.Asset, state quire.ReviewState) (_ []*quire.Review, err error) {
	defer s.observe(ctx, quire.GitOpRead, "Reviews")(&err)
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, err
	}
	nums, tips, err := r.reviewNumbers()
	if err != nil {
		return nil, err
	}
	vs := versionStates{}
	out := []*quire.Review{}
	for _, n := range nums {
		rv, _, err := r.readReview(tips[n])
		if err != nil {
			return nil, err
		}
		if err := r.settle(rv, vs); err != nil {
			return nil, err
		}
		if state == "" || rv.State == state {
			out = append(out, rv)
		}
	}
	return out, nil
}

// ReviewThread reads review n of a.
func (s *Store) ReviewThread(ctx context.Context, a *quire.Asset, n int) (_ *quire.ReviewThread, err error) {
	defer s.observe(ctx, quire.GitOpRead, "ReviewThread")(&err)
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, err
	}
	tip, err := r.ref(ReviewRef(n))
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, quire.Errorf(quire.ENOTFOUND, "review %d not found", n)
	}
	return r.thread(tip, versionStates{})
}

// UpdateReview runs change on review n and commits it as one commit.
func (s *Store) UpdateReview(ctx context.Context, by quire.Actor, a *quire.Asset, n int, change func(tx *quire.ReviewTx) error) (_ *quire.Review, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "UpdateReview")(&err)
	w, err := s.begin(a)
	if err != nil {
		return nil, err
	}
	defer w.done()
	w.hooks = false
	ref := ReviewRef(n)
	tip, err := w.r.ref(ref)
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, quire.Errorf(quire.ENOTFOUND, "review %d not found", n)
	}
	rv, tree, err := w.r.readReview(tip)
	if err != nil {
		return nil, err
	}
	recorded := rv.Head.Commit
	if err := w.r.settle(rv, versionStates{}); err != nil {
		return nil, err
	}
	if tip, err = s.catchUpHead(&w, tip, rv, recorded); err != nil {
		return nil, err
	}
	tx := &quire.ReviewTx{Review: rv, Comment: func(id string) (*quire.Comment, error) {
		if !validID(id) {
			return nil, nil
		}
		c := &quire.Comment{}
		found, err := w.r.readJSON(tree, commentPath(id), c)
		if err != nil || !found {
			return nil, err
		}
		return c, nil
	}}
	wasOpen := rv.State == quire.ReviewOpen
	tip, err = s.commitReview(&w, by, ref, tip, tx, func(tx *quire.ReviewTx) error {
		if err := change(tx); err != nil {
			return err
		}
		if !wasOpen && tx.Review.State == quire.ReviewOpen {
			// Reopened: only while the version is still a draft.
			if err := w.r.settle(tx.Review, versionStates{}); err != nil {
				return err
			}
			if tx.Review.State != quire.ReviewOpen {
				return quire.Errorf(quire.ECONFLICT, "version %d is no longer a draft", tx.Review.Version)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The open-review index (reviewhead.go) follows; the event is
	// recorded either way, and a missing index only delays head records.
	switch open := rv.State == quire.ReviewOpen; {
	case open && !wasOpen:
		_ = w.indexReview(rv.Version, tip)
	case open:
		if h, err := w.r.ref(openReviewRef(rv.Version)); err == nil && h.IsZero() {
			_ = w.indexReview(rv.Version, tip)
		}
	case wasOpen:
		_ = w.unindexReview(rv.Version)
	}
	return rv, nil
}

func commentPath(id string) string { return commentsDir + "/" + id + ".json" }

// validID reports whether id can name a comment or verdict file: ids are
// made by quire (UUIDs), so anything else names none.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// commitReview runs change on tx and commits review.json and what it
// lists onto ref at tip; it returns the new tip.
func (s *Store) commitReview(w *write, by quire.Actor, ref plumbing.ReferenceName, tip plumbing.Hash, tx *quire.ReviewTx, change func(tx *quire.ReviewTx) error) (plumbing.Hash, error) {
	return w.editRef(by, ref, tip, reviewConflict, func(tree plumbing.Hash) (plumbing.Hash, string, error) {
		if err := change(tx); err != nil {
			return plumbing.ZeroHash, "", err
		}
		rv := tx.Review
		rv.UpdatedAt = s.opts.Now().UTC()
		var edits []odb.TreeEdit
		add := func(path string, v any) error {
			e, err := w.r.jsonEdit(path, v)
			edits = append(edits, e)
			return err
		}
		if err := add(reviewFile, rv); err != nil {
			return plumbing.ZeroHash, "", err
		}
		for _, c := range tx.Comments {
			if !validID(c.ID) {
				return plumbing.ZeroHash, "", fmt.Errorf("comment id %q", c.ID)
			}
			if err := add(commentPath(c.ID), c); err != nil {
				return plumbing.ZeroHash, "", err
			}
		}
		for _, v := range tx.Verdicts {
			if !validID(v.User.ID) {
				return plumbing.ZeroHash, "", fmt.Errorf("verdict user id %q", v.User.ID)
			}
			if err := add(verdictsDir+"/"+v.User.ID+".json", v); err != nil {
				return plumbing.ZeroHash, "", err
			}
		}
		newTree, err := w.r.EditTree(tree, edits)
		return newTree, fmt.Sprintf("%s\n\nReview: %d\nHead: %s", tx.Message, rv.Number, rv.Head.Commit), err
	})
}

// PublishReviewed publishes draft n once gate allows it with the draft's
// open review as it stands under the lock, then records the merge on the
// review. The version is published first: a crash between the two leaves
// a review that reads as merged (settle), never a merged review of an
// unpublished draft.
func (s *Store) PublishReviewed(ctx context.Context, by quire.Actor, a *quire.Asset, n int, check func(quire.ReadFunc) error, gate quire.ReviewGate) (_ *quire.Version, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "PublishVersion")(&err)
	w, v, err := s.beginVersion(a, n)
	if err != nil {
		return nil, err
	}
	defer w.done()
	if v.state != quire.StateDraft {
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is already %s", n, v.state)
	}
	vs := versionStates{n: v}
	open, tip, err := w.r.openReviewOf(n, vs)
	if err != nil {
		return nil, err
	}
	var rt *quire.ReviewThread
	if open != nil {
		if rt, err = w.r.thread(tip, vs); err != nil {
			return nil, err
		}
	}
	merge, err := gate(rt)
	if err != nil {
		return nil, err
	}
	if err := s.publishDraft(&w, by, v, check); err != nil {
		return nil, err
	}
	if rt != nil {
		now := s.opts.Now().UTC()
		user := quire.ReviewUserOf(by)
		// The version is published and acknowledged by its refs; should
		// recording the merge fail, the review reads as merged without it
		// (settle), so its error does not fail the publish.
		_, _ = s.commitReview(&w, by, ReviewRef(rt.Review.Number), tip, &quire.ReviewTx{Review: rt.Review}, func(tx *quire.ReviewTx) error {
			rv := tx.Review
			rv.State, rv.MergedBy, rv.MergedAt, rv.Head.Commit = quire.ReviewMerged, &user, &now, v.commit.String()
			tx.Message = fmt.Sprintf("Merge review %d: publish version %d", rv.Number, n)
			if merge != nil {
				rv.Override, rv.PolicyMet = merge.Override, merge.PolicyMet
				if merge.Override != nil {
					tx.Message += "\n\nOverride: " + oneLine(merge.Override.Reason)
				}
			}
			return nil
		})
		_ = w.unindexReview(n)
	}
	return s.versionRecord(w.r, a, n)
}

// CloseDraftReview records the close of draft n's open review once the
// draft is gone (deleted or archived), and returns the reviews it closed.
func (s *Store) CloseDraftReview(ctx context.Context, by quire.Actor, a *quire.Asset, n int) (_ []*quire.Review, err error) {
	defer s.observe(ctx, quire.GitOpCommit, "CloseDraftReview")(&err)
	w, err := s.begin(a)
	if err != nil {
		return nil, err
	}
	defer w.done()
	w.hooks = false
	nums, tips, err := w.r.reviewNumbers()
	if err != nil {
		return nil, err
	}
	vs := versionStates{}
	var closed []*quire.Review
	for _, num := range nums {
		rv, _, err := w.r.readReview(tips[num])
		if err != nil {
			return closed, err
		}
		if rv.Version != n || rv.State != quire.ReviewOpen {
			continue
		}
		if err := w.r.settle(rv, vs); err != nil {
			return closed, err
		}
		if rv.State != quire.ReviewClosed {
			continue // still a draft, or published
		}
		now := s.opts.Now().UTC()
		user := quire.ReviewUserOf(by)
		_, err = s.commitReview(&w, by, ReviewRef(num), tips[num], &quire.ReviewTx{Review: rv}, func(tx *quire.ReviewTx) error {
			tx.Review.ClosedBy, tx.Review.ClosedAt = &user, &now
			tx.Message = fmt.Sprintf("Close review %d: draft %d is gone", num, n)
			return nil
		})
		if err != nil {
			return closed, err
		}
		closed = append(closed, rv)
	}
	return closed, w.unindexReview(n)
}

var _ quire.ReviewStore = (*Store)(nil)
