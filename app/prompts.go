package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/render"
)

// Prompts are assets like skills: their life cycle is the versions' (the
// use cases there serve both kinds). Here: the content of prompt
// versions, their variables, live reads and the cache purge. Methods
// taking an *quire.Asset expect one from Asset, AssetIn or ProjectAsset,
// which authorized the caller for the access the method names.

// PromptEdit creates or edits a prompt version's content. Fields left nil
// keep what the version (or its base) has; a template replaces messages
// and messages replace a template.
//
// VariablesSchema, when set, replaces the version's schema; JSON null
// removes it.
type PromptEdit struct {
	Template        *string
	Messages        *[]quire.Message
	Model           *string
	ModelParams     json.RawMessage
	VariablesSchema json.RawMessage
}

// Empty reports whether e changes nothing.
func (e *PromptEdit) Empty() bool {
	return e.Template == nil && e.Messages == nil && e.Model == nil && len(e.ModelParams) == 0 && len(e.VariablesSchema) == 0
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
	// A schema that does not compile is refused when written, not at
	// the first render.
	_, err := compileSchema(e.VariablesSchema)
	return err
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

// CreatePromptVersion opens a draft of prompt as (write access) from base
// and writes e into it. A draft whose content cannot be written is
// deleted again: no half-made draft is left behind.
func (a *App) CreatePromptVersion(ctx context.Context, p *quire.Principal, as *quire.Asset, base quire.Base, e *PromptEdit) (*quire.Version, error) {
	if err := e.Check(a.limits); err != nil {
		return nil, err
	}
	by := p.Actor()
	v, err := a.versions.CreateVersion(ctx, by, as, base, nil)
	if err != nil {
		return nil, err
	}
	if !e.Empty() {
		nv, err := a.prompts.EditPrompt(ctx, by, as, v.Number, e.apply, v.Commit)
		if err != nil {
			a.versions.DeleteVersion(context.WithoutCancel(ctx), by, as, v.Number)
			return nil, err
		}
		v = nv
	}
	if err := a.emit(ctx, a.versionEvent(quire.EventVersionCreated, by, as, v)); err != nil {
		return nil, err
	}
	return v, nil
}

// UpdatePromptVersion edits draft n of prompt as (write access): ECONFLICT
// for a version in any other state, EPRECONDITION when ifMatch is set and
// names another commit. The edit applies to the content the draft holds
// under the store's lock, so concurrent edits queue.
func (a *App) UpdatePromptVersion(ctx context.Context, p *quire.Principal, as *quire.Asset, n int, e *PromptEdit, ifMatch string) (*quire.Version, error) {
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
	nv, err := a.prompts.EditPrompt(ctx, p.Actor(), as, n, e.apply, ifMatch)
	if err != nil {
		return nil, err
	}
	if nv.Commit != v.Commit {
		if err := a.emitUpdate(ctx, p.Actor(), as, nv); err != nil {
			return nil, err
		}
	}
	return nv, nil
}

// PromptContent returns the content of prompt as at commit.
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

// PromptVariables lists the tags of version n of prompt as (read access),
// each once, in the order the templates use them.
func (a *App) PromptVariables(ctx context.Context, as *quire.Asset, n int) (*PromptVariables, error) {
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
	out := &PromptVariables{Commit: v.Commit, Variables: []render.Variable{}, Required: []string{}, Schema: content.VariablesSchema}
	seenVar, seenReq := map[render.Variable]bool{}, map[string]bool{}
	for _, t := range cp.all() {
		for _, x := range t.Variables() {
			if !seenVar[x] {
				seenVar[x] = true
				out.Variables = append(out.Variables, x)
			}
		}
		for _, r := range t.Required() {
			if !seenReq[r] {
				seenReq[r] = true
				out.Required = append(out.Required, r)
			}
		}
	}
	// A placeholder message is a variable too: the list of messages a
	// render splices in, always required.
	for _, m := range content.Messages {
		if x := (render.Variable{Name: m.Name, Type: quire.MessagePlaceholder}); m.Placeholder() && !seenVar[x] {
			seenVar[x] = true
			out.Variables = append(out.Variables, x)
			if !seenReq[m.Name] {
				seenReq[m.Name] = true
				out.Required = append(out.Required, m.Name)
			}
		}
	}
	return out, nil
}

// LiveCommit resolves prompt ref for p (read access) and returns it with
// the commit of its live version: one ref read, so a door can answer a
// conditional request before reading any content. No live version is
// ENOTFOUND.
func (a *App) LiveCommit(ctx context.Context, p *quire.Principal, ref string) (*quire.Asset, string, error) {
	as, err := a.Asset(ctx, p, quire.KindPrompt, ref, quire.AccessRead)
	if err != nil {
		return nil, "", err
	}
	commit, err := a.prompts.LiveCommit(ctx, as)
	if err != nil {
		return nil, "", err
	}
	if commit == "" {
		return nil, "", quire.Errorf(quire.ENOTFOUND, "no live version: publish one first")
	}
	return as, commit, nil
}

// livePromptAt is a prompt store that can read the live version at a
// commit the caller has just read, skipping a second ref read (the prompt
// cache does).
type livePromptAt interface {
	LivePromptAt(ctx context.Context, a *quire.Asset, commit string) (*quire.PromptVersion, error)
}

// LivePrompt reads the live version of prompt as, whose commit LiveCommit
// has just returned: the prompt cache then skips reading the ref again
// (one file open per request on the hot path); a plain store reads it
// again.
func (a *App) LivePrompt(ctx context.Context, as *quire.Asset, commit string) (*quire.PromptVersion, error) {
	if a.liveAt != nil {
		return a.liveAt.LivePromptAt(ctx, as, commit)
	}
	return a.prompts.LivePrompt(ctx, as)
}

// PurgePromptCache drops the cached reads of prompt ref, which p must
// administer, and returns the prompt.
func (a *App) PurgePromptCache(ctx context.Context, p *quire.Principal, ref string) (*quire.Asset, error) {
	as, err := a.Asset(ctx, p, quire.KindPrompt, ref, quire.AccessAdmin)
	if err != nil {
		return nil, err
	}
	if a.promptCache != nil {
		if err := a.promptCache.Purge(ctx, as); err != nil {
			return nil, err
		}
	}
	return as, nil
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
