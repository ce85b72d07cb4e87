package app

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/google/uuid"
	"github.com/quire/quire"
	"github.com/quire/quire/render"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// RenderRequest is what a render asks for: the live version unless
// Version is set, with the variables of payload PayloadID (when set) under
// Vars. Vars come decoded: the door decodes them with the rest of its
// request, in one pass.
type RenderRequest struct {
	Vars      render.Vars
	Version   *int
	PayloadID string
	// Label renders the version a label names ("live": the live one);
	// it excludes Version.
	Label string
	// publishedOnly refuses a version that is not published, as if it
	// did not exist: what an anonymous caller may render (publicRender).
	publishedOnly bool
	// uncounted leaves the render out of the usage counts: a run's render
	// is not a use of the prompt by an application.
	uncounted bool
}

// Rendered is a rendered prompt version: Text for a text prompt, Messages
// for a chat prompt, with the version's model configuration, the
// partials it included and its entity tag.
type Rendered struct {
	PromptID    string
	Version     int
	Commit      string
	Text        *string
	Messages    []quire.Message
	Model       string
	ModelParams json.RawMessage
	// Provider is the model provider config.json names ("" for the
	// server's default): what a run calls.
	Provider string
	// Partials are the prompts included, in order of first use; never
	// nil, and possibly shared with other renders: read it only.
	Partials []PartialUse
	// ETag is the version's commit, or when it includes partials a hash
	// of it and theirs: it changes when any included text does.
	ETag string
}

// Render renders the prompt for the request and counts the render. It is
// the hot path: the live content comes from the prompt store (the cache),
// the parsed templates from a memo keyed by commit, each partial from its
// live commit (one ref read) and the same memo.
func (h *Handle) Render(ctx context.Context, req RenderRequest) (Rendered, error) {
	if err := h.needPrompt(quire.AccessRead); err != nil {
		return Rendered{}, err
	}
	req, err := publicRender(h.P, req)
	if err != nil {
		return Rendered{}, err
	}
	return h.app.render(ctx, h.Asset, req)
}

// render renders prompt as, which the caller may read, for req.
func (a *App) render(ctx context.Context, as *quire.Asset, req RenderRequest) (Rendered, error) {
	var err error
	var (
		v       *quire.Version
		content *quire.PromptContent
	)
	if req.Label == "live" {
		req.Label = ""
	}
	if req.Label != "" && req.Version != nil {
		return Rendered{}, quire.Errorf(quire.EINVALID, "give version or label, not both")
	}
	switch {
	case req.Label != "":
		v, content, err = a.labelPrompt(ctx, as, req.Label)
	case req.Version != nil:
		if *req.Version <= 0 {
			return Rendered{}, quire.Errorf(quire.EINVALID, "version must be a positive integer")
		}
		if v, err = a.versions.Version(ctx, as, *req.Version); err == nil {
			content, err = a.prompts.PromptContent(ctx, as, v.Commit)
		}
	default:
		var pv *quire.PromptVersion
		if pv, err = a.prompts.LivePrompt(ctx, as); err == nil {
			v, content = pv.Version, pv.Content
		}
	}
	if err != nil {
		return Rendered{}, err
	}
	if req.publishedOnly && v.State != quire.StatePublished {
		return Rendered{}, quire.Errorf(quire.ENOTFOUND, "version %d not found", v.Number)
	}
	vars := req.Vars
	if req.PayloadID != "" {
		base, err := a.payloadVariables(ctx, as, req.PayloadID)
		if err != nil {
			return Rendered{}, err
		}
		vars = render.Merge(base, vars)
	}
	cp, err := a.templates.get(v.Commit, content)
	if err != nil {
		return Rendered{}, err
	}
	out, err := a.renderCompiled(ctx, as, v, content, cp, vars)
	if err != nil {
		return Rendered{}, err
	}
	if !req.uncounted {
		a.RecordRender(ctx, as.ID, v.Number)
	}
	return out, nil
}

// renderCompiled renders version v of as, compiled as cp, with vars:
// the schema first, then the templates with as's project's prompts as
// partials.
func (a *App) renderCompiled(ctx context.Context, as *quire.Asset, v *quire.Version, content *quire.PromptContent, cp *compiledPrompt, vars render.Vars) (Rendered, error) {
	if cp.schema != nil {
		errs, err := schemaErrors(cp.schema, vars)
		if err != nil {
			return Rendered{}, err
		}
		if len(errs) > 0 {
			return Rendered{}, schemaError(errs)
		}
	}
	// A template with no include tag needs no resolver (nor the memo).
	var in *includes
	opts := render.Options{Name: as.Slug}
	if cp.includes {
		in = a.composed(ctx, as, v.Commit)
		opts.Partials = in
	}
	out := Rendered{PromptID: as.ID, Version: v.Number, Commit: v.Commit, Model: content.Model, ModelParams: content.ModelParams, Provider: content.Provider}
	var names []string
	switch {
	case cp.text != nil:
		r, err := cp.text.RenderWith(vars, opts)
		if err != nil {
			return Rendered{}, err
		}
		out.Text, names = &r.Text, r.Partials
	case len(cp.msgs) > 0:
		// Every missing variable and partial of every message in one
		// error, before any is rendered.
		var missing []string
		seen := map[string]bool{}
		add := func(m string) {
			if !seen[m] {
				seen[m] = true
				missing = append(missing, m)
			}
		}
		for i, t := range cp.msgs {
			if t == nil {
				if name := content.Messages[i].Name; vars[name] == nil {
					add(name)
				}
				continue
			}
			for _, m := range t.MissingWith(vars, opts) {
				add(m)
			}
		}
		if len(missing) > 0 {
			return Rendered{}, render.MissingError(missing)
		}
		out.Messages = make([]quire.Message, 0, len(cp.msgs))
		for i, t := range cp.msgs {
			if t == nil {
				spliced, err := render.PlaceholderMessages(content.Messages[i].Name, vars[content.Messages[i].Name])
				if err != nil {
					return Rendered{}, err
				}
				out.Messages = append(out.Messages, spliced...)
				continue
			}
			r, err := t.RenderWith(vars, opts)
			if err != nil {
				return Rendered{}, err
			}
			for _, n := range r.Partials {
				if !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
			out.Messages = append(out.Messages, quire.Message{Role: content.Messages[i].Role, Content: r.Text})
		}
	default:
		return Rendered{}, quire.Errorf(quire.EUNPROCESSABLE, "version %d has no template", v.Number)
	}
	if in == nil {
		out.Partials, out.ETag = []PartialUse{}, v.Commit
	} else {
		out.Partials, out.ETag = in.finish(as, v.Commit, names)
	}
	return out, nil
}

// DecodeVariables checks and decodes a variables object: required or
// not, at most Limits.MaxVariables bytes (compacted).
func (a *App) DecodeVariables(raw json.RawMessage, required bool) (render.Vars, error) {
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
	if int64(len(trimmed)) > a.limits.MaxVariables {
		var buf bytes.Buffer
		if json.Compact(&buf, trimmed) == nil && int64(buf.Len()) > a.limits.MaxVariables {
			return nil, quire.Errorf(quire.ETOOLARGE, "variables are %d bytes; the limit is %d", buf.Len(), a.limits.MaxVariables)
		}
	}
	return render.DecodeVars(trimmed)
}

// payloadVariables returns the variables of one of as's payloads.
func (a *App) payloadVariables(ctx context.Context, as *quire.Asset, id string) (render.Vars, error) {
	p, err := a.payload(ctx, as, id)
	if err != nil {
		return nil, err
	}
	return render.DecodeVars(p.Variables)
}

// compiledPrompt is the parsed templates of one commit: a text
// template, or one per message (nil for a placeholder), and the
// variables' schema if the version has one. includes says a template
// has a partial or parent tag.
type compiledPrompt struct {
	text     *render.Template
	msgs     []*render.Template
	schema   *jsonschema.Schema
	includes bool
	// args are the prompt's arguments as agents see them, worked out
	// once per commit (agents.go).
	argsOnce sync.Once
	args     []PromptArgument
}

func (cp *compiledPrompt) all() []*render.Template {
	if cp.text != nil {
		return []*render.Template{cp.text}
	}
	out := make([]*render.Template, 0, len(cp.msgs))
	for _, t := range cp.msgs {
		if t != nil {
			out = append(out, t)
		}
	}
	return out
}

func compile(c *quire.PromptContent) (*compiledPrompt, error) {
	cp := &compiledPrompt{}
	s, err := compileSchema(c.VariablesSchema)
	if err != nil {
		return nil, err
	}
	cp.schema = s
	if c.Template != nil {
		t, err := render.ParseWithPartials(*c.Template)
		if err != nil {
			return nil, err
		}
		cp.text, cp.includes = t, t.Includes()
		return cp, nil
	}
	for i, m := range c.Messages {
		if m.Placeholder() {
			cp.msgs = append(cp.msgs, nil)
			continue
		}
		t, err := render.ParseWithPartials(m.Content)
		if err != nil {
			return nil, quire.Errorf(quire.EUNPROCESSABLE, "messages[%d]: %s", i, quire.ErrorMessage(err))
		}
		cp.msgs = append(cp.msgs, t)
		cp.includes = cp.includes || t.Includes()
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

func newTemplateMemo() *templateMemo {
	return &templateMemo{m: map[string]*compiledPrompt{}}
}

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

// validPayloadID reports whether id can name a payload: a payload id that
// is not a UUID is simply not found.
func validPayloadID(id string) error {
	if uuid.Validate(id) != nil {
		return quire.Errorf(quire.ENOTFOUND, "payload not found")
	}
	return nil
}
