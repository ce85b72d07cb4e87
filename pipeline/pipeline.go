// Package pipeline is the one request pipeline every door runs before its
// handler: authenticate the request's credential through app, count the
// request against the credential's request limit (the client address
// when there is none), and record an API key's use. The HTTP API (and
// MCP, served on its routes), the git protocol and the web UI each read
// their credential their own way (a bearer header, HTTP Basic, a
// cookie), hand it to Admit, and answer its error their own way (JSON, a
// git challenge, a page); nothing else of the sequence is theirs.
package pipeline

import (
	"context"
	"log/slog"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/telemetry"
)

// Config is what the pipeline needs.
type Config struct {
	App *app.App
	// Limiter and Limit are the per-credential request limit; with
	// Limiter nil or Limit disabled no request is counted.
	Limiter quire.RateLimiter
	Limit   quire.Limit
	// Metrics counts refusals and limiter failures (and logs the
	// failures, quietly); a private one is made when nil.
	Metrics *telemetry.RateLimitMetrics
	// Usage records API key use; none is recorded when nil.
	Usage  quire.Usage
	Logger *slog.Logger
}

// Pipeline admits requests.
type Pipeline struct {
	app     *app.App
	limiter quire.RateLimiter
	limit   quire.Limit
	metrics *telemetry.RateLimitMetrics
	usage   quire.Usage
	log     *slog.Logger
	lost    telemetry.QuietLog // key use not recorded (Redis down)
}

// New returns the pipeline of cfg.
func New(cfg Config) *Pipeline {
	p := &Pipeline{app: cfg.App, limiter: cfg.Limiter, limit: cfg.Limit, metrics: cfg.Metrics, usage: cfg.Usage, log: cfg.Logger}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.metrics == nil {
		p.metrics = telemetry.NewRateLimitMetrics(nil, p.log)
	}
	if p.limiter == nil || !p.limit.Enabled() {
		p.limiter = nil
	}
	return p
}

// Limited reports whether requests are counted at all: when they are not,
// a door installs nothing and requests pay nothing.
func (p *Pipeline) Limited() bool { return p.limiter != nil }

// Admit authenticates token and counts the request. An empty token with
// anonymous set is the anonymous principal, limited by addr, the client's
// address; a credential that does not authenticate is an EUNAUTHORIZED
// error, but a rate-limited one when addr is over its limit, so a client
// guessing tokens is slowed like any other.
func (p *Pipeline) Admit(ctx context.Context, token, addr string, anonymous bool) (*quire.Principal, error) {
	if token == "" && anonymous {
		pr := quire.Anonymous()
		if err := p.Allow(ctx, pr, addr); err != nil {
			return nil, err
		}
		return pr, nil
	}
	return p.AdmitWith(ctx, addr, func(ctx context.Context) (*quire.Principal, error) {
		return p.app.Authenticate(ctx, token)
	})
}

// AdmitWith is Admit for a credential a door checks its own way (an OAuth
// access token, bound to the resource the door serves): authenticate
// returns its principal; the limit and the key's use are the pipeline's
// as for any credential.
func (p *Pipeline) AdmitWith(ctx context.Context, addr string, authenticate func(context.Context) (*quire.Principal, error)) (*quire.Principal, error) {
	pr, err := authenticate(ctx)
	if err != nil {
		if quire.ErrorCode(err) == quire.EUNAUTHORIZED {
			if lerr := p.Allow(ctx, nil, addr); lerr != nil {
				return nil, lerr
			}
		}
		return nil, err
	}
	if err := p.Allow(ctx, pr, addr); err != nil {
		return nil, err
	}
	p.recordKeyUse(ctx, pr)
	return pr, nil
}

// Allow counts one request of pr (nil or anonymous: of the address addr)
// against the request limit, returning a rate-limited error when it is
// over. Routes that take no credential (sign-in) call it alone.
func (p *Pipeline) Allow(ctx context.Context, pr *quire.Principal, addr string) error {
	if p.limiter == nil {
		return nil
	}
	var key string
	switch {
	case pr == nil || pr.IsAnonymous():
		key = "req:addr:" + addr
	case pr.Key != nil:
		key = "req:key:" + pr.Key.ID
	default:
		key = "req:user:" + pr.User.ID
	}
	d, err := p.limiter.Allow(ctx, key, p.limit)
	if err != nil {
		p.metrics.Failed(ctx, err) // fail open: a limiter down limits nothing
		return nil
	}
	if !d.Allowed {
		p.metrics.Limited("request")
		return app.RateLimited("too many requests for this credential", d.RetryAfter)
	}
	return nil
}

// recordKeyUse records that pr's API key, if it holds one, was used (for
// its last_used_at): by an API request, git or the UI alike. It never
// fails the request.
func (p *Pipeline) recordKeyUse(ctx context.Context, pr *quire.Principal) {
	if k := pr.Key; k != nil && p.usage != nil {
		if err := p.usage.RecordKeyUse(ctx, k.ID); err != nil {
			p.lost.Warn(ctx, p.log, "API key use not recorded", "key_id", k.ID, "error", err.Error())
		}
	}
}
