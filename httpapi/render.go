package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

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
	Label     string          `json:"label"`
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

// fastRender takes a render request from a body decoded as a plain
// value, variables and all, in one pass and without reflection: when it
// is an object of no keys but variables (an object or null), version (an
// integer or null) and payload_id (a string or null), spelled exactly so.
// Anything else (other spellings, which the struct decoder matches
// without regard to case, or wrong types) goes the long way, which says
// what is wrong.
func fastRender(v any) (app.RenderRequest, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return app.RenderRequest{}, false
	}
	var req app.RenderRequest
	for k, x := range m {
		switch k {
		case "variables":
			switch x := x.(type) {
			case map[string]any:
				req.Vars = render.VarsOf(x)
			case nil:
			default:
				return app.RenderRequest{}, false
			}
		case "version":
			switch x := x.(type) {
			case json.Number:
				n, err := strconv.Atoi(string(x))
				if err != nil {
					return app.RenderRequest{}, false
				}
				req.Version = &n
			case nil:
			default:
				return app.RenderRequest{}, false
			}
		case "payload_id":
			switch x := x.(type) {
			case string:
				req.PayloadID = x
			case nil:
			default:
				return app.RenderRequest{}, false
			}
		case "label":
			switch x := x.(type) {
			case string:
				req.Label = x
			case nil:
			default:
				return app.RenderRequest{}, false
			}
		default:
			return app.RenderRequest{}, false
		}
	}
	if req.Vars == nil {
		req.Vars = render.Vars{}
	}
	return req, true
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
		var v any
		if decodeJSON(b, &v, true) == nil {
			if req, ok := fastRender(v); ok {
				return req, nil
			}
		}
	}
	var req renderRequest
	if err := decodeJSON(b, &req, false); err != nil {
		return app.RenderRequest{}, err
	}
	vars, err := s.app.DecodeVariables(req.Variables, false)
	return app.RenderRequest{Vars: vars, Version: req.Version, PayloadID: req.PayloadID, Label: req.Label}, err
}

// writeRendered answers a render, with its entity tag.
func (s *Server) writeRendered(c *gin.Context, r *app.Rendered, err error) {
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("ETag", `"`+r.ETag+`"`)
	s.writeRender(c, &renderResponse{
		PromptID: r.PromptID, Version: r.Version, Commit: r.Commit, Rendered: r.Text,
		Messages: r.Messages, Model: r.Model, ModelParams: r.ModelParams, Partials: r.Partials,
	}, r.ETag)
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
