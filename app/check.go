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

// CheckPromptVersion renders version n of prompt as (read access) with
// every sample payload of the prompt, without counting the renders:
// payloads are the prompt's test cases.
func (a *App) CheckPromptVersion(ctx context.Context, as *quire.Asset, n int) (*quire.Version, []PayloadCheck, error) {
	v, err := a.versions.Version(ctx, as, n)
	if err != nil {
		return nil, nil, err
	}
	content, err := a.prompts.PromptContent(ctx, as, v.Commit)
	if err != nil {
		return nil, nil, err
	}
	cp, err := a.templates.get(v.Commit, content)
	if err != nil {
		return nil, nil, err
	}
	pls := []*quire.Payload{}
	if a.payloads != nil {
		if pls, err = a.payloads.Payloads(ctx, as); err != nil {
			return nil, nil, err
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
				return nil, nil, err
			}
		}
		out = append(out, pc)
	}
	return v, out, nil
}
