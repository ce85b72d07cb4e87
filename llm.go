package quire

import (
	"context"
	"encoding/json"
)

// LLM calls the chat-completion models of the providers the operator
// configured (package llm implements it over openai-go). The app layer
// knows only this, so a run is tested against a local server and the
// keys stay in the implementation: never in a request, a log or the data
// root.
type LLM interface {
	// Complete sends one chat completion to provider ("" for the
	// default). Errors: ENOPROVIDER for an unknown provider, EPROVIDER
	// for a provider's failure (details: status, message), EUNAVAILABLE
	// with details.retry_after when it kept answering 429.
	Complete(ctx context.Context, provider string, req Completion) (*CompletionResult, error)
}

// Completion is one chat completion request: the messages as rendered,
// the model and its parameters (a JSON object merged into the request).
type Completion struct {
	Model    string
	Messages []Message
	Params   json.RawMessage
	// Background calls (evaluations) take slots of their own, so they
	// never hold up the calls of API requests.
	Background bool
}

// CompletionResult is a provider's answer.
type CompletionResult struct {
	// Provider is the provider that answered (the default resolved).
	Provider     string
	Model        string
	Output       string
	FinishReason string
	InputTokens  int64
	OutputTokens int64
}
