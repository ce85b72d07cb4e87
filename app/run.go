package app

import (
	"context"
	"encoding/json"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/render"
)

// RunRequest is what a run asks for: the variables (and a payload's) to
// render the version with, and optionally another model or provider than
// the version's config.json names.
type RunRequest struct {
	Vars      render.Vars
	PayloadID string
	Model     string
	Provider  string
}

// Run is a version rendered and sent to a model: the messages as sent
// and the model's answer.
type Run struct {
	Version      int             `json:"version"`
	Commit       string          `json:"commit"`
	Messages     []quire.Message `json:"messages"`
	Output       string          `json:"output"`
	FinishReason string          `json:"finish_reason"`
	Model        string          `json:"model"`
	Provider     string          `json:"provider"`
	Usage        RunUsage        `json:"usage"`
	LatencyMS    int64           `json:"latency_ms"`
}

// RunUsage is the tokens a run cost, as the provider counted them.
type RunUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// RunPrompt renders version ref of the prompt as render does and sends
// the messages to a model. It needs write access: a run spends the
// operator's money, which readers may not.
func (h *Handle) RunPrompt(ctx context.Context, ref VersionRef, req RunRequest) (*Run, error) {
	a, as := h.app, h.Asset
	if err := h.needPrompt(quire.AccessWrite); err != nil {
		return nil, err
	}
	if a.llm == nil {
		return nil, quire.Errorf(quire.ENOPROVIDER, "no model provider is configured: the operator sets one with quire serve --llm NAME=BASE_URL")
	}
	rr := RenderRequest{Vars: req.Vars, PayloadID: req.PayloadID, Label: ref.Label, uncounted: true}
	if !ref.Live && ref.Label == "" {
		rr.Version = &ref.Number
	}
	r, err := a.render(ctx, as, rr)
	if err != nil {
		return nil, err
	}
	provider, comp := completionOf(r, req.Model, req.Provider)
	start := time.Now()
	res, err := a.llm.Complete(ctx, provider, comp)
	if err != nil {
		return nil, err
	}
	return &Run{
		Version: r.Version, Commit: r.Commit, Messages: comp.Messages, Output: res.Output, FinishReason: res.FinishReason,
		Model: res.Model, Provider: res.Provider, Usage: RunUsage{InputTokens: res.InputTokens, OutputTokens: res.OutputTokens},
		LatencyMS: time.Since(start).Milliseconds(),
	}, nil
}

// completionOf is the call a rendered version makes: its messages (a
// text prompt as one user message), to model and provider when given,
// else the version's.
func completionOf(r Rendered, model, provider string) (string, quire.Completion) {
	msgs := r.Messages
	if r.Text != nil {
		msgs = []quire.Message{{Role: "user", Content: *r.Text}}
	}
	if provider == "" {
		provider = r.Provider
	}
	if model == "" {
		model = r.Model
	}
	params := r.ModelParams
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	return provider, quire.Completion{Model: model, Messages: msgs, Params: params}
}

// CanRun reports whether a model provider is configured, so a door can
// leave out a Run control that could only answer no_provider.
func (a *App) CanRun() bool { return a.llm != nil }
