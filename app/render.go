package app

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/google/uuid"
	"github.com/quire/quire"
	"github.com/quire/quire/render"
)

// RenderRequest is what a render asks for: the live version unless
// Version is set, with the variables of payload PayloadID (when set) under
// Vars. Vars come decoded: the door decodes them with the rest of its
// request, in one pass.
type RenderRequest struct {
	Vars      render.Vars
	Version   *int
	PayloadID string
}

// Rendered is a rendered prompt version: Text for a text prompt, Messages
// for a chat prompt, with the version's model configuration.
type Rendered struct {
	Version     int
	Commit      string
	Text        *string
	Messages    []quire.Message
	Model       string
	ModelParams json.RawMessage
}

// Render renders prompt as (resolved and authorized for read by Asset or
// ProjectAsset) and counts the render. It is the hot path: the live
// content comes from the prompt store (the cache), the parsed templates
// from a memo keyed by commit.
func (a *App) Render(ctx context.Context, as *quire.Asset, req RenderRequest) (Rendered, error) {
	var (
		v       *quire.Version
		content *quire.PromptContent
		err     error
	)
	if req.Version != nil {
		if *req.Version <= 0 {
			return Rendered{}, quire.Errorf(quire.EINVALID, "version must be a positive integer")
		}
		if v, err = a.versions.Version(ctx, as, *req.Version); err == nil {
			content, err = a.prompts.PromptContent(ctx, as, v.Commit)
		}
	} else {
		var pv *quire.PromptVersion
		if pv, err = a.prompts.LivePrompt(ctx, as); err == nil {
			v, content = pv.Version, pv.Content
		}
	}
	if err != nil {
		return Rendered{}, err
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
	out := Rendered{Version: v.Number, Commit: v.Commit, Model: content.Model, ModelParams: content.ModelParams}
	switch {
	case cp.text != nil:
		text, err := cp.text.Render(vars)
		if err != nil {
			return Rendered{}, err
		}
		out.Text = &text
	case len(cp.msgs) > 0:
		// Every missing variable of every message in one error, before
		// any is rendered.
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
			return Rendered{}, render.MissingError(missing)
		}
		out.Messages = make([]quire.Message, len(cp.msgs))
		for i, t := range cp.msgs {
			text, err := t.Render(vars)
			if err != nil {
				return Rendered{}, err
			}
			out.Messages[i] = quire.Message{Role: content.Messages[i].Role, Content: text}
		}
	default:
		return Rendered{}, quire.Errorf(quire.EUNPROCESSABLE, "version %d has no template", v.Number)
	}
	a.RecordRender(ctx, as.ID, v.Number)
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
	p, err := a.Payload(ctx, as, id)
	if err != nil {
		return nil, err
	}
	return render.DecodeVars(p.Variables)
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
