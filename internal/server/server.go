// Package server is the one place that wires a quire: the git store, Redis
// and the caches over it, usage counting, telemetry, the git service and
// the HTTP API, and the listeners (Listen). cmd/quire, internal/testenv
// and the benchmarks (internal/bench) all build their server here, so what
// they run is the same thing.
//
// It may import every quire package (it is the composition root); no
// quire package may import it except the commands and the test harnesses.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/cache"
	"github.com/quire/quire/gitproto"
	"github.com/quire/quire/gitstore"
	"github.com/quire/quire/httpapi"
	"github.com/quire/quire/internal/netguard"
	"github.com/quire/quire/llm"
	"github.com/quire/quire/mcp"
	"github.com/quire/quire/oauth"
	"github.com/quire/quire/pipeline"
	"github.com/quire/quire/telemetry"
	"github.com/quire/quire/web"
)

// Config is what Build wires a server from. The zero value of every field
// but Data is usable.
type Config struct {
	// Data is the data root: every repository lives here.
	Data string
	// Fsync syncs objects and refs before a write is acknowledged.
	Fsync bool
	// Limits overrides the store limits; the zero value is the defaults.
	Limits quire.Limits
	// StoreClock, when set, is the git store's clock (commit and tag
	// times); APIClock, the API's clock for sessions and API keys.
	StoreClock, APIClock func() time.Time

	// Redis is a redis:// URL or a redis+sentinel:// one; with it,
	// RedisSentinelMaster and RedisCluster all empty, an embedded Redis
	// runs. Every key starts with RedisPrefix. See cache.Options.
	Redis, RedisPrefix string
	// RedisSentinelMaster and RedisSentinelAddrs name a Sentinel-watched
	// primary; RedisCluster a Cluster's seeds. RedisPassword authenticates
	// to their Redis servers.
	RedisSentinelMaster string
	RedisSentinelAddrs  []string
	RedisCluster        []string
	RedisPassword       string
	// SnapshotSessions keeps the embedded Redis's sessions across
	// restarts, in a file under the data root (quire serve).
	SnapshotSessions bool
	// HostCounter is the file of the data root's mapped change counter
	// (gitstore.Options.HostCounter); tests give servers counters of their
	// own to stand for servers on different hosts.
	HostCounter string
	// DeleteRedisKeys removes every key under RedisPrefix on Close: tests
	// and benchmarks sharing a real Redis clean up after themselves.
	DeleteRedisKeys bool

	// Logger receives every log line; nothing is logged when nil.
	Logger *slog.Logger
	// AccessLog, when set, is the writer Logger's JSON handler writes
	// to: the API writes its access lines there directly, encoded as
	// that handler would (httpapi.Config.AccessLog).
	AccessLog io.Writer
	// Version labels metrics (and spans, through Tracing).
	Version string
	// Tracing sets up OpenTelemetry (telemetry.NewTracing).
	Tracing telemetry.TracingOptions

	// SessionTTL and BcryptCost: see httpapi.Config.
	SessionTTL time.Duration
	BcryptCost int

	// UsageKeyResolution: see cache.UsageOptions.KeyResolution.
	UsageKeyResolution time.Duration
	// UsageFlush, when positive, flushes usage counts from Redis to git
	// that often, and once more on Close.
	UsageFlush time.Duration

	// Git tunes the git service; errors it cannot answer with are logged
	// unless Git.OnError is set.
	Git gitstore.GitOptions
	// CacheStats is reported on /metrics; the prompt cache when nil.
	CacheStats quire.CacheStats

	// RateLimits, when set, turns rate limiting on with these limits
	// (quire serve always sets it); nil runs without a limiter at all.
	RateLimits *pipeline.RateLimits

	// TrustedProxies: see httpapi.Config.TrustedProxies.
	TrustedProxies []string

	// ProbeDisk, when positive, makes readiness check that the data root
	// takes a write, at most that often; readiness is Redis alone when 0.
	ProbeDisk time.Duration

	// Addr, when set, is where Listen serves the API, on a listener capped
	// by MaxConns and MaxConnsPerIP, with Timeouts. Without it the caller
	// serves API itself.
	Addr string
	// MaxConns caps the API listener's connections (0: sized from the
	// open-file limit); MaxConnsPerIP those of one address (0: no cap).
	MaxConns, MaxConnsPerIP int
	// Timeouts hold slow clients to deadlines (netguard.Timeouts).
	Timeouts netguard.Timeouts
	// ShutdownTimeout bounds how long in-flight requests may take to
	// finish on Close (default 30s).
	ShutdownTimeout time.Duration
	// MetricsAddr, when set, serves /metrics there, on a listener of its
	// own; DebugAddr, net/http/pprof on a loopback address.
	MetricsAddr, DebugAddr string

	// Webhooks tunes event delivery (events.go).
	Webhooks WebhookOptions
	// NoProjectRepos keeps no project repositories (app.Config): a
	// benchmark's baseline.
	NoProjectRepos bool
	// LLM configures the model providers prompt runs call; with no
	// provider, runs answer 409 no_provider.
	LLM llm.Config
}

// Server is a wired quire. Its fields are the parts tests and commands
// reach into; Close releases them all.
type Server struct {
	// App holds the use cases every door calls.
	App *app.App
	// API is the HTTP API's handler.
	API   *httpapi.Server
	Store *gitstore.Store
	Redis *cache.Redis
	Git   *gitproto.Server
	// Prompts is the prompt cache in front of Store.
	Prompts *cache.Prompts
	// AssetChanges carries the store's changes (which asset) to every
	// process; MCP, the Model Context Protocol server at /mcp, listens to
	// it.
	AssetChanges *cache.AssetChanges
	MCP          *mcp.Server
	Usage        *cache.Usage
	// RateLimiter is set when Config.RateLimits is.
	RateLimiter *cache.RateLimits
	Metrics     *prometheus.Registry
	Tracing     *telemetry.Tracing
	Log         *slog.Logger

	// HTTP serves the API on Config.Addr, Debug pprof on
	// Config.DebugAddr; each nil without its address.
	HTTP, Debug *http.Server

	cfg        Config
	ln         net.Listener
	served     chan error
	metricsSrv *http.Server
	disk       *diskProbe
	changes    *cache.Changes
	stopUsage  context.CancelFunc
	usageDone  chan struct{}
	events     eventParts
	closeOnce  sync.Once
	closeError error
}

// Build opens the stores and wires the server. On an error, whatever was
// opened is closed again.
func Build(ctx context.Context, cfg Config) (s *Server, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 30 * time.Second
	}
	if cfg.MaxConns < 0 || cfg.MaxConnsPerIP < 0 || cfg.Timeouts.BodyMinRate < 0 {
		return nil, fmt.Errorf("connection caps and the body rate must not be negative")
	}
	s = &Server{cfg: cfg, Log: cfg.Logger}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	log := cfg.Logger

	s.Metrics = telemetry.NewRegistry(cfg.Version)
	if s.Tracing, err = telemetry.NewTracing(ctx, cfg.Tracing); err != nil {
		return s, err
	}
	tr := s.Tracing
	// Background work (usage flushes, metric scrapes) is not traced on
	// its own: only spans inside a request's trace are kept.
	childSpans := telemetry.ChildSpansOnly(tr.Provider)

	ropts := cache.Options{
		URL: cfg.Redis, SentinelMaster: cfg.RedisSentinelMaster, SentinelAddrs: cfg.RedisSentinelAddrs,
		ClusterAddrs: cfg.RedisCluster, Password: cfg.RedisPassword,
		Prefix: cfg.RedisPrefix, Metrics: s.Metrics, TracerProvider: childSpans,
	}
	if cfg.SnapshotSessions {
		root, err := filepath.Abs(cfg.Data)
		if err != nil {
			return s, err
		}
		ropts.SnapshotPath = filepath.Join(root, "sessions.snapshot.json")
	}
	if s.Redis, err = cache.Open(ctx, ropts); err != nil {
		return s, err
	}
	// With a Redis of its own, quire may share its data root with
	// processes on other hosts: ref moves go to them over pub/sub too.
	var changes gitstore.ChangeFeed
	if !s.Redis.Embedded() {
		s.changes = cache.NewChanges(s.Redis, log)
		changes = s.changes
	}
	if s.Store, err = gitstore.Open(gitstore.Options{Root: cfg.Data, Fsync: cfg.Fsync, Limits: cfg.Limits, Now: cfg.StoreClock, Observe: telemetry.GitObserver(s.Metrics, tr.Provider), Changes: changes, HostCounter: cfg.HostCounter}); err != nil {
		return s, err
	}
	if err := telemetry.RegisterSessions(s.Metrics, s.Redis.ActiveSessions); err != nil {
		return s, err
	}
	if s.Usage, err = cache.NewUsage(s.Redis, s.Store, cache.UsageOptions{KeyResolution: cfg.UsageKeyResolution, Metrics: s.Metrics, Logger: log}); err != nil {
		return s, err
	}
	if cfg.Git.OnError == nil {
		cfg.Git.OnError = func(op string, err error) { log.Error("git", "op", op, "error", err.Error()) }
	}
	// The git store's side of the protocol (its pack caches and the
	// background repacker, started here) and the wire protocol over it.
	s.Git = gitproto.New(gitstore.NewGit(s.Store, cfg.Git))
	s.Prompts = cache.NewPrompts(s.Redis, s.Store, cache.PromptOptions{Logger: log})
	s.Store.OnChange(s.Prompts.Invalidate)
	stats := cfg.CacheStats
	if stats == nil {
		stats = s.Prompts
	}
	if err := telemetry.RegisterCacheStats(s.Metrics, stats); err != nil {
		return s, err
	}
	if cfg.ProbeDisk > 0 {
		s.disk = &diskProbe{root: s.Store.Root(), every: cfg.ProbeDisk}
	}
	// The use cases, then every door over them.
	rlm := telemetry.NewRateLimitMetrics(s.Metrics, log)
	limits := pipeline.RateLimits{}
	if cfg.RateLimits != nil {
		s.RateLimiter = cache.NewRateLimits(s.Redis, cache.RateLimitOptions{})
		limits = *cfg.RateLimits
	}
	appCfg := app.Config{
		Meta: s.Store, Versions: s.Store, Sessions: s.Redis,
		Prompts: s.Prompts, Payloads: s.Store, PromptCache: s.Prompts,
		Usage: s.Usage, Activity: s.Store, UsageLost: usageLost(log),
		Limits: s.Store.Limits(), SessionTTL: cfg.SessionTTL, BcryptCost: cfg.BcryptCost, Now: cfg.APIClock,
		Login: app.LoginConfig{
			Account: limits.LoginAccount, Address: limits.LoginAddress,
			Limited: rlm.Limited, LimiterFailed: rlm.Failed,
		},
		NoProjectRepos: cfg.NoProjectRepos,
	}
	if s.RateLimiter != nil {
		appCfg.RateLimiter = s.RateLimiter // a nil *RateLimits must not become a non-nil interface
	}
	if len(cfg.LLM.Providers) > 0 {
		c, err := llm.New(cfg.LLM)
		if err != nil {
			return s, fmt.Errorf("llm: %w", err)
		}
		appCfg.LLM = c
		log.Info("model providers", "llm", c.Names(), "default", cfg.LLM.Default) // names only: never a key
	}
	if appCfg.Events, err = s.openEvents(cfg); err != nil {
		return s, err
	}
	appCfg.Events.Logger = log
	appCfg.Events.Delivered = telemetry.WebhookMetrics(s.Metrics, log,
		func(ctx context.Context) (int, time.Duration) { return s.App.Backlog(ctx) }, appCfg.Events.Delivered)
	s.App = app.New(appCfg)

	pipe := pipeline.New(pipeline.Config{App: s.App, Limiter: appCfg.RateLimiter, Limit: limits.Request, Metrics: rlm, Usage: s.Usage, Logger: log})
	// MCP is served at /mcp over the use cases; it hears of every change,
	// from any process, through the change feed.
	s.AssetChanges = cache.NewAssetChanges(s.Redis, log)
	s.Store.OnChange(s.AssetChanges.Publish)
	s.MCP = mcp.New(s.App, mcp.Options{Version: cfg.Version, Logger: log, MaxBody: 4 * s.Store.Limits().MaxBody})
	s.AssetChanges.Subscribe(s.MCP.Changed)
	// quire is the OAuth authorization server of /mcp: the API serves its
	// endpoints, the UI its consent page. Fetching a client's metadata
	// document is a request to an address a stranger names, like a
	// webhook's: the same switch allows private addresses.
	var oa *oauth.Server
	if st, ok := quire.MetaStore(s.Store).(quire.OAuthStore); ok {
		oa = oauth.New(oauth.Config{Store: st, Now: cfg.APIClock, AllowPrivateMetadata: cfg.Webhooks.AllowPrivate})
	}
	ui, err := web.New(s.App, web.Config{TrustedProxies: cfg.TrustedProxies, Logger: log, Pipeline: pipe, OAuth: oa})
	if err != nil {
		return s, err
	}
	s.API = httpapi.New(s.App, httpapi.Config{
		Logger: log, Limits: s.Store.Limits(), Ready: s.ready, Git: s.Git, Pipeline: pipe,
		Metrics: s.Metrics, TracerProvider: tr.Provider, Propagator: tr.Propagator, SpansRecorded: tr.Exporting != "",
		Idempotency: cache.NewIdempotency(s.Redis), TrustedProxies: cfg.TrustedProxies,
		MCP: s.MCP, UI: ui, OAuth: oa, StreamHeartbeat: cfg.Webhooks.Heartbeat, StreamMax: cfg.Webhooks.StreamMax,
		AccessLog: cfg.AccessLog,
	})

	// Each project's repository is a view of its skills' live versions:
	// mend, before anything is served, whatever a crash left between a
	// publish and its view (or make a view that is missing).
	if n, err := s.App.SyncProjects(ctx); err != nil {
		log.Error("project repositories: could not bring them in line; the next change of each does", "error", err.Error())
	} else if n > 0 {
		log.Info("project repositories brought in line with the live versions", "changed", n)
	}
	s.startDeliveries(ctx)
	// Evaluations a stop interrupted continue from their last stored case.
	if err := s.App.ResumeEvaluations(ctx); err != nil {
		log.Error("resume evaluations", "error", err.Error())
	}

	if cfg.UsageFlush > 0 {
		usageCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
		s.stopUsage, s.usageDone = stop, make(chan struct{})
		go func() {
			defer close(s.usageDone)
			s.Usage.Run(usageCtx, cfg.UsageFlush)
		}()
	}
	return s, nil
}

// Listen opens the listeners Config names (DebugAddr, MetricsAddr, then
// Addr) and serves on them. quire serve calls it once the first admin
// exists, so that no request ever finds the server without one. On an
// error, Close still releases whatever was opened.
func (s *Server) Listen() (err error) {
	cfg, log := s.cfg, s.Log
	if cfg.DebugAddr != "" {
		if s.Debug, err = serveDebug(cfg.DebugAddr); err != nil {
			return err
		}
		log.Info("debug listener started", "addr", s.Debug.Addr)
	}
	if cfg.MetricsAddr != "" {
		if s.metricsSrv, err = s.serveMetrics(cfg.MetricsAddr, s.API.MetricsHandler()); err != nil {
			return err
		}
		log.Info("metrics listener started", "addr", s.metricsSrv.Addr)
	}
	if cfg.Addr != "" {
		if err := s.serve(); err != nil {
			return err
		}
	}
	return nil
}

// ready reports whether the data root takes a write (when probed) and
// Redis answers, for /readyz.
func (s *Server) ready(ctx context.Context) error {
	if s.disk != nil {
		if err := s.disk.check(); err != nil {
			return err
		}
	}
	if err := s.Redis.Ping(ctx); err != nil {
		return fmt.Errorf("redis unreachable") // /readyz is public: no Redis error text
	}
	return nil
}

// Addr is the address the API listens on, or "" before Listen or
// without Config.Addr.
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// MetricsAddr is the address /metrics is served on, or "" when off.
func (s *Server) MetricsAddr() string {
	if s.metricsSrv == nil {
		return ""
	}
	return s.metricsSrv.Addr
}

// Served delivers the error the API listener stopped with, if it stops
// before Close; nil without Config.Addr.
func (s *Server) Served() <-chan error { return s.served }

// Close stops accepting requests, lets in-flight ones finish, flushes
// usage counts to git (with Config.UsageFlush), exports the last spans
// and closes Redis (snapshotting embedded sessions) and the store. It may
// be called more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeError = s.close() })
	return s.closeError
}

func (s *Server) close() error {
	var errs []error
	note := func(step string, err error) {
		if err == nil {
			return
		}
		errs = append(errs, fmt.Errorf("%s: %w", step, err))
		s.Log.Error("shutdown step failed", "step", step, "error", err.Error())
	}
	if s.API != nil {
		s.API.StopStreams() // a stream never ends by itself
	}
	if s.HTTP != nil {
		if s.MCP != nil {
			// MCP's event streams never finish on their own: end the
			// sessions as shutdown begins, or it would wait them out.
			s.HTTP.RegisterOnShutdown(s.MCP.Close)
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
		err := s.HTTP.Shutdown(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("requests still running after %s: %w", s.cfg.ShutdownTimeout, err)
		}
		note("stop serving", err)
	} else if s.ln != nil {
		s.ln.Close()
	}
	if s.Debug != nil {
		s.Debug.Close()
	}
	if s.metricsSrv != nil {
		s.metricsSrv.Close()
	}
	if s.stopUsage != nil {
		s.stopUsage()
		<-s.usageDone
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := s.Usage.Flush(ctx)
		cancel()
		note("flush usage", err)
		if err == nil {
			s.Log.Info("usage flushed")
		}
	}
	if s.App != nil {
		s.App.StopEvaluations() // what is done is stored; the next start resumes the rest
	}
	s.stopDeliveries()
	if s.App != nil {
		// The projects' repositories: what was queued is written (and if
		// it is not, start-up mends it).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		note("project repositories", s.App.ProjectReposIdle(ctx))
		cancel()
	}
	if s.Tracing != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		note("export traces", s.Tracing.Shutdown(ctx))
		cancel()
	}
	if s.Git != nil {
		s.Git.Close() // waits for a background repack to finish
	}
	if s.AssetChanges != nil {
		s.AssetChanges.Close()
	}
	if s.Prompts != nil {
		s.Prompts.Close()
	}
	if s.changes != nil {
		s.changes.Close()
	}
	if s.Redis != nil {
		if s.cfg.DeleteRedisKeys {
			s.Redis.DeleteAll(context.Background())
		}
		note("close redis", s.Redis.Close())
	}
	if s.Store != nil {
		note("close store", s.Store.Close())
	}
	return errors.Join(errs...)
}

// usageLost logs a render that could not be counted (Redis down), quietly:
// the render itself succeeded.
func usageLost(log *slog.Logger) func(ctx context.Context, promptID string, version int, err error) {
	var q telemetry.QuietLog
	return func(ctx context.Context, promptID string, version int, err error) {
		q.Warn(ctx, log, "render not counted", "prompt_id", promptID, "version", version, "error", err.Error())
	}
}
