package app

import (
	"context"
	"errors"

	"github.com/quire/quire"
	"github.com/quire/quire/render"
)

// PayloadCheck is how version n of a prompt renders with one sample
// payload: OK, or the missing variables and partials, the schema errors,
// or another reason in Error.
type PayloadCheck struct {
	PayloadID   string        `json:"payload_id"`
	Name        string        `json:"name"`
	OK          bool          `json:"ok"`
	Missing     []string      `json:"missing"`
	Errors      []SchemaError `json:"errors"`
	Error       string        `json:"error,omitempty"`
	OutputBytes int           `json:"output_bytes"`
}

// PromptCheck is how a prompt version renders with every sample payload.
type PromptCheck struct {
	Prompt   *quire.Asset
	Version  *quire.Version
	Payloads []PayloadCheck
}

// OK reports whether every payload rendered.
func (c *PromptCheck) OK() bool {
	for _, r := range c.Payloads {
		if !r.OK {
			return false
		}
	}
	return true
}

// CheckPromptVersion renders version n of prompt ref (read access) with
// every sample payload of the prompt, without counting the renders:
// payloads are the prompt's test cases.
func (h *Handle) CheckPromptVersion(ctx context.Context, n int) (*PromptCheck, error) {
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
	pls := []*quire.Payload{}
	if a.payloads != nil {
		if pls, err = a.payloads.Payloads(ctx, as); err != nil {
			return nil, err
		}
	}
	out := make([]PayloadCheck, 0, len(pls))
	for _, pl := range pls {
		pc := PayloadCheck{PayloadID: pl.ID, Name: pl.Name, Missing: []string{}, Errors: []SchemaError{}}
		vars, err := render.DecodeVars(pl.Variables)
		if err == nil {
			var r Rendered
			r, err = a.renderCompiled(ctx, as, v, content, cp, vars)
			if err == nil {
				pc.OK = true
				if r.Text != nil {
					pc.OutputBytes = len(*r.Text)
				}
				for _, m := range r.Messages {
					pc.OutputBytes += len(m.Content)
				}
			}
		}
		if err != nil {
			var qe *quire.Error
			errors.As(err, &qe)
			switch {
			case qe != nil && qe.Details["missing"] != nil:
				pc.Missing, _ = qe.Details["missing"].([]string)
			case qe != nil && qe.Details["errors"] != nil:
				pc.Errors, _ = qe.Details["errors"].([]SchemaError)
			case quire.ErrorCode(err) == quire.EUNPROCESSABLE || quire.ErrorCode(err) == quire.EINVALID:
				pc.Error = quire.ErrorMessage(err)
			default:
				return nil, err
			}
		}
		out = append(out, pc)
	}
	return &PromptCheck{Prompt: as, Version: v, Payloads: out}, nil
}
