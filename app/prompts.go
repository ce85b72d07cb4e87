package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/render"
	"github.com/quire/quire/valid"
)

// Prompts are assets like skills: their life cycle is the versions' (the
// use cases there serve both kinds). Here: the content of prompt
// versions, their variables, live reads and the cache purge. Each use
// case resolves the prompt and authorizes the caller once (access.go),
// and only then reads its input (an Input) and calls the stores.

// PromptEdit creates or edits a prompt version's content. Fields left nil
// keep what the version (or its base) has; a template replaces messages
// and messages replace a template.
//
// VariablesSchema, when set, replaces the version's schema; JSON null
// removes it.
type PromptEdit struct {
	Template    *string
	Messages    *[]quire.Message
	Model       *string
	ModelParams json.RawMessage
	// Provider names the operator's provider a run calls; "" removes
	// it (runs use the server's default). Any name of a provider's form
	// is taken: whether it is configured is asked at run time
	// (409 no_provider).
	Provider        *string
	VariablesSchema json.RawMessage
}

// Empty reports whether e changes nothing.
func (e *PromptEdit) Empty() bool {
	return e.Template == nil && e.Messages == nil && e.Model == nil && e.Provider == nil && len(e.ModelParams) == 0 && len(e.VariablesSchema) == 0
}

// Check validates e on its own, so applying it cannot fail.
func (e *PromptEdit) Check(l quire.Limits) error {
	c := quire.PromptContent{Template: e.Template, ModelParams: e.ModelParams, VariablesSchema: e.VariablesSchema}
	if e.Messages != nil {
		c.Messages = *e.Messages
		if c.Messages == nil {
			c.Messages = []quire.Message{}
		}
	}
	if e.Model != nil {
		c.Model = *e.Model
	}
	if err := quire.CheckPromptContent(&c, l); err != nil {
		return err
	}
	if e.Provider != nil && *e.Provider != "" {
		if err := valid.ProviderName(*e.Provider); err != nil {
			return err
		}
	}
	if err := checkPartialCount(&c); err != nil {
		return err
	}
	// A schema that does not compile is refused when written, not at
	// the first render.
	_, err := compileSchema(e.VariablesSchema)
	return err
}

// checkPartialCount refuses content whose templates name more than
// render.MaxPartials distinct partials. A template that does not parse
// is left to the publish check, which says why: drafts may hold one.
func checkPartialCount(c *quire.PromptContent) error {
	var ts []*render.Template
	if c.Template != nil {
		if t, err := render.ParseWithPartials(*c.Template); err == nil {
			ts = append(ts, t)
		}
	}
	for _, m := range c.Messages {
		if t, err := render.ParseWithPartials(m.Content); err == nil && !m.Placeholder() {
			ts = append(ts, t)
		}
	}
	return render.CheckPartialCount(ts...)
}

// apply returns cur changed by e.
func (e *PromptEdit) apply(cur *quire.PromptContent) *quire.PromptContent {
	c := *cur
	switch {
	case e.Template != nil:
		c.Template, c.Messages = e.Template, nil
	case e.Messages != nil:
		c.Template, c.Messages = nil, *e.Messages
	}
	if e.Model != nil {
		c.Model = *e.Model
	}
	if e.Provider != nil {
		c.Provider = *e.Provider
	}
	if len(e.ModelParams) > 0 {
		c.ModelParams = e.ModelParams
	}
	switch {
	case string(e.VariablesSchema) == "null":
		c.VariablesSchema = nil
	case len(e.VariablesSchema) > 0:
		c.VariablesSchema = e.VariablesSchema
	}
	return &c
}

// NewPromptVersion is what creating a prompt version takes: the base the
// draft opens from and the content written into it.
type NewPromptVersion struct {
	Base quire.Base
	Edit PromptEdit
	// BaseErr is why the door could not read the base; it is reported
	// once the content has been checked.
	BaseErr error
}

// CreatePromptVersion opens a draft of prompt ref (write access) from the
// input's base and writes its content into it. The content is checked
// before anything is written, and a draft whose content cannot be written
// is deleted again: no half-made draft is left behind.
func (h *Handle) CreatePromptVersion(ctx context.Context, nv NewPromptVersion) (*quire.Version, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.needPrompt(quire.AccessWrite); err != nil {
		return nil, err
	}
	e := &nv.Edit
	if err := e.Check(a.limits); err != nil {
		return nil, err
	}
	if nv.BaseErr != nil {
		return nil, nv.BaseErr
	}
	by := p.Actor()
	v, err := write(ctx, a, a.assetEvent(quire.EventVersionCreated, by, as, 0, ""),
		func(ctx context.Context) (*quire.Version, error) {
			v, err := a.versions.CreateVersion(ctx, by, as, nv.Base, nil)
			if err != nil || e.Empty() {
				return v, err
			}
			edited, err := a.prompts.EditPrompt(ctx, by, as, v.Number, e.apply, v.Commit)
			if err != nil {
				a.versions.DeleteVersion(context.WithoutCancel(ctx), by, as, v.Number)
			}
			return edited, err
		},
		a.versionMade(quire.EventVersionCreated, by, as))
	if err != nil {
		return nil, err
	}
	return v, nil
}

// UpdatePromptVersion edits draft n of prompt ref (write access): ECONFLICT
// for a version in any other state, EPRECONDITION when ifMatch is set and
// names another commit. The edit applies to the content the draft holds
// under the store's lock, so concurrent edits queue.
func (h *Handle) UpdatePromptVersion(ctx context.Context, n int, e PromptEdit, ifMatch string) (*quire.Version, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.needPrompt(quire.AccessWrite); err != nil {
		return nil, err
	}
	if err := e.Check(a.limits); err != nil {
		return nil, err
	}
	v, err := a.versions.Version(ctx, as, n)
	if err != nil {
		return nil, err
	}
	if v.State != quire.StateDraft {
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is %s; only a draft can be changed", n, v.State)
	}
	if ifMatch = precondition(ifMatch); ifMatch != "" && ifMatch != v.Commit {
		return nil, quire.Errorf(quire.EPRECONDITION, "version %d is at %s, not %s", n, v.Commit, ifMatch)
	}
	edited, err := write(ctx, a, a.versionEvent(quire.EventVersionUpdated, p.Actor(), as, v),
		func(ctx context.Context) (*quire.Version, error) {
			return a.prompts.EditPrompt(ctx, p.Actor(), as, n, e.apply, ifMatch)
		},
		func(_ context.Context, edited *quire.Version) (*quire.Event, error) {
			if edited.Commit == v.Commit {
				return nil, nil // nothing written, no event
			}
			return a.versionEvent(quire.EventVersionUpdated, p.Actor(), as, edited), nil
		})
	if err != nil {
		return nil, err
	}
	return edited, nil
}

// PromptContent returns the content of prompt as at commit; as is one a
// use case returned, so the caller may read it.
func (a *App) PromptContent(ctx context.Context, as *quire.Asset, commit string) (*quire.PromptContent, error) {
	return a.prompts.PromptContent(ctx, as, commit)
}

// PromptPublishCheck is the check publishing draft n of prompt as runs: a
// template, or messages, that parse as Mustache; partials that exist and
// include neither each other nor the prompt itself (details.missing,
// details.cycle); a variables_schema that compiles and that every sample
// payload of the prompt satisfies (details.payloads). It runs under the
// publish lock, so the draft it reads is the one being published.
func (a *App) PromptPublishCheck(ctx context.Context, as *quire.Asset, n int) func(quire.ReadFunc) error {
	return func(quire.ReadFunc) error {
		v, err := a.versions.Version(ctx, as, n)
		if err != nil {
			return err
		}
		c, err := a.prompts.PromptContent(ctx, as, v.Commit)
		if err != nil {
			return err
		}
		if c.Template == nil && len(c.Messages) == 0 {
			return quire.Errorf(quire.EUNPROCESSABLE, "version %d has no template: write %s or messages first", n, quire.PromptTemplateFile)
		}
		cp, err := a.templates.get(v.Commit, c)
		if err != nil {
			return err
		}
		// A draft written through the files API or a push was not
		// counted when written.
		if err := render.CheckPartialCount(cp.all()...); err != nil {
			return err
		}
		if err := a.checkIncludes(ctx, as, cp); err != nil {
			return err
		}
		return a.checkPayloadsSchema(ctx, as, n, cp)
	}
}

// checkPayloadsSchema refuses a version whose schema a sample payload of
// the prompt fails: payloads are the prompt's test cases.
func (a *App) checkPayloadsSchema(ctx context.Context, as *quire.Asset, n int, cp *compiledPrompt) error {
	if cp.schema == nil || a.payloads == nil {
		return nil
	}
	pls, err := a.payloads.Payloads(ctx, as)
	if err != nil {
		return err
	}
	type failed struct {
		ID     string        `json:"id"`
		Name   string        `json:"name"`
		Errors []SchemaError `json:"errors"`
	}
	var bad []failed
	var names []string
	for _, pl := range pls {
		vars, err := render.DecodeVars(pl.Variables)
		if err != nil {
			return err
		}
		errs, err := schemaErrors(cp.schema, vars)
		if err != nil {
			return err
		}
		if len(errs) > 0 {
			bad = append(bad, failed{ID: pl.ID, Name: pl.Name, Errors: errs})
			names = append(names, fmt.Sprintf("%q", pl.Name))
		}
	}
	if len(bad) > 0 {
		return quire.Errorf(quire.EUNPROCESSABLE, "version %d's variables_schema refuses the sample payloads %s", n, strings.Join(names, ", ")).
			WithDetail("payloads", bad)
	}
	return nil
}

// PromptVariables are the tags of a version's templates: every variable,
// and the names a render must be given.
type PromptVariables struct {
	Commit    string
	Variables []render.Variable
	Required  []string
	// Schema is the version's variables_schema, nil when it has none.
	Schema json.RawMessage
}

// PromptVariables lists the tags of version n of prompt ref (read
// access), each once, in the order the templates use them.
func (h *Handle) PromptVariables(ctx context.Context, n int) (*PromptVariables, error) {
	a, as := h.app, h.Asset
	if err := h.needPrompt(quire.AccessRead); err != nil {
		return nil, err
	}
	v, err := a.versions.Version(ctx, as, n)
	if err != nil {
		return nil, err
	}
	content, err := a.prompts.PromptContent(ctx, as, v.Commit)
	if err != nil {
		return nil, err
	}
	cp, err := a.templates.get(v.Commit, content)
	if err != nil {
		return nil, err
	}
	out := variablesOf(cp, content)
	out.Commit = v.Commit
	return out, nil
}

// LiveCommit is the commit of the prompt's live version (one ref read,
// so a door can answer a conditional request before any content is
// read); no live version is ENOTFOUND.
func (h *Handle) LiveCommit(ctx context.Context) (string, error) {
	if err := h.needPrompt(quire.AccessRead); err != nil {
		return "", err
	}
	commit, err := h.app.prompts.LiveCommit(ctx, h.Asset)
	if err != nil {
		return "", err
	}
	if commit == "" {
		return "", quire.Errorf(quire.ENOTFOUND, "no live version: publish one first")
	}
	return commit, nil
}

// LivePrompt reads the prompt's live version at commit, which LiveCommit
// has just read.
func (h *Handle) LivePrompt(ctx context.Context, commit string) (*quire.PromptVersion, error) {
	if err := h.needPrompt(quire.AccessRead); err != nil {
		return nil, err
	}
	return h.app.livePromptAt(ctx, h.Asset, commit)
}

// liveAtStore is a prompt store that can read the live version at a
// commit the caller has just read, skipping a second ref read (the prompt
// cache does).
type liveAtStore interface {
	LivePromptAt(ctx context.Context, a *quire.Asset, commit string) (*quire.PromptVersion, error)
}

// livePromptAt reads the live version of prompt as at commit, which was
// just read from its ref: the cache then skips reading the ref again (one
// file open per request on the hot path); a plain store reads it again.
func (a *App) livePromptAt(ctx context.Context, as *quire.Asset, commit string) (*quire.PromptVersion, error) {
	if a.liveAt != nil {
		return a.liveAt.LivePromptAt(ctx, as, commit)
	}
	return a.prompts.LivePrompt(ctx, as)
}

// PurgePromptCache drops the cached reads of prompt ref, which p must
// administer, and returns the prompt.
func (h *Handle) PurgePromptCache(ctx context.Context) error {
	a, as := h.app, h.Asset
	if err := h.needPrompt(quire.AccessAdmin); err != nil {
		return err
	}
	if a.promptCache != nil {
		if err := a.promptCache.Purge(ctx, as); err != nil {
			return err
		}
	}
	return nil
}

// PurgeAllCache drops every cached prompt read; only an admin may.
func (a *App) PurgeAllCache(ctx context.Context, p *quire.Principal) error {
	if err := p.CheckAdmin(); err != nil {
		return err
	}
	if a.promptCache != nil {
		return a.promptCache.PurgeAll(ctx)
	}
	return nil
}
