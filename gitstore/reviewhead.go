package gitstore

import (
	"fmt"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
)

// Head moves. A draft's new commit -- an API upsert, a file delete, a
// prompt PATCH, a git push -- appends a "head moved" commit to the
// draft's open review, in the same write: under the repository's lock,
// right after the draft's ref moved, authored by whoever moved it. So
// `git log -p refs/reviews/N` shows every head the review looked at.
//
// The draft moves first, the review records it second: refs move one at
// a time, and this order means the review's log never claims a head the
// draft did not reach. A crash between the two leaves the review's
// record one head behind; nothing reads the head from that record while
// the version is a draft (settle takes it from the draft's branch), so
// staleness and outdated comments stay right, and the review's next
// event first appends the missing head move (catchUpHead).
//
// Finding the open review must cost the upsert hot path nearly nothing
// when there is none, so a hidden ref indexes it:
// refs/quire/open-review/<draft> points at a commit of the draft's open
// review (its review.json names the number). A draft with no review has
// no such ref: one failed open. The index is set when a review opens or
// reopens (and by any later event of an open review that lacks it, such
// as one opened before the index existed), removed when it closes or
// merges; a stale one (a crash between) is told apart by reading the
// review it names, which must be open and of this draft.
const openReviewPrefix = "refs/quire/open-review/"

func openReviewRef(draft int) plumbing.ReferenceName {
	return plumbing.ReferenceName(openReviewPrefix + strconv.Itoa(draft))
}

// indexReview points draft n's open-review index at commit, a commit of
// its open review. The caller holds the write lock.
func (w *write) indexReview(n int, commit plumbing.Hash) error {
	return w.r.st.SetReference(plumbing.NewHashReference(openReviewRef(n), commit))
}

// unindexReview removes draft n's open-review index, if any.
func (w *write) unindexReview(n int) error {
	h, err := w.r.ref(openReviewRef(n))
	if err != nil || h.IsZero() {
		return err
	}
	return w.r.st.RemoveReference(openReviewRef(n))
}

// indexedReview returns the open review of draft n the index names, with
// its tip; nil when there is none (or the index is stale).
func (r *repo) indexedReview(n int) (*quire.Review, plumbing.Hash, error) {
	at, err := r.ref(openReviewRef(n))
	if err != nil || at.IsZero() {
		return nil, plumbing.ZeroHash, err
	}
	rv, _, err := r.readReview(at)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	tip, err := r.ref(ReviewRef(rv.Number))
	if err != nil || tip.IsZero() {
		return nil, plumbing.ZeroHash, err
	}
	if tip != at {
		if rv, _, err = r.readReview(tip); err != nil {
			return nil, plumbing.ZeroHash, err
		}
	}
	if rv.Version != n || rv.State != quire.ReviewOpen {
		return nil, plumbing.ZeroHash, nil
	}
	return rv, tip, nil
}

// moveReviewHead appends a head move, by by, to the open review of draft
// v, which has just moved to v.commit. It is called by every write that
// moves a draft, after the ref moved, under the same lock. The draft's
// move is durable and stands whatever happens here, so an error is not
// the write's: the review reads its head from the draft all the same.
func (s *Store) moveReviewHead(w *write, by quire.Actor, v *vstate) {
	rv, tip, err := w.r.indexedReview(v.n)
	if err != nil || rv == nil {
		return
	}
	recorded := rv.Head.Commit
	if err := w.r.settle(rv, versionStates{v.n: v}); err != nil || rv.State != quire.ReviewOpen || rv.Head.Commit == recorded {
		return
	}
	_, _ = s.commitHeadMove(w, by, tip, rv, recorded)
}

// commitHeadMove commits the head move of open review rv (settled: its
// head is the draft's) from the head recorded before, onto its ref at tip.
func (s *Store) commitHeadMove(w *write, by quire.Actor, tip plumbing.Hash, rv *quire.Review, from string) (plumbing.Hash, error) {
	return s.commitReview(w, by, ReviewRef(rv.Number), tip, &quire.ReviewTx{Review: rv}, func(tx *quire.ReviewTx) error {
		tx.Message = fmt.Sprintf("Move head of review %d from %s to %s", rv.Number, shortCommit(from), shortCommit(rv.Head.Commit))
		return nil
	})
}

// catchUpHead is the review's own repair of a head move whose record a
// crash lost (or that predates head-move records): when open review rv,
// just settled, looks at another head than the one recorded, it appends
// that head move first, credited to the head commit's author, and
// returns the new tip; else tip.
func (s *Store) catchUpHead(w *write, tip plumbing.Hash, rv *quire.Review, recorded string) (plumbing.Hash, error) {
	if rv.State != quire.ReviewOpen || rv.Head.Commit == recorded {
		return tip, nil
	}
	by := quire.Actor{Name: "quire", Email: "quire@localhost"}
	if h, ok := odb.ParseHash(rv.Head.Commit); ok {
		if c, err := w.r.Commit(h); err == nil {
			by = quire.Actor{Name: c.Author.Name, Email: c.Author.Email}
		}
	}
	return s.commitHeadMove(w, by, tip, rv, recorded)
}

// shortCommit is a commit id as a head move's message shows it.
func shortCommit(c string) string {
	if h, ok := odb.ParseHash(c); ok {
		return ShortHash(h)
	}
	return "none"
}
