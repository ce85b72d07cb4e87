package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/render"
)

// renderRequest renders a prompt version: the live one unless version is
// given, with a payload's variables under the request's.
type renderRequest struct {
	Variables json.RawMessage `json:"variables"`
	Version   *int            `json:"version"`
	PayloadID string          `json:"payload_id"`
}

type renderResponse struct {
	PromptID    string          `json:"prompt_id"`
	Version     int             `json:"version"`
	Commit      string          `json:"commit"`
	Rendered    *string         `json:"rendered,omitempty"`
	Messages    []quire.Message `json:"messages,omitempty"`
	Model       string          `json:"model"`
	ModelParams json.RawMessage `json:"model_params"`
	// Partials are the prompts the render included; always a list.
	Partials []app.PartialUse `json:"partials"`
}

func (s *Server) renderPrompt(c *gin.Context) {
	r, err := s.app.Render(c.Request.Context(), principal(c), c.Param("id"), func() (app.RenderRequest, error) {
		return s.readRender(c)
	})
	s.writeRendered(c, &r, err)
}

// renderProjectPrompt addresses the prompt by project (id or slug) and
// the prompt's slug (or id) within it.
func (s *Server) renderProjectPrompt(c *gin.Context) {
	r, err := s.app.RenderInProject(c.Request.Context(), principal(c), c.Param("projectID"), c.Param("slug"), func() (app.RenderRequest, error) {
		return s.readRender(c)
	})
	s.writeRendered(c, &r, err)
}

// renderBody is a renderRequest with its variables decoded in the same
// pass, as every render on the hot path is.
type renderBody struct {
	Variables map[string]any `json:"variables"`
	Version   *int           `json:"version"`
	PayloadID string         `json:"payload_id"`
}

// readRender reads a render request. A body within the variables limit is
// decoded once, variables and all; any other, or one that fails, goes the
// long way (renderRequest, then app.DecodeVariables), which says what is
// wrong.
func (s *Server) readRender(c *gin.Context) (app.RenderRequest, error) {
	if c.Request.ContentLength == 0 {
		return app.RenderRequest{Vars: render.Vars{}}, nil
	}
	b, err := s.readBody(c)
	if err != nil {
		return app.RenderRequest{}, err
	}
	if int64(len(b)) <= s.limits.MaxVariables {
		var fast renderBody
		if decodeJSON(b, &fast, true) == nil {
			return app.RenderRequest{Vars: render.VarsOf(fast.Variables), Version: fast.Version, PayloadID: fast.PayloadID}, nil
		}
	}
	var req renderRequest
	if err := decodeJSON(b, &req, false); err != nil {
		return app.RenderRequest{}, err
	}
	vars, err := s.app.DecodeVariables(req.Variables, false)
	return app.RenderRequest{Vars: vars, Version: req.Version, PayloadID: req.PayloadID}, err
}

// writeRendered answers a render, with its entity tag.
func (s *Server) writeRendered(c *gin.Context, r *app.Rendered, err error) {
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("ETag", `"`+r.ETag+`"`)
	c.JSON(http.StatusOK, &renderResponse{
		PromptID: r.PromptID, Version: r.Version, Commit: r.Commit, Rendered: r.Text,
		Messages: r.Messages, Model: r.Model, ModelParams: r.ModelParams, Partials: r.Partials,
	})
}

func (s *Server) purgePromptCache(c *gin.Context) {
	a, err := s.app.PurgePromptCache(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"purged": a.ID})
}

func (s *Server) purgeAllCache(c *gin.Context) {
	if err := s.app.PurgeAllCache(c.Request.Context(), principal(c)); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"purged": "all"})
}
