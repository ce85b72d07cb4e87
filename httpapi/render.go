package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/quire/quire"
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
}

func (s *Server) renderPrompt(c *gin.Context) {
	a, err := s.asset(c, quire.KindPrompt, quire.AccessRead)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, a)
}

// renderProjectPrompt addresses the prompt by project (id or slug) and
// the prompt's slug (or id) within it.
func (s *Server) renderProjectPrompt(c *gin.Context) {
	a, _, err := s.app.ProjectAsset(c.Request.Context(), principal(c), c.Param("projectID"), quire.KindPrompt, c.Param("slug"), quire.AccessRead)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, a)
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
// long way (renderRequest, then decodeVariables), which says what is wrong.
func (s *Server) readRender(c *gin.Context) (renderRequest, render.Vars, error) {
	var req renderRequest
	if c.Request.ContentLength == 0 {
		return req, render.Vars{}, nil
	}
	b, err := s.readBody(c)
	if err != nil {
		return req, nil, err
	}
	if int64(len(b)) <= s.limits.MaxVariables {
		var fast renderBody
		if decodeJSON(b, &fast, true) == nil {
			return renderRequest{Version: fast.Version, PayloadID: fast.PayloadID}, render.VarsOf(fast.Variables), nil
		}
	}
	if err := decodeJSON(b, &req, false); err != nil {
		return req, nil, err
	}
	vars, err := s.decodeVariables(req.Variables, false)
	return req, vars, err
}

func (s *Server) render(c *gin.Context, a *quire.Asset) {
	req, vars, err := s.readRender(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	var (
		v       *quire.Version
		content *quire.PromptContent
	)
	if req.Version != nil {
		if *req.Version <= 0 {
			s.fail(c, quire.Errorf(quire.EINVALID, "version must be a positive integer"))
			return
		}
		if v, err = s.versions.Version(ctx, a, *req.Version); err == nil {
			content, err = s.prompts.PromptContent(ctx, a, v.Commit)
		}
	} else {
		var pv *quire.PromptVersion
		if pv, err = s.prompts.LivePrompt(ctx, a); err == nil {
			v, content = pv.Version, pv.Content
		}
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	if req.PayloadID != "" {
		base, err := s.payloadVariables(c, a, req.PayloadID)
		if err != nil {
			s.fail(c, err)
			return
		}
		vars = render.Merge(base, vars)
	}
	cp, err := s.templates.get(v.Commit, content)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := renderResponse{PromptID: a.ID, Version: v.Number, Commit: v.Commit, Model: content.Model, ModelParams: content.ModelParams}
	switch {
	case cp.text != nil:
		text, err := cp.text.Render(vars)
		if err != nil {
			s.fail(c, err)
			return
		}
		out.Rendered = &text
	case len(cp.msgs) > 0:
		var missing []string
		seen := map[string]bool{}
		for _, t := range cp.msgs {
			for _, m := range t.Missing(vars) {
				if !seen[m] {
					seen[m] = true
					missing = append(missing, m)
				}
			}
		}
		if len(missing) > 0 {
			s.fail(c, render.MissingError(missing))
			return
		}
		out.Messages = make([]quire.Message, len(cp.msgs))
		for i, t := range cp.msgs {
			text, err := t.Render(vars)
			if err != nil {
				s.fail(c, err)
				return
			}
			out.Messages[i] = quire.Message{Role: content.Messages[i].Role, Content: text}
		}
	default:
		s.fail(c, quire.Errorf(quire.EUNPROCESSABLE, "version %d has no template", v.Number))
		return
	}
	s.RecordRender(ctx, a.ID, v.Number)
	c.JSON(http.StatusOK, &out)
}

// decodeVariables checks and decodes a variables object: required or
// not, at most MaxVariables bytes (compacted).
func (s *Server) decodeVariables(raw json.RawMessage, required bool) (render.Vars, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		if required {
			return nil, quire.Errorf(quire.EINVALID, "variables is required: a JSON object of variable names and values")
		}
		return render.Vars{}, nil
	}
	if trimmed[0] != '{' {
		return nil, quire.Errorf(quire.EINVALID, "variables must be a JSON object")
	}
	if int64(len(trimmed)) > s.limits.MaxVariables {
		var buf bytes.Buffer
		if json.Compact(&buf, trimmed) == nil && int64(buf.Len()) > s.limits.MaxVariables {
			return nil, quire.Errorf(quire.ETOOLARGE, "variables are %d bytes; the limit is %d", buf.Len(), s.limits.MaxVariables)
		}
	}
	return render.DecodeVars(trimmed)
}

// payloadVariables returns the variables of one of a's payloads.
func (s *Server) payloadVariables(c *gin.Context, a *quire.Asset, id string) (render.Vars, error) {
	if uuid.Validate(id) != nil {
		return nil, quire.Errorf(quire.ENOTFOUND, "payload not found")
	}
	p, err := s.payloads.Payload(c.Request.Context(), a, id)
	if err != nil {
		return nil, err
	}
	return render.DecodeVars(p.Variables)
}

func (s *Server) purgePromptCache(c *gin.Context) {
	a, err := s.asset(c, quire.KindPrompt, quire.AccessAdmin)
	if err != nil {
		s.fail(c, err)
		return
	}
	if s.promptCache != nil {
		if err := s.promptCache.Purge(c.Request.Context(), a); err != nil {
			s.fail(c, err)
			return
		}
	}
	c.JSON(http.StatusOK, gin.H{"purged": a.ID})
}

func (s *Server) purgeAllCache(c *gin.Context) {
	if err := principal(c).CheckAdmin(); err != nil {
		s.fail(c, err)
		return
	}
	if s.promptCache != nil {
		if err := s.promptCache.PurgeAll(c.Request.Context()); err != nil {
			s.fail(c, err)
			return
		}
	}
	c.JSON(http.StatusOK, gin.H{"purged": "all"})
}
