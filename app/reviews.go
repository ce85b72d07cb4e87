package app

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// Code review of drafts. A review is opened on a draft; editors comment
// (on the review, or on a line of a file at the head or the base) and give
// verdicts; publishing the draft merges it, and the project's review
// policy may require approvals first (gate). The store keeps each review
// on its own ref in the asset's repository (gitstore/reviews.go); the
// rules of who may do what live here.
//
// Each action ends in reviewDone, the one place review events are
// recorded from (events.go).

// ReviewView is a review as read: the review, the files it changes
// against its base, what was said, and whether it can be merged.
type ReviewView struct {
	Review    *quire.Review      `json:"review"`
	Files     []quire.ReviewFile `json:"files"`
	Comments  []*quire.Comment   `json:"comments"`
	Verdicts  []*quire.Verdict   `json:"verdicts"`
	Mergeable Mergeable          `json:"mergeable"`
	// Evaluation is a prompt review's head's latest evaluation
	// (evalreview.go); nil when there is none.
	Evaluation *ReviewEvaluation   `json:"evaluation,omitempty"`
	Thread     *quire.ReviewThread `json:"-"`
}

// Mergeable says whether publishing the draft would pass the policy now.
type Mergeable struct {
	OK      bool     `json:"ok"`
	Reasons []string `json:"reasons"`
	// The counts behind it, for the review_required error's details.
	Required           int      `json:"required"`
	Approvals          int      `json:"approvals"`
	Stale              int      `json:"stale"`
	ChangesRequestedBy []string `json:"changes_requested_by"`
}

// ReviewEdit opens a review.
type ReviewEdit struct {
	Title       *string
	Description *string
}

// CommentEdit is a new comment; Side is "head" when empty.
type CommentEdit struct {
	Body      *string
	Path      string
	Line      int
	Side      string
	InReplyTo string
	Case      string
}

// CommentPatch changes a comment: its resolved flag, or its body.
type CommentPatch struct {
	Resolved *bool
	Body     *string
}

// VerdictEdit is a verdict's body, and the head the reviewer read: when
// given, the verdict is refused (EHEADMOVED) unless it is still the
// review's head, so a page or script that read an older head never
// approves a newer one.
type VerdictEdit struct {
	Body   *string
	Commit string
}

// ReviewEvent names what happened to a review, for reviewDone.
type ReviewEvent string

const (
	ReviewOpened         ReviewEvent = "review.opened"
	ReviewCommented      ReviewEvent = "review.commented"
	ReviewCommentChanged ReviewEvent = "review.comment_updated"
	ReviewApproved       ReviewEvent = "review.approved"
	ReviewChangesAsked   ReviewEvent = "review.changes_requested"
	ReviewClosedEvent    ReviewEvent = "review.closed"
	ReviewReopened       ReviewEvent = "review.reopened"
	ReviewMergedEvent    ReviewEvent = "review.merged"
	ReviewRetitled       ReviewEvent = "review.retitled"
)

// reviewDone is where every review action completes once it is durable:
// it records the review event (webhooks, SSE; events.go). Its error is
// the caller's, as for every emit: the change is then not acknowledged.
func (a *App) reviewDone(ctx context.Context, p *quire.Principal, as *quire.Asset, ev ReviewEvent, rv *quire.Review) error {
	e := a.assetEvent(quire.EventType(ev), p.Actor(), as, rv.Version, "")
	e.Review = rv.Number
	e.Data["state"] = rv.State
	if rv.Title != "" {
		e.Data["title"] = rv.Title
	}
	return a.emit(ctx, e)
}

// updateReview is the write of every change to review num: announced as
// ev, applied by fn in the store's transaction, then recorded (reviewDone).
func (a *App) updateReview(ctx context.Context, p *quire.Principal, as *quire.Asset, ev ReviewEvent, num int, fn func(*quire.ReviewTx) error) (*quire.Review, error) {
	ctx, err := a.reviewIntent(ctx, p, as, ev, num)
	if err != nil {
		return nil, err
	}
	rv, err := a.reviews.UpdateReview(ctx, p.Actor(), as, num, fn)
	if err != nil {
		return nil, a.abandon(ctx, err)
	}
	if err := a.reviewDone(ctx, p, as, ev, rv); err != nil {
		return nil, err
	}
	return rv, nil
}

// reviewStore is the review store when the caller has want on the
// asset.
func (h *Handle) reviewStore(want quire.Access) (quire.ReviewStore, error) {
	if err := h.need(want); err != nil {
		return nil, err
	}
	return h.app.reviewStore()
}

// reviewStore returns the review store, or EUNAVAILABLE when the version
// store keeps none.
func (a *App) reviewStore() (quire.ReviewStore, error) {
	if a.reviews == nil {
		return nil, quire.Errorf(quire.EUNAVAILABLE, "reviews are not kept by this server")
	}
	return a.reviews, nil
}

// OpenReview opens a review of draft n.
func (h *Handle) OpenReview(ctx context.Context, n int, e ReviewEdit) (*ReviewView, error) {
	a, p, as, pr := h.app, h.P, h.Asset, h.Project
	rs, err := h.reviewStore(quire.AccessWrite)
	if err != nil {
		return nil, err
	}
	rv := &quire.Review{Version: n}
	if e.Title == nil || strings.TrimSpace(*e.Title) == "" {
		return nil, quire.Errorf(quire.EINVALID, "title is required")
	}
	if err := valid.ReviewText("title", *e.Title, true, valid.MaxReviewTitle(a.limits)); err != nil {
		return nil, err
	}
	rv.Title = *e.Title
	if e.Description != nil {
		if err := valid.ReviewText("description", *e.Description, false, valid.MaxCommentBody); err != nil {
			return nil, err
		}
		rv.Description = *e.Description
	}
	ctx, err = a.reviewIntent(ctx, p, as, ReviewOpened, 0)
	if err != nil {
		return nil, err
	}
	rt, err := rs.OpenReview(ctx, p.Actor(), as, rv)
	if err != nil {
		return nil, a.abandon(ctx, err)
	}
	if err := a.reviewDone(ctx, p, as, ReviewOpened, rt.Review); err != nil {
		return nil, err
	}
	a.evaluateReview(ctx, p.Actor(), as, pr, rt.Review)
	return a.reviewView(ctx, as, pr, rt)
}

// Reviews lists a page of the asset's reviews in state ("" for any).
func (h *Handle) Reviews(ctx context.Context, state quire.ReviewState) ([]*quire.Review, error) {
	rs, err := h.reviewStore(quire.AccessRead)
	if err != nil {
		return nil, err
	}
	if state != "" && !state.Valid() {
		return nil, quire.Errorf(quire.EINVALID, "state must be open, merged or closed")
	}
	return rs.Reviews(ctx, h.Asset, state)
}

// Review reads review num with its files, comments, verdicts and whether
// it can be merged.
func (h *Handle) Review(ctx context.Context, num int) (*ReviewView, error) {
	rs, err := h.reviewStore(quire.AccessRead)
	if err != nil {
		return nil, err
	}
	rt, err := rs.ReviewThread(ctx, h.Asset, num)
	if err != nil {
		return nil, err
	}
	return h.app.reviewView(ctx, h.Asset, h.Project, rt)
}

func (a *App) reviewView(ctx context.Context, as *quire.Asset, pr *quire.Project, rt *quire.ReviewThread) (*ReviewView, error) {
	files, err := a.reviews.ReviewFiles(ctx, as, rt.Review.Base.Commit, rt.Review.Head.Commit)
	if err != nil {
		return nil, err
	}
	m, err := a.mergeable(ctx, pr, rt)
	if err != nil {
		return nil, err
	}
	ev, err := a.reviewEvaluation(ctx, as, rt.Review)
	if err != nil {
		return nil, err
	}
	return &ReviewView{
		Review: rt.Review, Files: files, Comments: rt.Comments, Verdicts: rt.Verdicts,
		Mergeable: m, Thread: rt, Evaluation: ev,
	}, nil
}

// mergeable applies project pr's policy to rt (nil: the draft has no
// open review), with every verdict's author's access to pr as it is now.
func (a *App) mergeable(ctx context.Context, pr *quire.Project, rt *quire.ReviewThread) (Mergeable, error) {
	writers := map[string]bool{}
	if rt != nil {
		for _, v := range rt.Verdicts {
			if _, ok := writers[v.User.ID]; ok {
				continue
			}
			ok, err := a.canWrite(ctx, pr, v.User.ID)
			if err != nil {
				return Mergeable{}, err
			}
			writers[v.User.ID] = ok
		}
	}
	return judge(pr.Policy(), rt, func(id string) bool { return writers[id] }), nil
}

// canWrite reports whether user id may write to project pr now: a member
// with write access, or an admin, and not disabled. A verdict is the
// user's, whatever credential gave it, so it is judged by the user.
func (a *App) canWrite(ctx context.Context, pr *quire.Project, id string) (bool, error) {
	u, err := a.meta.User(ctx, id)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if u.Disabled {
		return false, nil
	}
	return u.Role == quire.RoleAdmin || pr.Role(id).Level() >= quire.AccessWrite, nil
}

// judge applies policy to rt: approvals of the current head by users
// with write access who are not among the draft's authors (unless
// self-approval is allowed) count, stale ones only when the policy keeps
// them; a request for changes blocks until its author gives a new
// verdict, or loses write access. Each verdict is marked with whether it
// counts and why not, and each approval that does not count says so in
// the reasons.
func judge(pol quire.ReviewPolicy, rt *quire.ReviewThread, canWrite func(userID string) bool) Mergeable {
	m := Mergeable{Required: pol.RequiredApprovals, Reasons: []string{}, ChangesRequestedBy: []string{}}
	if rt == nil {
		if m.Required > 0 {
			m.Reasons = append(m.Reasons, "the draft has no open review")
		}
		m.OK = len(m.Reasons) == 0
		return m
	}
	if rt.Review.State != quire.ReviewOpen {
		m.Reasons = append(m.Reasons, "review is "+string(rt.Review.State))
	}
	authors := map[string]bool{}
	for _, id := range rt.Authors {
		authors[id] = true
	}
	for _, e := range rt.AuthorEmails {
		authors["email:"+strings.ToLower(e)] = true
	}
	var notCounting []string
	for _, v := range rt.Verdicts {
		stale := v.Stale && pol.Dismisses()
		self := authors[v.User.ID] || authors["email:"+strings.ToLower(v.User.Email)]
		v.Counts, v.Reason = true, ""
		switch {
		case !canWrite(v.User.ID):
			v.Counts, v.Reason = false, quire.NotCountedNoWriteAccess
		case v.Kind == quire.VerdictApprove && self && !pol.AllowSelfApproval:
			v.Counts, v.Reason = false, quire.NotCountedSelfApproval
		case v.Kind == quire.VerdictApprove && stale:
			v.Counts, v.Reason = false, quire.NotCountedStale
		}
		if v.Kind == quire.VerdictApprove && stale {
			m.Stale++
		}
		switch {
		case v.Kind == quire.VerdictRequestChanges && v.Counts:
			m.ChangesRequestedBy = append(m.ChangesRequestedBy, v.User.Email)
		case v.Kind == quire.VerdictApprove && v.Counts:
			m.Approvals++
		case v.Kind == quire.VerdictApprove && pol.RequiredApprovals > 0:
			notCounting = append(notCounting, fmt.Sprintf("the approval by %s does not count: %s (%s)", v.User.Email, v.Reason, v.Reason.Why()))
		}
	}
	if len(m.ChangesRequestedBy) > 0 {
		m.Reasons = append(m.Reasons, "changes requested by "+strings.Join(m.ChangesRequestedBy, ", "))
	}
	if m.Approvals < m.Required {
		m.Reasons = append(m.Reasons, fmt.Sprintf("%d approval(s) required, %d counting", m.Required, m.Approvals))
		m.Reasons = append(m.Reasons, notCounting...)
	}
	m.OK = len(m.Reasons) == 0
	return m
}

// Comment adds a comment to review num. A line comment names a path that
// exists at the anchored commit (the head, or the base) and a line within
// that file; it keeps the line's text so it can tell when it is outdated.
func (h *Handle) Comment(ctx context.Context, num int, e CommentEdit) (*quire.Comment, error) {
	a, p, as := h.app, h.P, h.Asset
	if _, err := h.reviewStore(quire.AccessWrite); err != nil {
		return nil, err
	}
	if e.Body == nil || strings.TrimSpace(*e.Body) == "" {
		return nil, quire.Errorf(quire.EINVALID, "body is required")
	}
	if err := valid.ReviewText("body", *e.Body, true, valid.MaxCommentBody); err != nil {
		return nil, err
	}
	side := e.Side
	switch side {
	case "":
		side = quire.SideHead
	case quire.SideHead, quire.SideBase:
	default:
		return nil, quire.Errorf(quire.EINVALID, "side must be head or base")
	}
	if e.Line < 0 {
		return nil, quire.Errorf(quire.EINVALID, "line must be a positive number")
	}
	if e.Line > 0 && e.Path == "" {
		return nil, quire.Errorf(quire.EINVALID, "a line comment needs a path")
	}
	if e.Path != "" {
		if err := valid.FilePath(e.Path); err != nil {
			return nil, err
		}
	}
	if err := a.checkCaseAnchor(ctx, as, e); err != nil {
		return nil, err
	}
	now := a.now().UTC()
	c := &quire.Comment{
		ID: uuid.NewString(), Author: quire.ReviewUserOf(p.Actor()), Body: *e.Body,
		Path: e.Path, Line: e.Line, Side: side, InReplyTo: e.InReplyTo, Case: e.Case, CreatedAt: now, UpdatedAt: now,
	}
	if _, err := a.updateReview(ctx, p, as, ReviewCommented, num, func(tx *quire.ReviewTx) error {
		rv := tx.Review
		c.Commit = rv.Head.Commit
		if side == quire.SideBase {
			c.Commit = rv.Base.Commit
		}
		if c.InReplyTo != "" {
			if parent, err := tx.Comment(c.InReplyTo); err != nil {
				return err
			} else if parent == nil {
				return quire.Errorf(quire.EUNPROCESSABLE, "in_reply_to: comment %s not found in this review", c.InReplyTo)
			}
		}
		if c.Path != "" {
			b, found, err := a.reviews.ReadAt(ctx, as, c.Commit, c.Path)
			if err != nil {
				return err
			}
			if !found {
				return quire.Errorf(quire.EUNPROCESSABLE, "path %s does not exist at the review's %s", c.Path, side)
			}
			if c.Line > 0 {
				lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
				if len(b) == 0 || c.Line > len(lines) {
					return quire.Errorf(quire.EUNPROCESSABLE, "line %d is not in %s (%d lines)", c.Line, c.Path, len(lines)).
						WithDetail("lines", len(lines))
				}
				c.Anchor = &lines[c.Line-1]
			}
		}
		tx.Message = "Comment on review " + strconv.Itoa(rv.Number)
		if c.Path != "" {
			tx.Message += " at " + c.Path
			if c.Line > 0 {
				tx.Message += ":" + strconv.Itoa(c.Line)
			}
		}
		tx.Comments = []*quire.Comment{c}
		return nil
	}); err != nil {
		return nil, err
	}
	return c, nil // just made on the anchored commit: not outdated
}

func findComment(rt *quire.ReviewThread, id string) *quire.Comment {
	for _, c := range rt.Comments {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// UpdateComment resolves or unresolves a comment (any editor), or edits
// its body (its author only).
func (h *Handle) UpdateComment(ctx context.Context, num int, id string, e CommentPatch) (*quire.Comment, error) {
	a, p, as := h.app, h.P, h.Asset
	if _, err := h.reviewStore(quire.AccessWrite); err != nil {
		return nil, err
	}
	if e.Resolved == nil && e.Body == nil {
		return nil, quire.Errorf(quire.EINVALID, "give resolved or body")
	}
	if e.Body != nil {
		if strings.TrimSpace(*e.Body) == "" {
			return nil, quire.Errorf(quire.EINVALID, "body is required")
		}
		if err := valid.ReviewText("body", *e.Body, true, valid.MaxCommentBody); err != nil {
			return nil, err
		}
	}
	if _, err := a.updateReview(ctx, p, as, ReviewCommentChanged, num, func(tx *quire.ReviewTx) error {
		c, err := tx.Comment(id)
		if err != nil {
			return err
		}
		if c == nil {
			return quire.Errorf(quire.ENOTFOUND, "comment %s not found", id)
		}
		var what []string
		if e.Body != nil {
			if c.Author.ID != p.User.ID {
				return quire.Errorf(quire.EFORBIDDEN, "only its author can edit a comment")
			}
			c.Body = *e.Body
			what = append(what, "Edit")
		}
		if e.Resolved != nil {
			c.Resolved = *e.Resolved
			if c.Resolved {
				what = append(what, "Resolve")
			} else {
				what = append(what, "Unresolve")
			}
		}
		c.UpdatedAt = a.now().UTC()
		tx.Message = strings.Join(what, " and ") + " comment " + id + " on review " + strconv.Itoa(tx.Review.Number)
		tx.Comments = []*quire.Comment{c}
		return nil
	}); err != nil {
		return nil, err
	}
	// Read back through the thread, which says whether it is outdated.
	rt, err := a.reviews.ReviewThread(ctx, as, num)
	if err != nil {
		return nil, err
	}
	return findComment(rt, id), nil
}

// Verdict records p's verdict (approve or request_changes) on the head of
// review num, replacing their earlier one. A self-approval is recorded;
// the policy decides whether it counts.
func (h *Handle) Verdict(ctx context.Context, num int, verdict string, e VerdictEdit) (*quire.Verdict, error) {
	a, p, as := h.app, h.P, h.Asset
	if _, err := h.reviewStore(quire.AccessWrite); err != nil {
		return nil, err
	}
	v := &quire.Verdict{User: quire.ReviewUserOf(p.Actor()), Kind: verdict, CreatedAt: a.now().UTC()}
	if e.Body != nil {
		v.Body = *e.Body
	}
	if err := valid.ReviewText("body", v.Body, verdict == quire.VerdictRequestChanges, valid.MaxCommentBody); err != nil {
		return nil, err
	}
	if e.Commit != "" {
		if err := valid.CommitID("commit", e.Commit); err != nil {
			return nil, err
		}
	}
	ev := ReviewApproved
	if verdict == quire.VerdictRequestChanges {
		ev = ReviewChangesAsked
	}
	if _, err := a.updateReview(ctx, p, as, ev, num, func(tx *quire.ReviewTx) error {
		rv := tx.Review
		if rv.State != quire.ReviewOpen {
			return quire.Errorf(quire.ECONFLICT, "review %d is %s", rv.Number, rv.State)
		}
		if e.Commit != "" && e.Commit != rv.Head.Commit {
			return quire.Errorf(quire.EHEADMOVED, "the review's head moved to %s since %s was read: read the changes, then give the verdict again", shortID(rv.Head.Commit), shortID(e.Commit)).
				WithDetail("head", rv.Head.Commit)
		}
		v.Commit = rv.Head.Commit
		tx.Message = "Approve review " + strconv.Itoa(rv.Number)
		if verdict == quire.VerdictRequestChanges {
			tx.Message = "Request changes on review " + strconv.Itoa(rv.Number)
		}
		tx.Verdicts = []*quire.Verdict{v}
		return nil
	}); err != nil {
		return nil, err
	}
	return v, nil // given on the head: not stale
}

// shortID is a commit id as messages show it.
func shortID(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// CloseReview closes review num (its author or a project owner);
// ReopenReview opens it again while its draft is still one and has no
// other open review.
func (h *Handle) CloseReview(ctx context.Context, num int) (*ReviewView, error) {
	return h.setReviewState(ctx, num, quire.ReviewClosed)
}

// ReopenReview reopens closed review num.
func (h *Handle) ReopenReview(ctx context.Context, num int) (*ReviewView, error) {
	return h.setReviewState(ctx, num, quire.ReviewOpen)
}

func (h *Handle) setReviewState(ctx context.Context, num int, to quire.ReviewState) (*ReviewView, error) {
	a, p, as, pr := h.app, h.P, h.Asset, h.Project
	rs, err := h.reviewStore(quire.AccessWrite)
	if err != nil {
		return nil, err
	}
	owner := p.ProjectAccess(pr) >= quire.AccessAdmin
	var others []*quire.Review
	if to == quire.ReviewOpen {
		if others, err = rs.Reviews(ctx, as, quire.ReviewOpen); err != nil {
			return nil, err
		}
	}
	ev := ReviewClosedEvent
	if to == quire.ReviewOpen {
		ev = ReviewReopened
	}
	if _, err := a.updateReview(ctx, p, as, ev, num, func(tx *quire.ReviewTx) error {
		rv := tx.Review
		if rv.Author.ID != p.User.ID && !owner {
			return quire.Errorf(quire.EFORBIDDEN, "only the review's author or a project owner can close or reopen it")
		}
		now := a.now().UTC()
		user := quire.ReviewUserOf(p.Actor())
		switch {
		case to == quire.ReviewClosed && rv.State != quire.ReviewOpen:
			return quire.Errorf(quire.ECONFLICT, "review %d is %s", rv.Number, rv.State)
		case to == quire.ReviewClosed:
			rv.State, rv.ClosedBy, rv.ClosedAt = quire.ReviewClosed, &user, &now
			tx.Message = "Close review " + strconv.Itoa(rv.Number)
			return nil
		case rv.State != quire.ReviewClosed:
			return quire.Errorf(quire.ECONFLICT, "review %d is %s; only a closed review can be reopened", rv.Number, rv.State)
		}
		if slices.ContainsFunc(others, func(o *quire.Review) bool { return o.Version == rv.Version && o.Number != rv.Number }) {
			return quire.Errorf(quire.ECONFLICT, "draft %d has another open review", rv.Version)
		}
		rv.State, rv.ClosedBy, rv.ClosedAt = quire.ReviewOpen, nil, nil
		tx.Message = "Reopen review " + strconv.Itoa(rv.Number)
		return nil
	}); err != nil {
		return nil, err
	}
	rt, err := rs.ReviewThread(ctx, as, num)
	if err != nil {
		return nil, err
	}
	return a.reviewView(ctx, as, pr, rt)
}

// PublishOptions are a publish's review options: an owner's override of
// the review policy, with its reason.
type PublishOptions struct {
	Override bool
	Reason   string
}

// reviewGate is the publish policy of project pr for p: with approvals
// required, the draft's open review must be mergeable, unless an owner
// overrides (with a reason) — recorded on the review.
func (a *App) reviewGate(ctx context.Context, p *quire.Principal, pr *quire.Project, o PublishOptions) quire.ReviewGate {
	pol := pr.Policy()
	return func(rt *quire.ReviewThread) (*quire.ReviewMerge, error) {
		m, err := a.mergeable(ctx, pr, rt)
		if err != nil {
			return nil, err
		}
		merge := &quire.ReviewMerge{PolicyMet: rt != nil && m.OK}
		if o.Override {
			if err := checkOverride(p, pr, o.Override, o.Reason); err != nil {
				return nil, err
			}
			merge.Override = &quire.ReviewOverride{By: quire.ReviewUserOf(p.Actor()), Reason: o.Reason, At: a.now().UTC()}
			return merge, nil
		}
		if pol.RequiredApprovals > 0 && !m.OK {
			return nil, (&quire.Error{Code: quire.EREVIEW, Message: "publishing needs an approved review: " + strings.Join(m.Reasons, "; ")}).
				WithDetail("required", m.Required).WithDetail("approvals", m.Approvals).
				WithDetail("stale", m.Stale).WithDetail("changes_requested_by", m.ChangesRequestedBy)
		}
		return merge, nil
	}
}

// checkPolicy checks a review policy a project owner sets.
func checkPolicy(pol *quire.ReviewPolicy) error {
	if pol.RequiredApprovals < 0 || pol.RequiredApprovals > valid.MaxRequiredApprovals {
		return quire.Errorf(quire.EUNPROCESSABLE, "review_policy.required_approvals must be from 0 to %d", valid.MaxRequiredApprovals)
	}
	if len(pol.ProtectedLabels) > valid.MaxProtectedLabels {
		return quire.Errorf(quire.EUNPROCESSABLE, "review_policy.protected_labels holds at most %d labels", valid.MaxProtectedLabels)
	}
	for _, l := range pol.ProtectedLabels {
		if err := valid.LabelName(l); err != nil {
			return quire.Errorf(quire.EUNPROCESSABLE, "review_policy.protected_labels: %q: %s", l, quire.ErrorMessage(err))
		}
	}
	if pol.ProtectedLabels == nil {
		pol.ProtectedLabels = []string{}
	}
	return nil
}

// PushedReview is what a push with -o review did to a draft's review.
type PushedReview struct {
	Version int
	Review  *quire.Review // nil when Err is set
	Opened  bool
	Err     error
}

// pushReview applies the review push options of a git push (Push) that
// moved drafts of as (the Gerrit way): "review" opens a review of each
// pushed draft, or keeps its open one (whose head the push moved), and
// "review.title=…" sets the title. Other options are ignored. The pusher
// was authorized to write when the push began; this checks again, as
// access may have changed while the pack came in.
func (a *App) pushReview(ctx context.Context, p *quire.Principal, as *quire.Asset, pr *quire.Project, drafts []int, options []string) []PushedReview {
	want, title := false, ""
	for _, o := range options {
		switch {
		case o == "review":
			want = true
		case strings.HasPrefix(o, "review.title="):
			want, title = true, strings.TrimPrefix(o, "review.title=")
		}
	}
	if !want || a.reviews == nil {
		return nil
	}
	if err := p.CheckProject(pr, quire.AccessWrite); err != nil {
		return []PushedReview{{Err: err}}
	}
	open, err := a.reviews.Reviews(ctx, as, quire.ReviewOpen)
	if err != nil {
		return []PushedReview{{Err: err}}
	}
	var out []PushedReview
	for _, n := range drafts {
		i := slices.IndexFunc(open, func(r *quire.Review) bool { return r.Version == n })
		if i < 0 {
			t := title
			if t == "" {
				t = "Draft " + strconv.Itoa(n)
			}
			v, err := a.handle(p, as, pr).OpenReview(ctx, n, ReviewEdit{Title: &t})
			if err != nil {
				out = append(out, PushedReview{Version: n, Err: err})
				continue
			}
			out = append(out, PushedReview{Version: n, Review: v.Review, Opened: true})
			continue
		}
		rv := open[i]
		if title != "" && title != rv.Title {
			if err := valid.ReviewText("title", title, true, valid.MaxReviewTitle(a.limits)); err != nil {
				out = append(out, PushedReview{Version: n, Err: err})
				continue
			}
			rv, err = a.updateReview(ctx, p, as, ReviewRetitled, rv.Number, func(tx *quire.ReviewTx) error {
				tx.Review.Title = title
				tx.Message = "Retitle review " + strconv.Itoa(tx.Review.Number) + ": " + strings.ReplaceAll(title, "\n", " ")
				return nil
			})
			if err != nil {
				out = append(out, PushedReview{Version: n, Err: err})
				continue
			}
		}
		out = append(out, PushedReview{Version: n, Review: rv})
	}
	return out
}
