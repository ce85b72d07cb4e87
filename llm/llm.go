// Package llm calls the operator's OpenAI-compatible chat-completion
// providers with the official openai-go client: quire.LLM for the runs
// of app. It holds the providers' keys, which it never logs or returns;
// it bounds each provider's concurrent calls, times each call out, and
// retries a provider's 429 after the Retry-After it asks for (bounded).
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/quire/quire"
)

// Provider is one configured endpoint.
type Provider struct {
	// Name is what prompts and runs call it by (config.json "provider").
	Name string
	// BaseURL is the API's base, e.g. https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none.
	APIKey string
}

// Config is the providers and how they are called.
type Config struct {
	Providers []Provider
	// Default is the provider of a run that names none; with one
	// provider and no Default, that one.
	Default string
	// Concurrency bounds each provider's calls in flight (default 4).
	Concurrency int
	// Timeout bounds one call (default 60s).
	Timeout time.Duration
	// Retries is how many times a 429 is retried (default 3), waiting
	// the provider's Retry-After, at most MaxBackoff (default 10s), or
	// Backoff doubling from 500ms when it gives none.
	Retries    int
	Backoff    time.Duration
	MaxBackoff time.Duration
}

// Client is quire.LLM over the configured providers.
type Client struct {
	cfg       Config
	providers map[string]*provider
}

type provider struct {
	name   string
	client openai.Client
	// slots bound the calls of requests, bgSlots those of background
	// work (evaluations), each to the concurrency: a queue of
	// evaluation cases never delays a run.
	slots, bgSlots chan struct{}
}

// New checks cfg and makes a client for each provider.
func New(cfg Config) (*Client, error) {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.Retries == 0 {
		cfg.Retries = 3
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 500 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 10 * time.Second
	}
	c := &Client{cfg: cfg, providers: map[string]*provider{}}
	for _, p := range cfg.Providers {
		if p.Name == "" || p.BaseURL == "" {
			return nil, fmt.Errorf("llm provider %q: a name and a base URL are needed", p.Name)
		}
		if _, dup := c.providers[p.Name]; dup {
			return nil, fmt.Errorf("llm provider %q given twice", p.Name)
		}
		opts := []option.RequestOption{
			option.WithBaseURL(p.BaseURL),
			// quire retries 429s itself, to answer 503 with the
			// provider's Retry-After when they do not stop.
			option.WithMaxRetries(0),
		}
		if p.APIKey != "" {
			opts = append(opts, option.WithAPIKey(p.APIKey))
		}
		c.providers[p.Name] = &provider{name: p.Name, client: openai.NewClient(opts...),
			slots: make(chan struct{}, cfg.Concurrency), bgSlots: make(chan struct{}, cfg.Concurrency)}
	}
	if cfg.Default == "" && len(cfg.Providers) == 1 {
		c.cfg.Default = cfg.Providers[0].Name
	}
	if c.cfg.Default != "" && c.providers[c.cfg.Default] == nil {
		return nil, fmt.Errorf("default llm provider %q is not configured", c.cfg.Default)
	}
	return c, nil
}

// Complete implements quire.LLM.
func (c *Client) Complete(ctx context.Context, name string, req quire.Completion) (*quire.CompletionResult, error) {
	if name == "" {
		name = c.cfg.Default
	}
	p := c.providers[name]
	if p == nil {
		if name == "" {
			return nil, quire.Errorf(quire.ENOPROVIDER, "no model provider is configured: the operator sets one with quire serve --llm NAME=BASE_URL")
		}
		return nil, quire.Errorf(quire.ENOPROVIDER, "model provider %q is not configured", name).WithDetail("provider", name)
	}
	if req.Model == "" {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "no model: set model in the version's config.json or in the request")
	}
	opts, err := requestOptions(req)
	if err != nil {
		return nil, err
	}
	slots := p.slots
	if req.Background {
		slots = p.bgSlots
	}
	select {
	case slots <- struct{}{}:
		defer func() { <-slots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	wait := c.cfg.Backoff
	for attempt := 0; ; attempt++ {
		out, err := c.call(ctx, p, req, opts)
		var apiErr *openai.Error
		if err == nil {
			return out, nil
		} else if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests {
			return nil, c.providerError(ctx, p.name, err)
		}
		after, given := retryAfter(apiErr.Response)
		if attempt >= c.cfg.Retries || after > c.cfg.MaxBackoff {
			secs := int((max(after, wait) + time.Second - 1) / time.Second)
			return nil, (&quire.Error{Code: quire.EUNAVAILABLE, Message: fmt.Sprintf("model provider %q is rate limiting quire; retry later", p.name), Err: err}).
				WithDetail("retry_after", max(secs, 1)).WithDetail("provider", p.name)
		}
		if !given {
			after = wait
			wait = min(2*wait, c.cfg.MaxBackoff)
		}
		t := time.NewTimer(after)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
}

// call makes one attempt, within the timeout; its error is the client's.
func (c *Client) call(ctx context.Context, p *provider, req quire.Completion, opts []option.RequestOption) (*quire.CompletionResult, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	cc, err := p.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: req.Model}, opts...)
	if err != nil {
		return nil, err
	}
	out := &quire.CompletionResult{Provider: p.name, Model: cmpOr(cc.Model, req.Model),
		InputTokens: cc.Usage.PromptTokens, OutputTokens: cc.Usage.CompletionTokens}
	if len(cc.Choices) == 0 {
		return nil, quire.Errorf(quire.EPROVIDER, "model provider %q answered no choice", p.name).WithDetail("provider", p.name)
	}
	out.Output, out.FinishReason = cc.Choices[0].Message.Content, cc.Choices[0].FinishReason
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// requestOptions sets the messages as rendered (any role the prompt
// uses) and the model parameters, each a top-level field of the request.
func requestOptions(req quire.Completion) ([]option.RequestOption, error) {
	msgs := make([]map[string]string, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = map[string]string{"role": m.Role, "content": m.Content}
	}
	opts := []option.RequestOption{option.WithJSONSet("messages", msgs)}
	if len(req.Params) > 0 && string(req.Params) != "null" {
		var params map[string]json.RawMessage
		if err := json.Unmarshal(req.Params, &params); err != nil {
			return nil, quire.Errorf(quire.EUNPROCESSABLE, "model_params must be a JSON object")
		}
		for k, v := range params {
			if k == "messages" || k == "model" || k == "stream" {
				return nil, quire.Errorf(quire.EUNPROCESSABLE, "model_params may not set %q", k).WithDetail("field", "model_params."+k)
			}
			opts = append(opts, option.WithJSONSet(k, v))
		}
	}
	return opts, nil
}

// providerError is err as EPROVIDER, with the provider's status and
// message when it answered. The request (and its key) is not kept.
func (c *Client) providerError(ctx context.Context, name string, err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		if len(msg) > maxMessage {
			msg = strings.ToValidUTF8(msg[:maxMessage], "") + "…"
		}
		return (&quire.Error{Code: quire.EPROVIDER, Message: fmt.Sprintf("model provider %q answered %d: %s", name, apiErr.StatusCode, msg)}).
			WithDetail("provider", name).WithDetail("status", apiErr.StatusCode).WithDetail("message", msg)
	}
	if e, ok := errors.AsType[*quire.Error](err); ok {
		return e // quire's own: no choice in the answer
	}
	if ctx.Err() != nil {
		return ctx.Err() // the caller went away
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return (&quire.Error{Code: quire.EPROVIDER, Message: fmt.Sprintf("model provider %q did not answer within %s", name, c.cfg.Timeout), Err: err}).
			WithDetail("provider", name)
	}
	return (&quire.Error{Code: quire.EPROVIDER, Message: fmt.Sprintf("model provider %q could not be reached", name), Err: err}).
		WithDetail("provider", name)
}

// maxMessage bounds the provider's message quire passes on: enough to
// say what went wrong, not a page of HTML from a proxy.
const maxMessage = 1024

// retryAfter reads Retry-After (seconds or an HTTP date) of a 429.
func retryAfter(r *http.Response) (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	v := strings.TrimSpace(r.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// Names are the configured providers' names, for the startup log.
func (c *Client) Names() []string {
	out := make([]string, 0, len(c.cfg.Providers))
	for _, p := range c.cfg.Providers {
		out = append(out, p.Name)
	}
	return out
}

var _ quire.LLM = (*Client)(nil)
