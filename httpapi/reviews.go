package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// Reviews of drafts (docs/reviews.md): thin doors into app/reviews.go.
// reviewRoutes takes the asset route group and the kind, so the routes
// are mounted wherever the asset routes are.
func (s *Server) reviewRoutes(g *gin.RouterGroup) {
	g.POST("/versions/:version/reviews", s.writes, s.openReview)
	g.GET("/reviews", s.listReviews)
	g.GET("/reviews/:number", s.getReview)
	g.POST("/reviews/:number/comments", s.writes, s.commentReview)
	g.PATCH("/reviews/:number/comments/:commentID", s.writes, s.updateComment)
	g.POST("/reviews/:number/approve", s.writes, s.verdict(quire.VerdictApprove))
	g.POST("/reviews/:number/request-changes", s.writes, s.verdict(quire.VerdictRequestChanges))
	g.POST("/reviews/:number/close", s.reviewState((*app.Handle).CloseReview))
	g.POST("/reviews/:number/reopen", s.reviewState((*app.Handle).ReopenReview))
}

// reviewAPIRoutes documents reviewRoutes and labelRoutes for both kinds.
func reviewAPIRoutes() []apiRoute {
	var out []apiRoute
	for _, kind := range []quire.Kind{quire.KindSkill, quire.KindPrompt} {
		p := "/v1/" + kind.Plural() + "/{id}"
		tag := string(kind) + " reviews"
		out = append(out,
			route("POST", p+"/versions/{version}/reviews", tag, "Open a review of a draft against its base; 409 if the version is not a draft or already has an open review", body("ReviewRequest"), ok(201, "ReviewView"), fails(409)),
			route("GET", p+"/reviews", tag, "List reviews, by number", query("state", "limit", "cursor"), list(200, "reviews", "Review")),
			route("GET", p+"/reviews/{number}", tag, "A review with its files (against the base), comments, verdicts and mergeable", ok(200, "ReviewView")),
			route("POST", p+"/reviews/{number}/comments", tag, "Comment on a review, or on a line of a file at the head (or base); 422 for a path or line that does not exist", body("CommentRequest"), wrap(201, "comment", "Comment"), fails(422)),
			route("PATCH", p+"/reviews/{number}/comments/{commentID}", tag, "Resolve or unresolve a comment, or edit its body (its author only)", body("CommentPatchRequest"), wrap(200, "comment", "Comment")),
			route("POST", p+"/reviews/{number}/approve", tag, "Approve the review's head; replaces the caller's earlier verdict; 409 unless open. Send commit, the head you read (head.commit): if the head moved since, 409 head_moved with details.head", optionalBody("VerdictRequest"), wrap(201, "verdict", "Verdict"), fails(409)),
			route("POST", p+"/reviews/{number}/request-changes", tag, "Request changes (body required); blocks publishing until the same user gives a new verdict. Send commit as for approve (409 head_moved)", body("VerdictRequest"), wrap(201, "verdict", "Verdict"), fails(409)),
			route("POST", p+"/reviews/{number}/close", tag, "Close a review (its author or a project owner)", ok(200, "ReviewView"), fails(409)),
			route("POST", p+"/reviews/{number}/reopen", tag, "Reopen a closed review of a draft", ok(200, "ReviewView"), fails(409)),
			route("GET", p+"/labels", string(kind)+" labels", "The labels: named pointers to published versions besides live", ok(200, "LabelList")),
			route("PUT", p+"/labels/{name}", string(kind)+" labels", "Point a label at a published version (409 otherwise); a protected label needs a reviewed version or an owner's override (409 review_required); live is reserved (422)", body("LabelRequest"), wrap(200, "label", "Label"), fails(409), fails(422)),
			route("DELETE", p+"/labels/{name}", string(kind)+" labels", "Remove a label; a protected label only by a project owner's override with a reason (409 label_protected otherwise), kept in its history", optionalBody("LabelDeleteRequest"), ok(204, ""), fails(409)),
			route("GET", p+"/labels/{name}/history", string(kind)+" labels", "Every move of a label, newest first, with who and when", ok(200, "LabelHistory")),
		)
	}
	return out
}

// reviewAPISchemas are the types reviewAPIRoutes names.
var reviewAPISchemas = map[string]any{
	"ReviewRequest":       reviewRequest{},
	"ReviewView":          app.ReviewView{},
	"Review":              quire.Review{},
	"CommentRequest":      commentRequest{},
	"CommentPatchRequest": commentPatchRequest{},
	"Comment":             quire.Comment{},
	"VerdictRequest":      verdictRequest{},
	"Verdict":             quire.Verdict{},
	"PublishRequest":      publishRequest{},
	"LabelRequest":        labelRequest{},
	"LabelDeleteRequest":  labelDeleteRequest{},
	"Label":               quire.Label{},
	"LabelList": struct {
		Labels []quire.Label `json:"labels"`
	}{},
	"LabelHistory": struct {
		History []quire.LabelMove `json:"history"`
	}{},
}

type reviewRequest struct {
	Title       *string `json:"title" openapi:"required"`
	Description *string `json:"description"`
}

type commentRequest struct {
	Body      *string `json:"body" openapi:"required"`
	Path      string  `json:"path"`
	Line      int     `json:"line"`
	Side      string  `json:"side"`
	InReplyTo string  `json:"in_reply_to"`
	// Case anchors the comment to a payload's evaluation case (prompt
	// reviews).
	Case string `json:"case"`
}

type commentPatchRequest struct {
	Resolved *bool   `json:"resolved"`
	Body     *string `json:"body"`
}

type verdictRequest struct {
	Body *string `json:"body"`
	// Commit is the head the reviewer read (GET …/reviews/{n} head.commit);
	// a verdict on any other head is refused, 409 head_moved.
	Commit string `json:"commit"`
}

// publishRequest is publish's optional body: an owner's override of the
// review policy.
type publishRequest struct {
	Override bool   `json:"override"`
	Reason   string `json:"reason"`
}

// reviewNumber parses the {number} path parameter.
func reviewNumber(c *gin.Context) (int, error) {
	n, err := strconv.Atoi(c.Param("number"))
	if err != nil || n <= 0 {
		return 0, quire.Errorf(quire.EINVALID, "review number must be a positive integer")
	}
	return n, nil
}

// decodeOptional decodes a body that may be absent (or white space).
func (s *Server) decodeOptional(c *gin.Context, v any) error {
	b, err := s.readBody(c)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return decodeJSON(b, v, false)
}

// bind decodes c's JSON body into v; a bad body has been answered when
// it reports false.
func (s *Server) bind(c *gin.Context, v any) bool {
	if err := s.decode(c, v); err != nil {
		s.fail(c, err)
		return false
	}
	return true
}

// bindOptional is bind for a body that may be absent.
func (s *Server) bindOptional(c *gin.Context, v any) bool {
	if err := s.decodeOptional(c, v); err != nil {
		s.fail(c, err)
		return false
	}
	return true
}

func (s *Server) openReview(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req reviewRequest
	if !s.bind(c, &req) {
		return
	}
	v, err := handle(c).OpenReview(c.Request.Context(), n, app.ReviewEdit(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, v)
}

func (s *Server) listReviews(c *gin.Context) {
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	all, err := handle(c).Reviews(c.Request.Context(), quire.ReviewState(c.Query("state")))
	if err != nil {
		s.fail(c, err)
		return
	}
	pg, next, err := app.Page(all, opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"reviews": pg, "next_cursor": next})
}

func (s *Server) getReview(c *gin.Context) {
	num, err := reviewNumber(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	v, err := handle(c).Review(c.Request.Context(), num)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (s *Server) commentReview(c *gin.Context) {
	num, err := reviewNumber(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req commentRequest
	if !s.bind(c, &req) {
		return
	}
	cm, err := handle(c).Comment(c.Request.Context(), num, app.CommentEdit(req))
	s.respond(c, http.StatusCreated, "comment", cm, err)
}

func (s *Server) updateComment(c *gin.Context) {
	num, err := reviewNumber(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req commentPatchRequest
	if !s.bind(c, &req) {
		return
	}
	cm, err := handle(c).UpdateComment(c.Request.Context(), num, c.Param("commentID"), app.CommentPatch(req))
	s.respond(c, http.StatusOK, "comment", cm, err)
}

func (s *Server) verdict(verdict string) gin.HandlerFunc {
	return func(c *gin.Context) {
		num, err := reviewNumber(c)
		if err != nil {
			s.fail(c, err)
			return
		}
		var req verdictRequest
		if !s.bindOptional(c, &req) {
			return
		}
		v, err := handle(c).Verdict(c.Request.Context(), num, verdict, app.VerdictEdit(req))
		s.respond(c, http.StatusCreated, "verdict", v, err)
	}
}

func (s *Server) reviewState(do func(h *app.Handle, ctx context.Context, num int) (*app.ReviewView, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		num, err := s.bodylessAt(c, reviewNumber)
		if err != nil {
			s.fail(c, err)
			return
		}
		v, err := do(handle(c), c.Request.Context(), num)
		if err != nil {
			s.fail(c, err)
			return
		}
		c.JSON(http.StatusOK, v)
	}
}

// publishReviewed serves publish: an optional body carries an owner's
// override of the review policy.
func (s *Server) publishReviewed(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req publishRequest
	if !s.bindOptional(c, &req) {
		return
	}
	h := handle(c)
	v, err := h.PublishVersion(c.Request.Context(), n, app.PublishOptions(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeVersion(c, http.StatusOK, h.Asset, v, nil)
}

// reviewLink is the API URL of review n of a, for the lines a push with
// -o review prints (app.Push).
func (s *Server) reviewLink(c *gin.Context, a *quire.Asset) func(n int) string {
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	return func(n int) string {
		return fmt.Sprintf("%s://%s/v1/%s/%s/reviews/%d", scheme, c.Request.Host, a.Kind.Plural(), a.ID, n)
	}
}
