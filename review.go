package quire

import (
	"context"
	"time"
)

// ReviewState is where a review is in its life.
type ReviewState string

const (
	ReviewOpen   ReviewState = "open"
	ReviewMerged ReviewState = "merged"
	ReviewClosed ReviewState = "closed"
)

// Valid reports whether s is a known review state.
func (s ReviewState) Valid() bool {
	return s == ReviewOpen || s == ReviewMerged || s == ReviewClosed
}

// ReviewUser is who acted on a review: the user, whatever credential
// (session or API key) they used.
type ReviewUser struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
}

// ReviewUserOf is the review identity of an actor.
func ReviewUserOf(by Actor) ReviewUser {
	return ReviewUser{ID: by.UserID, Email: by.Email, Name: by.Name}
}

// ReviewBase is what a review compares its draft against: the version
// the draft was opened from (0 for none) and its commit ("" for an
// empty base).
type ReviewBase struct {
	Version int    `json:"version,omitempty"`
	Commit  string `json:"commit"`
}

// ReviewHead is the draft commit a review currently looks at.
type ReviewHead struct {
	Commit string `json:"commit"`
}

// ReviewOverride records an owner publishing past the review policy.
type ReviewOverride struct {
	By     ReviewUser `json:"by"`
	Reason string     `json:"reason"`
	At     time.Time  `json:"at"`
}

// Review is a code review of one draft. Its state lives as review.json
// on refs/reviews/<number> of the asset's repository.
type Review struct {
	Number      int             `json:"number"`
	Version     int             `json:"version"`
	State       ReviewState     `json:"state"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Author      ReviewUser      `json:"author"`
	Base        ReviewBase      `json:"base"`
	Head        ReviewHead      `json:"head"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
	MergedBy    *ReviewUser     `json:"merged_by,omitempty"`
	MergedAt    *time.Time      `json:"merged_at,omitempty"`
	ClosedBy    *ReviewUser     `json:"closed_by,omitempty"`
	ClosedAt    *time.Time      `json:"closed_at,omitempty"`
	Override    *ReviewOverride `json:"override,omitempty"`
	// PolicyMet is set on merge when the project's review policy was met
	// without an override; protected labels need it (or an override).
	PolicyMet bool `json:"policy_met,omitempty"`
}

// Comment sides: a line comment is anchored to the draft's head or to
// the review's base.
const (
	SideHead = "head"
	SideBase = "base"
)

// Comment is one comment of a review, stored as comments/<id>.json.
// Outdated is computed when read: the anchored line changed at the head.
type Comment struct {
	ID        string     `json:"id"`
	Author    ReviewUser `json:"author"`
	Body      string     `json:"body"`
	Path      string     `json:"path,omitempty"`
	Line      int        `json:"line,omitempty"`
	Side      string     `json:"side"`
	Commit    string     `json:"commit"`
	InReplyTo string     `json:"in_reply_to,omitempty"`
	Resolved  bool       `json:"resolved"`
	Outdated  bool       `json:"outdated"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	// Anchor is the text of the anchored line when the comment was made,
	// kept so that outdated can be told without the old commit.
	Anchor *string `json:"anchor,omitempty"`
	// Case anchors a comment on a prompt review to an evaluation case:
	// the payload's id.
	Case string `json:"case,omitempty"`
}

// Verdict kinds.
const (
	VerdictApprove        = "approve"
	VerdictRequestChanges = "request_changes"
)

// Verdict is one reviewer's judgement, stored as verdicts/<user id>.json:
// a later verdict by the same user replaces it. Stale is computed when
// read: the head moved since it was given. Counts and Reason are judged
// when read too, under the project's policy as it is then: whether the
// verdict counts towards publishing, and why not (NotCounted*).
type Verdict struct {
	User      ReviewUser `json:"user"`
	Kind      string     `json:"kind"`
	Commit    string     `json:"commit"`
	Stale     bool       `json:"stale"`
	Counts    bool       `json:"counts"`
	Reason    NotCounted `json:"reason,omitempty"`
	Body      string     `json:"body,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
}

// NotCounted is why a verdict does not count.
type NotCounted string

// The reasons a verdict does not count.
const (
	// NotCountedSelfApproval: its user wrote to the draft (authors are
	// quire's record of who wrote, never commit author lines), and the
	// policy does not allow self-approval.
	NotCountedSelfApproval NotCounted = "self_approval"
	// NotCountedStale: an approval of an older head, under a policy that
	// dismisses those.
	NotCountedStale NotCounted = "stale"
	// NotCountedNoWriteAccess: its user no longer has write access to
	// the project (removed, made a viewer, or disabled).
	NotCountedNoWriteAccess NotCounted = "no_write_access"
)

// Why says the reason in words, for people.
func (reason NotCounted) Why() string {
	switch reason {
	case NotCountedSelfApproval:
		return "an author's own approval does not count under this project's policy"
	case NotCountedStale:
		return "given before the draft last changed"
	case NotCountedNoWriteAccess:
		return "the reviewer no longer has write access to the project"
	}
	return ""
}

// ReviewFile is one file a review changes against its base.
type ReviewFile struct {
	Path      string `json:"path"`
	Status    string `json:"status"` // added, modified, deleted
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
}

// ReviewThread is a review with everything said on it, as read at one
// moment. Authors are the user ids of the principals who wrote to the
// draft (opened it, wrote through the API, UI or MCP, pushed to it), as
// quire recorded them at each write; AuthorEmails is only for a draft
// opened before those records were kept: the emails its commits claim.
type ReviewThread struct {
	Review       *Review
	Comments     []*Comment
	Verdicts     []*Verdict
	Authors      []string
	AuthorEmails []string
}

// ReviewTx is one review event being written under the repository's
// lock: the review as it stands (its state and head settled), a reader of
// its comments, and what the event writes -- review.json always, and the
// comments and verdicts listed. Message is the commit's subject. It reads
// only what the event needs, so a comment costs the same on a review of
// two comments as on one of two hundred.
type ReviewTx struct {
	Review *Review
	// Comment reads comment id as stored (nil when there is none).
	Comment  func(id string) (*Comment, error)
	Message  string
	Comments []*Comment
	Verdicts []*Verdict
}

// ReviewPolicy is a project's rule for publishing. The zero policy
// (no approvals required) is the behaviour before reviews existed.
type ReviewPolicy struct {
	RequiredApprovals int  `json:"required_approvals"`
	AllowSelfApproval bool `json:"allow_self_approval"`
	// DismissStale, true when unset, makes approvals of an older head
	// stop counting.
	DismissStale    *bool    `json:"dismiss_stale,omitempty"`
	ProtectedLabels []string `json:"protected_labels"`
	// Evaluate starts an evaluation of a prompt review's head against
	// its base when the review opens and whenever its head moves;
	// RequirePassingEvaluation makes publishing a prompt draft need a
	// completed evaluation of its head with no failed or errored case
	// (docs/evaluations.md).
	Evaluate                 bool `json:"evaluate,omitempty"`
	RequirePassingEvaluation bool `json:"require_passing_evaluation,omitempty"`
}

// Dismisses reports whether stale approvals stop counting.
func (p ReviewPolicy) Dismisses() bool { return p.DismissStale == nil || *p.DismissStale }

// Policy is the project's review policy with its defaults filled in.
func (p *Project) Policy() ReviewPolicy {
	var out ReviewPolicy
	if p.ReviewPolicy != nil {
		out = *p.ReviewPolicy
	}
	if out.ProtectedLabels == nil {
		out.ProtectedLabels = []string{}
	}
	t := out.Dismisses()
	out.DismissStale = &t
	return out
}

// ReviewGate decides, under the publish lock, whether draft n may be
// published given its open review (nil when it has none); on success it
// may return what the merge records on the review (nil: nothing).
type ReviewGate func(rt *ReviewThread) (*ReviewMerge, error)

// ReviewMerge is what publishing records on the draft's open review.
type ReviewMerge struct {
	Override  *ReviewOverride
	PolicyMet bool
}

// ReviewStore keeps reviews in the asset's repository, one ref per review.
type ReviewStore interface {
	// OpenReview opens r on draft r.Version; it sets the number, base,
	// head and times. A draft with an open review is ECONFLICT.
	OpenReview(ctx context.Context, by Actor, a *Asset, r *Review) (*ReviewThread, error)
	// Reviews lists the reviews of a in state ("" for any), by number.
	Reviews(ctx context.Context, a *Asset, state ReviewState) ([]*Review, error)
	// ReviewThread reads review n with its comments and verdicts.
	ReviewThread(ctx context.Context, a *Asset, n int) (*ReviewThread, error)
	// UpdateReview runs change on review n under the write lock and
	// commits what it leaves in the ReviewTx as one commit by by; it
	// returns the review as written.
	UpdateReview(ctx context.Context, by Actor, a *Asset, n int, change func(tx *ReviewTx) error) (*Review, error)
	// ReviewFiles lists what changes from base to head (commits; "" is empty).
	ReviewFiles(ctx context.Context, a *Asset, base, head string) ([]ReviewFile, error)
	// ReadAt reads path at commit; found is false when it is absent.
	ReadAt(ctx context.Context, a *Asset, commit, path string) (content []byte, found bool, err error)
	// PublishReviewed publishes draft n as PublishVersion does, once gate
	// allows it, and merges its open review, under one lock.
	PublishReviewed(ctx context.Context, by Actor, a *Asset, n int, check func(ReadFunc) error, gate ReviewGate) (*Version, error)
	// CloseDraftReview closes the open review of draft n, if any, once
	// the draft is gone, and returns the reviews it closed.
	CloseDraftReview(ctx context.Context, by Actor, a *Asset, n int) ([]*Review, error)
}

// Label is a named pointer to a published version besides live.
type Label struct {
	Name    string    `json:"name"`
	Version int       `json:"version"`
	Commit  string    `json:"commit"`
	MovedAt time.Time `json:"moved_at"`
	MovedBy string    `json:"moved_by"`
}

// LabelMove is one entry of a label's history; Version 0 is a removal.
type LabelMove struct {
	Name        string    `json:"name"`
	Version     int       `json:"version,omitempty"`
	Commit      string    `json:"commit,omitempty"`
	FromVersion int       `json:"from_version,omitempty"`
	Action      string    `json:"action"` // set, delete
	MovedAt     time.Time `json:"moved_at"`
	MovedBy     string    `json:"moved_by"`
	// Override is the owner's reason when the move went past the
	// protected-label rule.
	Override string `json:"override,omitempty"`
}

// LabelStore keeps labels: refs/labels/<name> at the version's commit,
// and one commit per move on refs/meta/labels.
type LabelStore interface {
	// SetLabel points name at published version n; override, when set,
	// is an owner's reason for moving a protected label, kept in the
	// move's commit.
	SetLabel(ctx context.Context, by Actor, a *Asset, name string, n int, override string) (*Label, error)
	// DeleteLabel removes name; override, when set, is an owner's reason
	// for removing a protected label, kept in the commit as SetLabel's.
	DeleteLabel(ctx context.Context, by Actor, a *Asset, name, override string) error
	Labels(ctx context.Context, a *Asset) ([]Label, error)
	// LabelHistory lists every move of name, newest first.
	LabelHistory(ctx context.Context, a *Asset, name string) ([]LabelMove, error)
}
