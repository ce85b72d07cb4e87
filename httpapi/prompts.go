package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/render"
)

// Prompts are assets like skills: metadata, versions and their life cycle
// come from assetRoutes. Here: prompt content in versions, rendering,
// live reads, payloads and the cache purge.

func (s *Server) setupPrompts(cfg Config) {
	s.prompts, s.payloads, s.promptCache = cfg.Prompts, cfg.Payloads, cfg.PromptCache
	if s.prompts == nil {
		s.prompts, _ = cfg.Versions.(quire.PromptStore)
	}
	if s.payloads == nil {
		s.payloads, _ = cfg.Versions.(quire.PayloadStore)
	}
	s.templates = &templateMemo{m: map[string]*compiledPrompt{}}
}

func (s *Server) promptRoutes(g *gin.RouterGroup) {
	s.assetRoutes(g, quire.KindPrompt)
	const p = "/prompts/:id"
	g.POST(p+"/versions", s.createPromptVersion)
	g.PATCH(p+"/versions/:version", s.updatePromptVersion)
	g.GET(p+"/versions/:version/variables", s.promptVariables)
	g.GET(p+"/live", s.livePrompt)
	g.POST(p+"/render", s.renderPrompt)
	g.POST("/projects/:projectID/prompts/:slug/render", s.renderProjectPrompt)
	g.POST(p+"/payloads", s.createPayload)
	g.GET(p+"/payloads", s.listPayloads)
	g.GET(p+"/payloads/:payloadID", s.getPayload)
	g.PUT(p+"/payloads/:payloadID", s.updatePayload)
	g.DELETE(p+"/payloads/:payloadID", s.deletePayload)
	g.POST(p+"/cache/purge", s.purgePromptCache)
	g.POST("/cache/purge", s.purgeAllCache)
}

// promptView is a prompt version as clients see it: the version record
// with the template (or messages) and model configuration of its files.
type promptView struct {
	PromptID string `json:"prompt_id"`
	*quire.Version
	Template     *string         `json:"template,omitempty"`
	Messages     []quire.Message `json:"messages,omitempty"`
	Model        string          `json:"model"`
	ModelParams  json.RawMessage `json:"model_params"`
	ContentError string          `json:"content_error,omitempty"`
}

func newPromptView(a *quire.Asset, v *quire.Version, c *quire.PromptContent) *promptView {
	return &promptView{PromptID: a.ID, Version: v, Template: c.Template, Messages: c.Messages, Model: c.Model, ModelParams: c.ModelParams}
}

func (s *Server) promptVersionView(ctx context.Context, a *quire.Asset, v *quire.Version) (any, error) {
	c, err := s.prompts.PromptContent(ctx, a, v.Commit)
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
	From        json.RawMessage  `json:"from"`
	Template    *string          `json:"template"`
	Messages    *[]quire.Message `json:"messages"`
	Model       *string          `json:"model"`
	ModelParams json.RawMessage  `json:"model_params"`
}

func (r *promptVersionRequest) empty() bool {
	return r.Template == nil && r.Messages == nil && r.Model == nil && len(r.ModelParams) == 0
}

// check validates the request on its own, so applying it cannot fail.
func (r *promptVersionRequest) check(l quire.Limits) error {
	c := quire.PromptContent{Template: r.Template, ModelParams: r.ModelParams}
	if r.Messages != nil {
		c.Messages = *r.Messages
		if c.Messages == nil {
			c.Messages = []quire.Message{}
		}
	}
	if r.Model != nil {
		c.Model = *r.Model
	}
	return quire.CheckPromptContent(&c, l)
}

// apply returns cur changed by the request.
func (r *promptVersionRequest) apply(cur *quire.PromptContent) *quire.PromptContent {
	c := *cur
	switch {
	case r.Template != nil:
		c.Template, c.Messages = r.Template, nil
	case r.Messages != nil:
		c.Template, c.Messages = nil, *r.Messages
	}
	if r.Model != nil {
		c.Model = *r.Model
	}
	if len(r.ModelParams) > 0 {
		c.ModelParams = r.ModelParams
	}
	return &c
}

func (s *Server) createPromptVersion(c *gin.Context) {
	a, err := s.asset(c, quire.KindPrompt, quire.AccessWrite)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req promptVersionRequest
	if c.Request.ContentLength != 0 {
		if err := s.decode(c, &req); err != nil {
			s.fail(c, err)
			return
		}
	}
	if err := req.check(s.limits); err != nil {
		s.fail(c, err)
		return
	}
	base, err := parseBase(req.From)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx, by := c.Request.Context(), principal(c).Actor()
	v, err := s.versions.CreateVersion(ctx, by, a, base, nil)
	if err != nil {
		s.fail(c, err)
		return
	}
	if !req.empty() {
		nv, err := s.writePrompt(ctx, by, a, v.Number, &req, v.Commit)
		if err != nil {
			// Leave no half-made draft behind.
			s.versions.DeleteVersion(context.WithoutCancel(ctx), by, a, v.Number)
			s.fail(c, err)
			return
		}
		v = nv
	}
	s.writeVersion(c, http.StatusCreated, a, v, nil)
}

// writePrompt applies req to draft n in one commit, on the content the
// draft holds when the store has it locked; ifMatch, when set, must be
// the draft's commit then.
func (s *Server) writePrompt(ctx context.Context, by quire.Actor, a *quire.Asset, n int, req *promptVersionRequest, ifMatch string) (*quire.Version, error) {
	return s.prompts.EditPrompt(ctx, by, a, n, req.apply, ifMatch)
}

// updatePromptVersion edits a draft: 409 for any other state, 412 when
// If-Match names another commit.
func (s *Server) updatePromptVersion(c *gin.Context) {
	a, n, err := s.assetVersion(c, quire.KindPrompt, quire.AccessWrite)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req promptVersionRequest
	if err := s.decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if len(req.From) > 0 {
		s.fail(c, quire.Errorf(quire.EINVALID, "from applies only when a version is created"))
		return
	}
	if err := req.check(s.limits); err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	v, err := s.versions.Version(ctx, a, n)
	if err != nil {
		s.fail(c, err)
		return
	}
	if v.State != quire.StateDraft {
		s.fail(c, quire.Errorf(quire.ECONFLICT, "version %d is %s; only a draft can be changed", n, v.State))
		return
	}
	want := ifMatch(c) // "*" matches the draft, whatever its commit
	if want != "" && want != v.Commit {
		s.fail(c, quire.Errorf(quire.EPRECONDITION, "version %d is at %s, not %s", n, v.Commit, want))
		return
	}
	nv, err := s.writePrompt(ctx, principal(c).Actor(), a, n, &req, want)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeVersion(c, http.StatusOK, a, nv, nil)
}

// promptVariables lists the tags of a version's templates.
func (s *Server) promptVariables(c *gin.Context) {
	a, n, err := s.assetVersion(c, quire.KindPrompt, quire.AccessRead)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	v, err := s.versions.Version(ctx, a, n)
	if err != nil {
		s.fail(c, err)
		return
	}
	content, err := s.prompts.PromptContent(ctx, a, v.Commit)
	if err != nil {
		s.fail(c, err)
		return
	}
	cp, err := s.templates.get(v.Commit, content)
	if err != nil {
		s.fail(c, err)
		return
	}
	vars, required := []render.Variable{}, []string{}
	seenVar, seenReq := map[render.Variable]bool{}, map[string]bool{}
	for _, t := range cp.all() {
		for _, x := range t.Variables() {
			if !seenVar[x] {
				seenVar[x] = true
				vars = append(vars, x)
			}
		}
		for _, r := range t.Required() {
			if !seenReq[r] {
				seenReq[r] = true
				required = append(required, r)
			}
		}
	}
	c.JSON(http.StatusOK, gin.H{"prompt_id": a.ID, "version": n, "commit": v.Commit, "variables": vars, "required": required})
}

// livePrompt answers the live version, with its commit as ETag; a
// matching If-None-Match is a 304 that reads nothing but a ref.
func (s *Server) livePrompt(c *gin.Context) {
	a, err := s.asset(c, quire.KindPrompt, quire.AccessRead)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	commit, err := s.prompts.LiveCommit(ctx, a)
	if err != nil {
		s.fail(c, err)
		return
	}
	if commit == "" {
		s.fail(c, quire.Errorf(quire.ENOTFOUND, "no live version: publish one first"))
		return
	}
	if notModified(c, commit) {
		return
	}
	pv, err := s.livePromptAt(ctx, a, commit)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("ETag", `"`+pv.Version.Commit+`"`)
	c.JSON(http.StatusOK, gin.H{"version": newPromptView(a, pv.Version, pv.Content)})
}

// livePromptAt reads the live version at commit, just read with
// LiveCommit: the prompt cache then skips reading the ref again (one file
// open per request on the hot path); a plain store reads it again.
func (s *Server) livePromptAt(ctx context.Context, a *quire.Asset, commit string) (*quire.PromptVersion, error) {
	if at, ok := s.prompts.(interface {
		LivePromptAt(context.Context, *quire.Asset, string) (*quire.PromptVersion, error)
	}); ok {
		return at.LivePromptAt(ctx, a, commit)
	}
	return s.prompts.LivePrompt(ctx, a)
}

// compiledPrompt is the parsed templates of one commit.
type compiledPrompt struct {
	text *render.Template
	msgs []*render.Template
}

func (cp *compiledPrompt) all() []*render.Template {
	if cp.text != nil {
		return []*render.Template{cp.text}
	}
	return cp.msgs
}

func compile(c *quire.PromptContent) (*compiledPrompt, error) {
	cp := &compiledPrompt{}
	if c.Template != nil {
		t, err := render.Parse(*c.Template)
		if err != nil {
			return nil, err
		}
		cp.text = t
		return cp, nil
	}
	for i, m := range c.Messages {
		t, err := render.Parse(m.Content)
		if err != nil {
			return nil, quire.Errorf(quire.EUNPROCESSABLE, "messages[%d]: %s", i, quire.ErrorMessage(err))
		}
		cp.msgs = append(cp.msgs, t)
	}
	return cp, nil
}

// templateMemo keeps parsed templates by commit. Content at a commit never
// changes, so entries never go stale; the map is only bounded.
type templateMemo struct {
	mu sync.RWMutex
	m  map[string]*compiledPrompt
}

const maxTemplateMemo = 4096

func (tm *templateMemo) get(commit string, c *quire.PromptContent) (*compiledPrompt, error) {
	tm.mu.RLock()
	cp := tm.m[commit]
	tm.mu.RUnlock()
	if cp != nil {
		return cp, nil
	}
	cp, err := compile(c)
	if err != nil {
		return nil, err
	}
	tm.mu.Lock()
	if len(tm.m) >= maxTemplateMemo {
		clear(tm.m)
	}
	tm.m[commit] = cp
	tm.mu.Unlock()
	return cp, nil
}
