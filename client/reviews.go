package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/quire/quire"
)

// Reviews and labels (docs/reviews.md) exist for skills and prompts
// alike, so these methods take the kind rather than doubling every name.

// Kind is a skill or a prompt.
type Kind = quire.Kind

// The kinds.
const (
	KindSkill  = quire.KindSkill
	KindPrompt = quire.KindPrompt
)

// Review types, as the server sends them.
type (
	Review     = quire.Review
	ReviewFile = quire.ReviewFile
	Comment    = quire.Comment
	Verdict    = quire.Verdict
	AssetLabel = quire.Label // Label is the prompt cache's option
	LabelMove  = quire.LabelMove
)

// ReviewView is a review with its files (against the base), comments,
// verdicts and whether publishing would pass the project's policy now.
type ReviewView struct {
	Review    *Review      `json:"review"`
	Files     []ReviewFile `json:"files"`
	Comments  []*Comment   `json:"comments"`
	Verdicts  []*Verdict   `json:"verdicts"`
	Mergeable Mergeable    `json:"mergeable"`
}

// Mergeable says whether the draft may be published, and why not.
type Mergeable struct {
	OK                 bool     `json:"ok"`
	Reasons            []string `json:"reasons"`
	Required           int      `json:"required"`
	Approvals          int      `json:"approvals"`
	Stale              int      `json:"stale"`
	ChangesRequestedBy []string `json:"changes_requested_by"`
}

// ReviewInput opens a review.
type ReviewInput struct {
	Title       *string `json:"title,omitempty"`
	Description *string `json:"description,omitempty"`
}

// CommentInput is a comment on a review; with Path and Line it is on a
// line of a file, at the head (Side "" or "head") or the base ("base").
type CommentInput struct {
	Body      *string `json:"body"`
	Path      string  `json:"path,omitempty"`
	Line      int     `json:"line,omitempty"`
	Side      string  `json:"side,omitempty"`
	InReplyTo string  `json:"in_reply_to,omitempty"`
}

// CommentPatch resolves (or unresolves) a comment, or edits its body.
type CommentPatch struct {
	Resolved *bool   `json:"resolved,omitempty"`
	Body     *string `json:"body,omitempty"`
}

// LabelInput points a label at a published version; Override and Reason
// are an owner's way past a protected label's rule.
type LabelInput struct {
	Version  int    `json:"version"`
	Override bool   `json:"override,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// LiveFile is one file of a live version.
type LiveFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// SkillLive is a skill's live version with its files.
type SkillLive struct {
	Version SkillVersion `json:"version"`
	Files   []LiveFile   `json:"files"`
}

func reviewPath(kind Kind, ref string, number int, rest string) string {
	return assetPath(kind.Plural(), ref) + "/reviews/" + strconv.Itoa(number) + rest
}

// reviewView sends r and decodes the bare ReviewView it answers.
func (c *Client) reviewView(ctx context.Context, r request) (*ReviewView, error) {
	var out ReviewView
	if err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// OpenReview opens a review of draft version (409 if it is not a draft
// or already has an open review).
func (c *Client) OpenReview(ctx context.Context, kind Kind, ref string, version int, in ReviewInput) (*ReviewView, error) {
	return c.reviewView(ctx, request{method: "POST", path: versionPath(kind.Plural(), ref, version, "/reviews"), body: in})
}

// Reviews lists a page of an asset's reviews in state ("" for any).
func (c *Client) Reviews(ctx context.Context, kind Kind, ref, state string, o ListOptions) (Page[Review], error) {
	q := listQuery(o)
	if state != "" {
		q.Set("state", state)
	}
	return list[Review](ctx, c, assetPath(kind.Plural(), ref)+"/reviews", "reviews", q)
}

// Review returns review number with its files, comments and verdicts.
func (c *Client) Review(ctx context.Context, kind Kind, ref string, number int) (*ReviewView, error) {
	return c.reviewView(ctx, request{method: "GET", path: reviewPath(kind, ref, number, "")})
}

// CommentReview comments on a review, or on a line of one of its files.
func (c *Client) CommentReview(ctx context.Context, kind Kind, ref string, number int, in CommentInput) (*Comment, error) {
	return unwrap[Comment](ctx, c, request{method: "POST", path: reviewPath(kind, ref, number, "/comments"), body: in}, "comment")
}

// UpdateComment resolves or unresolves a comment, or edits its body
// (its author only).
func (c *Client) UpdateComment(ctx context.Context, kind Kind, ref string, number int, commentID string, in CommentPatch) (*Comment, error) {
	return unwrap[Comment](ctx, c, request{method: "PATCH", path: reviewPath(kind, ref, number, p("/comments/", commentID)), body: in}, "comment")
}

func (c *Client) verdict(ctx context.Context, kind Kind, ref string, number int, action, commit, body string) (*Verdict, error) {
	in := map[string]string{}
	if body != "" {
		in["body"] = body
	}
	if commit != "" {
		in["commit"] = commit
	}
	return unwrap[Verdict](ctx, c, request{method: "POST", path: reviewPath(kind, ref, number, "/"+action), body: in}, "verdict")
}

// ApproveReview approves the review's head, whatever it is when the
// request arrives (body optional); it replaces the caller's earlier
// verdict. Prefer ApproveReviewAt.
func (c *Client) ApproveReview(ctx context.Context, kind Kind, ref string, number int, body string) (*Verdict, error) {
	return c.verdict(ctx, kind, ref, number, "approve", "", body)
}

// ApproveReviewAt approves the review only if its head is still commit,
// the head the reviewer read (ReviewView.Review.Head.Commit); otherwise
// the error is an *APIError with code "head_moved" and details.head.
func (c *Client) ApproveReviewAt(ctx context.Context, kind Kind, ref string, number int, commit, body string) (*Verdict, error) {
	return c.verdict(ctx, kind, ref, number, "approve", commit, body)
}

// RequestChanges requests changes (body required); it blocks publishing
// until the same user gives a new verdict.
func (c *Client) RequestChanges(ctx context.Context, kind Kind, ref string, number int, body string) (*Verdict, error) {
	return c.verdict(ctx, kind, ref, number, "request-changes", "", body)
}

// RequestChangesAt is RequestChanges pinned to the head the reviewer
// read, as ApproveReviewAt.
func (c *Client) RequestChangesAt(ctx context.Context, kind Kind, ref string, number int, commit, body string) (*Verdict, error) {
	return c.verdict(ctx, kind, ref, number, "request-changes", commit, body)
}

// CloseReview closes a review (its author or a project owner).
func (c *Client) CloseReview(ctx context.Context, kind Kind, ref string, number int) (*ReviewView, error) {
	return c.reviewView(ctx, request{method: "POST", path: reviewPath(kind, ref, number, "/close")})
}

// ReopenReview reopens a closed review of a draft.
func (c *Client) ReopenReview(ctx context.Context, kind Kind, ref string, number int) (*ReviewView, error) {
	return c.reviewView(ctx, request{method: "POST", path: reviewPath(kind, ref, number, "/reopen")})
}

// Labels.

// Labels lists an asset's labels: named pointers to published versions.
func (c *Client) Labels(ctx context.Context, kind Kind, ref string) ([]AssetLabel, error) {
	out, err := unwrap[[]AssetLabel](ctx, c, request{method: "GET", path: assetPath(kind.Plural(), ref) + "/labels"}, "labels")
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// SetLabel points label name at a published version.
func (c *Client) SetLabel(ctx context.Context, kind Kind, ref, name string, in LabelInput) (*AssetLabel, error) {
	return unwrap[AssetLabel](ctx, c, request{method: "PUT", path: assetPath(kind.Plural(), ref) + p("/labels/", name), body: in}, "label")
}

// DeleteLabel removes label name.
func (c *Client) DeleteLabel(ctx context.Context, kind Kind, ref, name string) error {
	return c.do(ctx, request{method: "DELETE", path: assetPath(kind.Plural(), ref) + p("/labels/", name)}, nil)
}

// LabelHistory lists every move of label name, newest first.
func (c *Client) LabelHistory(ctx context.Context, kind Kind, ref, name string) ([]LabelMove, error) {
	out, err := unwrap[[]LabelMove](ctx, c, request{method: "GET", path: assetPath(kind.Plural(), ref) + p("/labels/", name, "/history")}, "history")
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// labelVersion is the version label name of prompt or skill ref points
// at: the API has no read by label, so the list answers it.
func (c *Client) labelVersion(ctx context.Context, kind Kind, ref, name string) (int, error) {
	ls, err := c.Labels(ctx, kind, ref)
	if err != nil {
		return 0, err
	}
	for _, l := range ls {
		if l.Name == name {
			return l.Version, nil
		}
	}
	return 0, &APIError{Status: http.StatusNotFound, Code: "not_found", Message: fmt.Sprintf("label %s not found", name)}
}

// LiveSkill returns the live version of skill ref with its files. With
// etag (the commit of an earlier answer) set and unchanged it returns
// nil, nil: the server answered 304.
func (c *Client) LiveSkill(ctx context.Context, ref, etag string) (*SkillLive, error) {
	r := request{method: "GET", path: assetPath("skills", ref) + "/live"}
	if etag != "" {
		r.headers = map[string]string{"If-None-Match": `"` + etag + `"`}
	}
	res, err := c.send(ctx, r)
	if err != nil || res.status == http.StatusNotModified {
		return nil, err
	}
	var out SkillLive
	if err := json.Unmarshal(res.body, &out); err != nil {
		return nil, fmt.Errorf("client: GET %s: decode answer: %w", r.path, err)
	}
	return &out, nil
}
