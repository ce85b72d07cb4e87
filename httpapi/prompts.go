package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// Prompts are assets like skills: metadata, versions and their life cycle
// come from assetRoutes. Here: prompt content in versions, rendering,
// live reads, payloads and the cache purge -- each decoded here, done in
// app, encoded here.

// promptRoutes are a prompt's content, rendering, live read, payloads
// and cache purge, relative to the prompt.
func (s *Server) promptRoutes(t *gin.RouterGroup) {
	t.POST("/versions", s.writes, s.idempotent, s.createPromptVersion)
	t.PATCH("/versions/:version", s.writes, s.updatePromptVersion)
	t.GET("/versions/:version/variables", s.promptVariables)
	t.POST("/versions/:version/check", s.checkPromptVersion)
	t.GET("/dependents", s.promptDependents)
	t.GET("/live", s.livePrompt)
	t.POST("/render", s.renderPrompt)
	t.POST("/versions/:version/run", s.writes, s.runPrompt)
	t.POST("/versions/:version/evaluations", s.writes, s.startEvaluation)
	t.GET("/versions/:version/evaluations", s.listEvaluations)
	t.GET("/versions/:version/evaluations/:evaluationID", s.getEvaluation)
	t.POST("/versions/:version/evaluations/:evaluationID/cancel", s.cancelEvaluation)
	t.POST("/payloads", s.writes, s.idempotent, s.createPayload)
	t.GET("/payloads", s.listPayloads)
	t.GET("/payloads/:payloadID", s.getPayload)
	t.PUT("/payloads/:payloadID", s.writes, s.updatePayload)
	t.DELETE("/payloads/:payloadID", s.deletePayload)
	t.POST("/cache/purge", s.purgePromptCache)
}

// promptView is a prompt version as clients see it: the version record
// with the template (or messages) and model configuration of its files.
type promptView struct {
	PromptID string `json:"prompt_id"`
	*quire.Version
	Template        *string         `json:"template,omitempty"`
	Messages        []quire.Message `json:"messages,omitempty"`
	Model           string          `json:"model"`
	ModelParams     json.RawMessage `json:"model_params"`
	Provider        string          `json:"provider,omitempty"`
	VariablesSchema json.RawMessage `json:"variables_schema,omitempty"`
	ContentError    string          `json:"content_error,omitempty"`
}

func newPromptView(a *quire.Asset, v *quire.Version, c *quire.PromptContent) *promptView {
	return &promptView{PromptID: a.ID, Version: v, Template: c.Template, Messages: c.Messages, Model: c.Model, ModelParams: c.ModelParams, Provider: c.Provider, VariablesSchema: c.VariablesSchema}
}

func (s *Server) promptVersionView(ctx context.Context, a *quire.Asset, v *quire.Version) (any, error) {
	c, err := s.app.PromptContent(ctx, a, v.Commit)
	if quire.ErrorCode(err) == quire.EUNPROCESSABLE {
		// Files pushed with git may break the layout; the version is still
		// listed, with the reason.
		return &promptView{PromptID: a.ID, Version: v, ModelParams: json.RawMessage("{}"), ContentError: quire.ErrorMessage(err)}, nil
	}
	if err != nil {
		return nil, err
	}
	return newPromptView(a, v, c), nil
}

// promptVersionRequest creates or edits a prompt version. Fields left out
// keep what the version (or its base) has.
type promptVersionRequest struct {
	From            json.RawMessage  `json:"from"`
	Template        *string          `json:"template"`
	Messages        *[]quire.Message `json:"messages"`
	Model           *string          `json:"model"`
	ModelParams     json.RawMessage  `json:"model_params"`
	Provider        *string          `json:"provider"`
	VariablesSchema json.RawMessage  `json:"variables_schema"`
}

func (r *promptVersionRequest) edit() app.PromptEdit {
	return app.PromptEdit{Template: r.Template, Messages: r.Messages, Model: r.Model, ModelParams: r.ModelParams, Provider: r.Provider, VariablesSchema: r.VariablesSchema}
}

func (s *Server) createPromptVersion(c *gin.Context) {
	var req promptVersionRequest
	if c.Request.ContentLength != 0 && !s.bind(c, &req) {
		return
	}
	base, err := parseBase(req.From)
	h := handle(c)
	v, err := h.CreatePromptVersion(c.Request.Context(), app.NewPromptVersion{Base: base, Edit: req.edit(), BaseErr: err})
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeVersion(c, http.StatusCreated, h.Asset, v, nil)
}

// updatePromptVersion edits a draft: 409 for any other state, 412 when
// If-Match names another commit ("*" matches the draft, whatever its
// commit).
func (s *Server) updatePromptVersion(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req promptVersionRequest
	if !s.bind(c, &req) {
		return
	}
	if len(req.From) > 0 {
		s.fail(c, quire.Errorf(quire.EINVALID, "from applies only when a version is created"))
		return
	}
	h := handle(c)
	v, err := h.UpdatePromptVersion(c.Request.Context(), n, req.edit(), ifMatch(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeVersion(c, http.StatusOK, h.Asset, v, nil)
}

// promptVariables lists the tags of a version's templates.
func (s *Server) promptVariables(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	a := handle(c).Asset
	pv, err := handle(c).PromptVariables(c.Request.Context(), n)
	if err != nil {
		s.fail(c, err)
		return
	}
	schema := pv.Schema
	if len(schema) == 0 {
		schema = json.RawMessage("null")
	}
	c.JSON(http.StatusOK, gin.H{"prompt_id": a.ID, "version": n, "commit": pv.Commit, "variables": pv.Variables, "required": pv.Required, "variables_schema": schema})
}

// checkPromptVersion renders a version with every sample payload.
func (s *Server) checkPromptVersion(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	pc, err := handle(c).CheckPromptVersion(c.Request.Context(), n)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"prompt_id": pc.Prompt.ID, "version": n, "commit": pc.Version.Commit, "ok": pc.OK(), "payloads": pc.Payloads})
}

// promptDependents lists the prompts that include this one.
func (s *Server) promptDependents(c *gin.Context) {
	h := handle(c)
	deps, err := h.Dependents(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"prompt_id": h.Asset.ID, "dependents": deps})
}

// livePrompt answers the live version, with its commit as ETag; a
// matching If-None-Match is a 304 that reads nothing but a ref. Its shape
// is a skill's live read's (liveSkill): the version and its files.
func (s *Server) livePrompt(c *gin.Context) {
	ctx, h := c.Request.Context(), handle(c)
	a := h.Asset
	commit, err := h.LiveCommit(ctx)
	if err != nil {
		s.fail(c, err)
		return
	}
	if notModified(c, commit) {
		return
	}
	pv, err := h.LivePrompt(ctx, commit)
	if err != nil {
		s.fail(c, err)
		return
	}
	// notModified has set the ETag: pv is the version at commit.
	s.writeLive(c, a, pv, func() ([]app.LiveFile, error) {
		return s.app.LiveFiles(c.Request.Context(), a, pv.Version.Number)
	})
}
