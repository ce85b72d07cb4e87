package apptest

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/quire/quire"
)

// Reviews is a Versions that keeps reviews too, the quire.ReviewStore
// app finds on the version store, as gitstore's is one. It is a type of
// its own so that a test of an App without reviews (a plain Versions)
// stays one. As gitstore does, a review's head is its draft's commit, a
// verdict given on another head reads as stale, a thread's authors are
// the users who wrote to the draft, and publishing merges the draft's
// open review under the gate's decision. ReviewFiles lists nothing: what
// a review changes is gitstore's to tell.
type Reviews struct {
	*store

	reviews map[string][]*review // asset id → by number - 1; under Versions.mu
}

// store is Versions under a name that is not one of its methods:
// embedded as Versions, the field would hide the method Versions.
type store = Versions

// review is one review as stored: the review, its comments in order,
// and its verdicts by user id.
type review struct {
	rv       quire.Review
	comments []*quire.Comment
	verdicts map[string]*quire.Verdict
}

// NewReviews returns v keeping reviews.
func NewReviews(v *Versions) *Reviews {
	return &Reviews{store: v, reviews: map[string][]*review{}}
}

// OpenReview opens r on draft r.Version, which must have no open review.
func (s *Reviews) OpenReview(_ context.Context, by quire.Actor, as *quire.Asset, r *quire.Review) (*quire.ReviewThread, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.get(as, r.Version)
	if err != nil {
		return nil, err
	}
	if d.v.State != quire.StateDraft {
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is %s; only a draft can be reviewed", r.Version, d.v.State)
	}
	if o := s.open(as, r.Version); o != nil {
		return nil, quire.Errorf(quire.ECONFLICT, "draft %d already has open review %d", r.Version, o.rv.Number)
	}
	now := time.Now().UTC()
	rv := *r
	rv.Number, rv.State, rv.Author = len(s.reviews[as.ID])+1, quire.ReviewOpen, quire.ReviewUserOf(by)
	rv.Head = quire.ReviewHead{Commit: d.v.Commit}
	if b, ok := s.versions[as.ID][d.v.Base]; ok {
		rv.Base = quire.ReviewBase{Version: d.v.Base, Commit: b.v.Commit}
	}
	rv.CreatedAt, rv.UpdatedAt = now, now
	s.reviews[as.ID] = append(s.reviews[as.ID], &review{rv: rv, verdicts: map[string]*quire.Verdict{}})
	return s.thread(as, rv.Number)
}

// open is the open review of draft n of as, nil when none.
func (s *Reviews) open(as *quire.Asset, n int) *review {
	for _, r := range s.reviews[as.ID] {
		if r.rv.Version == n && r.rv.State == quire.ReviewOpen {
			return r
		}
	}
	return nil
}

// review is review num of as, ENOTFOUND when there is none; an open
// review's head follows its draft.
func (s *Reviews) review(as *quire.Asset, num int) (*review, error) {
	if num < 1 || num > len(s.reviews[as.ID]) {
		return nil, quire.Errorf(quire.ENOTFOUND, "review %d not found", num)
	}
	r := s.reviews[as.ID][num-1]
	if d, ok := s.versions[as.ID][r.rv.Version]; ok && r.rv.State == quire.ReviewOpen && d.v.State == quire.StateDraft {
		r.rv.Head.Commit = d.v.Commit
	}
	return r, nil
}

// thread reads review num as ReviewThread does: copies, with each
// verdict's staleness and the draft's authors.
func (s *Reviews) thread(as *quire.Asset, num int) (*quire.ReviewThread, error) {
	r, err := s.review(as, num)
	if err != nil {
		return nil, err
	}
	rv := r.rv
	rt := &quire.ReviewThread{Review: &rv, Comments: []*quire.Comment{}, Verdicts: []*quire.Verdict{}, Authors: []string{}}
	for _, c := range r.comments {
		cc := *c
		rt.Comments = append(rt.Comments, &cc)
	}
	for _, id := range slices.Sorted(maps.Keys(r.verdicts)) {
		v := *r.verdicts[id]
		v.Stale = v.Commit != rv.Head.Commit
		rt.Verdicts = append(rt.Verdicts, &v)
	}
	if d, ok := s.versions[as.ID][rv.Version]; ok {
		rt.Authors = append(rt.Authors, d.authors...)
	}
	return rt, nil
}

// Reviews lists the reviews of as in state ("" for any), by number.
func (s *Reviews) Reviews(_ context.Context, as *quire.Asset, state quire.ReviewState) ([]*quire.Review, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*quire.Review{}
	for i := range s.reviews[as.ID] {
		r, _ := s.review(as, i+1)
		if state == "" || r.rv.State == state {
			c := r.rv
			out = append(out, &c)
		}
	}
	return out, nil
}

// ReviewThread reads review num with its comments and verdicts.
func (s *Reviews) ReviewThread(_ context.Context, as *quire.Asset, num int) (*quire.ReviewThread, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.thread(as, num)
}

// UpdateReview runs change on a copy of review num and keeps what it
// leaves: the review, and the comments and verdicts it lists. change
// runs without the store's lock, as it reads the store (ReadAt); these
// tests do not race review writes.
func (s *Reviews) UpdateReview(_ context.Context, _ quire.Actor, as *quire.Asset, num int, change func(tx *quire.ReviewTx) error) (*quire.Review, error) {
	s.mu.Lock()
	r, err := s.review(as, num)
	var rv quire.Review
	var comments []*quire.Comment
	if err == nil {
		rv, comments = r.rv, slices.Clone(r.comments)
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	tx := &quire.ReviewTx{Review: &rv, Comment: func(id string) (*quire.Comment, error) {
		for _, c := range comments {
			if c.ID == id {
				cc := *c
				return &cc, nil
			}
		}
		return nil, nil
	}}
	if err := change(tx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rv.UpdatedAt = time.Now().UTC()
	r.rv = rv
	for _, c := range tx.Comments {
		cc := *c
		if i := slices.IndexFunc(r.comments, func(o *quire.Comment) bool { return o.ID == c.ID }); i >= 0 {
			r.comments[i] = &cc
		} else {
			r.comments = append(r.comments, &cc)
		}
	}
	for _, v := range tx.Verdicts {
		vv := *v
		r.verdicts[v.User.ID] = &vv
	}
	c := r.rv
	return &c, nil
}

// ReviewFiles lists nothing.
func (s *Reviews) ReviewFiles(context.Context, *quire.Asset, string, string) ([]quire.ReviewFile, error) {
	return []quire.ReviewFile{}, nil
}

// ReadAt reads path at commit.
func (s *Reviews) ReadAt(_ context.Context, _ *quire.Asset, commit, path string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.commits[commit][path]
	return slices.Clone(b), ok, nil
}

// PublishReviewed publishes draft n as PublishVersion does once gate
// allows it, and merges its open review with what gate returns. Unlike
// gitstore it does not hold its lock while gate runs (gate reads the
// stores); these tests do not race publishes.
func (s *Reviews) PublishReviewed(_ context.Context, by quire.Actor, as *quire.Asset, n int, check func(quire.ReadFunc) error, gate quire.ReviewGate) (*quire.Version, error) {
	s.mu.Lock()
	d, err := s.get(as, n)
	if err == nil && d.v.State != quire.StateDraft {
		err = quire.Errorf(quire.ECONFLICT, "version %d is already %s", n, d.v.State)
	}
	var rt *quire.ReviewThread
	if o := s.open(as, n); err == nil && o != nil {
		rt, err = s.thread(as, o.rv.Number)
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	merge, err := gate(rt)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.publish(as, n, check)
	if err != nil {
		return nil, err
	}
	if o := s.open(as, n); o != nil {
		now, user := time.Now().UTC(), quire.ReviewUserOf(by)
		o.rv.State, o.rv.MergedBy, o.rv.MergedAt, o.rv.UpdatedAt = quire.ReviewMerged, &user, &now, now
		if merge != nil {
			o.rv.Override, o.rv.PolicyMet = merge.Override, merge.PolicyMet
		}
	}
	return v, nil
}

// CloseDraftReview closes the open review of draft n, once it is gone.
func (s *Reviews) CloseDraftReview(_ context.Context, by quire.Actor, as *quire.Asset, n int) ([]*quire.Review, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.open(as, n)
	if o == nil {
		return nil, nil
	}
	now, user := time.Now().UTC(), quire.ReviewUserOf(by)
	o.rv.State, o.rv.ClosedBy, o.rv.ClosedAt, o.rv.UpdatedAt = quire.ReviewClosed, &user, &now, now
	c := o.rv
	return []*quire.Review{&c}, nil
}
