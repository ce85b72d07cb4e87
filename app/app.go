// Package app holds quire's use cases: authentication, login and sessions,
// users, API keys, projects and members, the activity feed, access (resolve
// a project or asset and authorize the caller, once), rendering, prompt
// content, live reads, payloads, cache purge and usage reads, and, as they
// move here from the transports, the single write path, reviews and
// events. Every door -- the HTTP API, the git protocol, the web UI,
// MCP, the CLI -- decodes its input, calls app, and encodes the answer.
//
// app knows the domain (the root package) and calls the stores through
// its interfaces. It must not import gin, go-git, go-redis, or any door
// or store package (internal/archtest enforces this).
package app

import (
	"context"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/quire/quire"
)

// Config is what the use cases need: the stores, limits and a clock.
// Fields left nil are use cases this App does not offer.
type Config struct {
	Meta     quire.MetaStore
	Versions quire.VersionStore
	Sessions quire.SessionStore
	// Prompts reads prompt content, usually through the prompt cache;
	// Payloads keeps prompt payloads; PromptCache purges cached reads.
	Prompts     quire.PromptStore
	Payloads    quire.PayloadStore
	PromptCache quire.PromptCache
	// Usage counts renders and API key use; Activity is the change feed.
	Usage    quire.Usage
	Activity quire.ActivityLog
	// UsageLost hears of a render that could not be counted (Redis down):
	// the render itself still succeeds. Nil drops the news.
	UsageLost func(ctx context.Context, promptID string, version int, err error)
	// RateLimiter keeps login throttles and request limits.
	RateLimiter quire.RateLimiter
	Limits      quire.Limits
	// SessionTTL is how long a login session lasts; BcryptCost the cost
	// of password hashes.
	SessionTTL time.Duration
	BcryptCost int
	// Now is the clock sessions and API keys expire by; time.Now when nil.
	Now func() time.Time
	// Login is the login throttle (login.go).
	Login LoginConfig
	// Events keeps the event log and webhooks (events.go, webhooks.go).
	Events EventsConfig
	// NoProjectRepos keeps no project repositories (projectrepo.go) even
	// when the version store can: the baseline quire-bench measures them
	// against.
	NoProjectRepos bool
	// LLM calls the operator's model providers for runs; nil answers
	// runs 409 no_provider.
	LLM quire.LLM
}

// App is quire's use cases over its stores.
type App struct {
	meta        quire.MetaStore
	versions    quire.VersionStore
	sessions    quire.SessionStore
	prompts     quire.PromptStore
	payloads    quire.PayloadStore
	llm         quire.LLM
	promptCache quire.PromptCache
	usage       quire.Usage
	usageLost   func(ctx context.Context, promptID string, version int, err error)
	activity    quire.ActivityLog
	reviews     quire.ReviewStore // nil: the version store keeps no reviews
	labels      quire.LabelStore  // nil: nor labels
	// projectRepos keeps the projects' own repositories (nil: none);
	// projectQ queues the changes of their views (projectrepo.go).
	projectRepos quire.ProjectRepoStore
	projectQ     projectQueue
	limiter      quire.RateLimiter
	limits       quire.Limits
	sessionTTL   time.Duration
	bcryptCost   int
	login        loginGuard
	now          func() time.Time

	// templates memoizes parsed templates by commit; liveAt is prompts
	// when it can read the live version at a known commit (the cache),
	// found once here rather than asserted per request.
	templates *templateMemo
	liveAt    liveAtStore
	// compose keeps what renders resolved their partials to, valid
	// while gens (prompts, when it can tell) holds its generation.
	compose composeMemo
	gens    generations
	// skills memoizes live skills' front matter and digests by commit
	// (agents.go).
	skills *lru.Cache[string, *skillDigests]
	// discovery keeps the digests of skill versions by commit
	// (discovery.go).
	discovery *lru.Cache[string, *discoveryEntry]

	// events is the event log (nil: none kept); ev the rest of the events
	// config; bus wakes readers of the log; coalesce holds bursts of
	// draft updates (events.go). access wakes open streams to check
	// their caller again when credentials or memberships change here.
	events   quire.EventLog
	ev       EventsConfig
	bus      bus
	access   bus
	coalesce coalescer

	// evals runs evaluations (evaluations.go).
	evals *evaluator
}

// New returns the use cases over cfg's stores.
func New(cfg Config) *App {
	a := &App{
		meta: cfg.Meta, versions: cfg.Versions, sessions: cfg.Sessions,
		prompts: cfg.Prompts, payloads: cfg.Payloads, promptCache: cfg.PromptCache,
		usage: cfg.Usage, usageLost: cfg.UsageLost, activity: cfg.Activity, limiter: cfg.RateLimiter,
		limits: cfg.Limits, sessionTTL: cfg.SessionTTL, bcryptCost: cfg.BcryptCost, now: cfg.Now,
		llm: cfg.LLM,
	}
	// Prompt content and payloads live in the assets' repositories, so
	// the version store keeps them when no other store is named.
	if a.prompts == nil {
		a.prompts, _ = cfg.Versions.(quire.PromptStore)
	}
	if a.payloads == nil {
		a.payloads, _ = cfg.Versions.(quire.PayloadStore)
	}
	a.templates = newTemplateMemo()
	a.evals = newEvaluator(cfg.Versions)
	// Reviews and labels live in the assets' repositories, so the version
	// store keeps them when it can.
	a.reviews, _ = cfg.Versions.(quire.ReviewStore)
	a.labels, _ = cfg.Versions.(quire.LabelStore)
	if !cfg.NoProjectRepos {
		a.projectRepos, _ = cfg.Versions.(quire.ProjectRepoStore)
	}
	a.liveAt, _ = a.prompts.(liveAtStore)
	a.gens, _ = a.prompts.(generations)
	a.skills = newSkillMemo()
	a.discovery = newDiscoveryMemo()
	a.events, a.ev = cfg.Events.Log, cfg.Events
	a.bus.init()
	a.access.init()
	if a.meta != nil {
		a.meta = accessSignals{MetaStore: a.meta, changed: a.accessChanged}
	}
	a.coalesce = coalescer{last: map[string]time.Time{}, timers: map[string]*time.Timer{}}
	if a.now == nil {
		a.now = time.Now
	}
	if a.limits == (quire.Limits{}) {
		a.limits = quire.DefaultLimits()
	}
	if a.sessionTTL <= 0 {
		a.sessionTTL = 24 * time.Hour
	}
	if a.bcryptCost == 0 {
		a.bcryptCost = DefaultBcryptCost
	}
	if a.sessions != nil { // logins are offered
		a.login = newLoginGuard(cfg.Login, a.bcryptCost, a.now)
	}
	return a
}
