// Command quire runs the quire server and is its command line.
//
//	quire serve [flags]          run the server
//	quire mcp [--server URL]     MCP on stdio, bridged to a server's /mcp (agent.go)
//	quire login, pull, push, …   the command line of cli/ (quire --help)
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/cli"
	"github.com/quire/quire/gitstore"
	"github.com/quire/quire/httpapi"
	"github.com/quire/quire/internal/gcfloor"
	"github.com/quire/quire/internal/netguard"
	"github.com/quire/quire/internal/server"
	"github.com/quire/quire/pipeline"
	"github.com/quire/quire/telemetry"
	"github.com/spf13/cobra"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/term"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "quire:", cli.Message(err))
	}
	os.Exit(cli.ExitCode(err))
}

// run runs the command line (cli/) with the server's own commands added:
// serve and mcp.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := cli.Options{Version: Version, Stdout: stdout, Stderr: stderr, Terminal: term.IsTerminal(int(os.Stdout.Fd()))}
	return cli.Run(ctx, o, args, serveCmd(stderr), mcpCmd(stderr), backupCmd(stderr), restoreCmd(stderr))
}

// serveCmd keeps serve's own flag set (ParseFlags, its --help and the
// QUIRE_* variables) under cobra: cobra parses nothing of it.
func serveCmd(stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:                "serve [flags]",
		Short:              "Run the quire server",
		Example:            "  QUIRE_ADMIN_EMAIL=admin@example.com QUIRE_ADMIN_PASSWORD=change-me quire serve --addr 127.0.0.1:8080 --data ./repos\n  quire serve --help",
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			m := NewMain(stderr)
			if err := m.ParseFlags(args); err != nil {
				return serveUsage{err}
			}
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			if err := m.Run(ctx); err != nil {
				if m.log != nil {
					m.log.Error("quire failed to start", "error", err.Error())
				}
				m.Close()
				return err
			}
			return m.Wait(ctx)
		},
	}
}

// serveUsage is a bad flag or value of serve (exit code 2); flag.ErrHelp
// stays visible through it.
type serveUsage struct{ error }

func (e serveUsage) Unwrap() error { return e.error }
func (e serveUsage) ExitCode() int { return 2 }

// Config is what quire serve is configured with.
type Config struct {
	Addr        string
	Data        string
	Redis       string
	RedisPrefix string
	// RedisSentinelMaster and RedisSentinelAddrs (comma-separated) name a
	// Sentinel-watched primary; RedisCluster (comma-separated) a Cluster's
	// seeds. RedisPassword, from the environment only, authenticates to
	// their Redis servers.
	RedisSentinelMaster string
	RedisSentinelAddrs  string
	RedisCluster        string
	RedisPassword       string
	SessionTTL          time.Duration
	Fsync               bool
	LogLevel            string
	AdminEmail          string
	AdminPassword       string
	BcryptCost          int
	// UsageFlush is how often usage counts go from Redis to git.
	UsageFlush time.Duration
	// ShutdownTimeout bounds how long in-flight requests may take to
	// finish once a shutdown starts.
	ShutdownTimeout time.Duration
	// RateLimits are the request limit and login throttles, kept in Redis.
	RateLimits pipeline.RateLimits
	// DebugAddr, when set, serves net/http/pprof there: loopback only,
	// never on the API listener.
	DebugAddr string
	// GCFloorMiB is how far the heap may grow before a garbage collection
	// whatever the live heap (internal/gcfloor); 0 leaves GOGC alone.
	GCFloorMiB int
	// MetricsAddr, when set, serves /metrics there, on a listener of its
	// own; the API listener never serves it.
	MetricsAddr string
	// MaxConns caps the API listener's open connections (0: sized from
	// the open-file limit, netguard.DefaultMaxConns); MaxConnsPerIP caps
	// those of one client address (0: no cap).
	MaxConns      int
	MaxConnsPerIP int
	// Timeouts hold slow clients to deadlines (netguard.Timeouts).
	Timeouts netguard.Timeouts
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client (httpapi.Config.TrustedProxies), comma-separated.
	TrustedProxies string
	// Webhooks tune event delivery (docs/events.md).
	Webhooks server.WebhookOptions
	// LLM are the model providers prompt runs call (docs/runs.md).
	LLM LLMFlags
}

// Main is a running quire server; end-to-end tests drive it too. The
// wiring itself is internal/server's.
type Main struct {
	Config Config

	out io.Writer
	log *slog.Logger
	// logw batches the log's lines (telemetry.LogWriter); Close writes
	// the last of them.
	logw *telemetry.LogWriter
	srv  *server.Server
	// store, http and debug are srv's, for the tests.
	store       *gitstore.Store
	http, debug *http.Server

	closeOnce  sync.Once
	closeError error
	stopGC     chan struct{}
	gcDone     <-chan struct{}
}

// NewMain returns a Main with default configuration, logging to out.
func NewMain(out io.Writer) *Main {
	return &Main{out: out, Config: Config{
		Addr: "127.0.0.1:8080", Data: "./repos", SessionTTL: 24 * time.Hour, LogLevel: "info", RedisPrefix: "quire:",
		UsageFlush: time.Minute, ShutdownTimeout: 30 * time.Second, RateLimits: pipeline.DefaultRateLimits(),
		GCFloorMiB: gcfloor.DefaultBytes >> 20, MaxConnsPerIP: netguard.DefaultMaxConnsPerAddr,
		Timeouts: netguard.DefaultTimeouts(), LLM: LLMFlags{Concurrency: 4},
	}}
}

// ParseFlags reads flags, each with a QUIRE_* environment equivalent.
func (m *Main) ParseFlags(args []string) error {
	c := &m.Config
	fs := flag.NewFlagSet("quire serve", flag.ContinueOnError)
	fs.SetOutput(m.out)
	str := func(p *string, name, env, usage string) {
		if v := os.Getenv(env); v != "" {
			*p = v
		}
		fs.StringVar(p, name, *p, usage+" ($"+env+")")
	}
	str(&c.Addr, "addr", "QUIRE_ADDR", "address to listen on")
	str(&c.Data, "data", "QUIRE_DATA", "data root: every repository lives here")
	str(&c.Redis, "redis", "QUIRE_REDIS", "redis:// URL of one server, or redis+sentinel://host:port,host:port/MASTER; empty (and no Sentinel or Cluster) runs an embedded Redis")
	str(&c.RedisSentinelMaster, "redis-sentinel-master", "QUIRE_REDIS_SENTINEL_MASTER", "name of the primary the Sentinels of --redis-sentinel-addrs watch")
	str(&c.RedisSentinelAddrs, "redis-sentinel-addrs", "QUIRE_REDIS_SENTINEL_ADDRS", "comma-separated host:port addresses of Redis Sentinels")
	str(&c.RedisCluster, "redis-cluster", "QUIRE_REDIS_CLUSTER", "comma-separated host:port seeds of a Redis Cluster")
	str(&c.RedisPrefix, "redis-prefix", "QUIRE_REDIS_PREFIX", "prefix of every Redis key")
	str(&c.LogLevel, "log-level", "QUIRE_LOG_LEVEL", "debug, info, warn or error")
	str(&c.DebugAddr, "debug-addr", "QUIRE_DEBUG_ADDR", "loopback address serving net/http/pprof; empty is off")
	str(&c.TrustedProxies, "trusted-proxies", "QUIRE_TRUSTED_PROXIES", "comma-separated addresses or CIDRs of reverse proxies whose X-Forwarded-For names the client; empty trusts none")
	str(&c.MetricsAddr, "metrics-addr", "QUIRE_METRICS_ADDR", "address serving Prometheus metrics at /metrics on a listener of its own; empty is off")
	dur := func(p *time.Duration, name, env, usage string) error {
		if v := os.Getenv(env); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%s: %w", env, err)
			}
			*p = d
		}
		fs.DurationVar(p, name, *p, usage+" ($"+env+")")
		return nil
	}
	if err := dur(&c.SessionTTL, "session-ttl", "QUIRE_SESSION_TTL", "how long a login session lasts"); err != nil {
		return err
	}
	if err := dur(&c.UsageFlush, "usage-flush", "QUIRE_USAGE_FLUSH", "how often prompt render counts and API key last use go from Redis to git"); err != nil {
		return err
	}
	if err := dur(&c.ShutdownTimeout, "shutdown-timeout", "QUIRE_SHUTDOWN_TIMEOUT", "how long in-flight requests may run once SIGTERM or SIGINT arrives"); err != nil {
		return err
	}
	for _, d := range []struct {
		p                *time.Duration
		name, env, usage string
	}{
		{&c.Timeouts.ReadHeader, "read-header-timeout", "QUIRE_READ_HEADER_TIMEOUT", "how long a request's headers may take to arrive; 0 is no limit"},
		{&c.Timeouts.Body, "body-timeout", "QUIRE_BODY_TIMEOUT", "how long a request body may take, plus one second per --body-min-rate bytes received; 0 is no limit"},
		{&c.Timeouts.Write, "write-timeout", "QUIRE_WRITE_TIMEOUT", "how long one write of a response may wait for the client to read; 0 is no limit"},
		{&c.Timeouts.Idle, "idle-timeout", "QUIRE_IDLE_TIMEOUT", "how long a keep-alive connection may wait for its next request; 0 is no limit"},
	} {
		if err := dur(d.p, d.name, d.env, d.usage); err != nil {
			return err
		}
	}
	for _, n := range []struct {
		p                *int
		name, env, usage string
	}{
		{&c.Timeouts.BodyMinRate, "body-min-rate", "QUIRE_BODY_MIN_RATE", "bytes per second a request body must average once --body-timeout is spent; 0 makes --body-timeout a limit on the whole body"},
		{&c.MaxConns, "max-conns", "QUIRE_MAX_CONNS", "most open connections to the API listener; 0 sizes it from the open-file limit"},
		{&c.MaxConnsPerIP, "max-conns-per-ip", "QUIRE_MAX_CONNS_PER_IP", "most open connections from one client address (IPv6: one /64); 0 is no cap"},
	} {
		if v := os.Getenv(n.env); v != "" {
			i, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s: %w", n.env, err)
			}
			*n.p = i
		}
		fs.IntVar(n.p, n.name, *n.p, n.usage+" ($"+n.env+")")
	}
	if v := os.Getenv("QUIRE_FSYNC"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("QUIRE_FSYNC: %w", err)
		}
		c.Fsync = b
	}
	if v := os.Getenv("QUIRE_GC_FLOOR"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("QUIRE_GC_FLOOR: %w", err)
		}
		c.GCFloorMiB = n
	}
	fs.IntVar(&c.GCFloorMiB, "gc-floor", c.GCFloorMiB, "MiB the heap may grow to before a garbage collection, whatever the live heap; 0 leaves it to GOGC, which also turns this off when set ($QUIRE_GC_FLOOR)")
	fs.BoolVar(&c.Fsync, "fsync", c.Fsync, "fsync objects and refs before acknowledging a write: survives power loss ($QUIRE_FSYNC)")
	for _, f := range []struct {
		p                *quire.Limit
		name, env, usage string
	}{
		{&c.RateLimits.Request, "rate-limit", "QUIRE_RATE_LIMIT", "requests per API key or user (by address without a credential), as RATE/PERIOD[:BURST], e.g. 100/1s:200; 0 is off"},
		{&c.RateLimits.LoginAccount, "login-limit", "QUIRE_LOGIN_LIMIT", "failed logins per account (email), as RATE/PERIOD[:BURST]; 0 is off"},
		{&c.RateLimits.LoginAddress, "login-address-limit", "QUIRE_LOGIN_ADDRESS_LIMIT", "failed logins per client address, as RATE/PERIOD[:BURST]; 0 is off"},
	} {
		if v := os.Getenv(f.env); v != "" {
			if err := f.p.UnmarshalText([]byte(v)); err != nil {
				return fmt.Errorf("%s: %w", f.env, err)
			}
		}
		fs.TextVar(f.p, f.name, *f.p, f.usage+" ($"+f.env+")")
	}
	c.RedisPassword = os.Getenv("QUIRE_REDIS_PASSWORD")
	if err := webhookFlags(fs, &c.Webhooks); err != nil {
		return err
	}
	if err := llmFlags(fs, &c.LLM); err != nil {
		return err
	}
	c.AdminEmail = os.Getenv("QUIRE_ADMIN_EMAIL")
	c.AdminPassword = os.Getenv("QUIRE_ADMIN_PASSWORD")
	fs.Usage = func() {
		fmt.Fprintln(m.out, "usage: quire serve [flags]\n\nEvery flag can also be set by the environment variable named after it.\nOn first start, with no user yet, an admin is created from\n$QUIRE_ADMIN_EMAIL and $QUIRE_ADMIN_PASSWORD (or a generated password\nprinted once to the log).\n\n$QUIRE_REDIS_PASSWORD, when set, authenticates to the Redis servers of\n--redis-sentinel-master and --redis-cluster (a --redis URL carries its own).\n\nTraces are exported over OTLP when $OTEL_EXPORTER_OTLP_ENDPOINT is set\n(OTLP/HTTP, or gRPC with $OTEL_EXPORTER_OTLP_PROTOCOL=grpc; the other\nstandard OTEL_* variables apply too). Prometheus metrics are served at\n/metrics on --metrics-addr only.\n\nFlags:")
		fs.PrintDefaults()
	}
	return fs.Parse(args)
}

// Run opens the stores, creates the first admin if needed and starts
// serving. It returns once the listener is open.
func (m *Main) Run(ctx context.Context) error {
	c := m.Config
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return fmt.Errorf("log level: %w", err)
	}
	m.logw = telemetry.NewLogWriter(m.out, 0)
	m.log = slog.New(slog.NewJSONHandler(m.logw, &slog.HandlerOptions{Level: level}))
	if c.UsageFlush <= 0 {
		return fmt.Errorf("usage flush interval must be positive")
	}
	if c.GCFloorMiB < 0 {
		return fmt.Errorf("gc floor must not be negative")
	}
	trusted, err := httpapi.CheckTrustedProxies(c.TrustedProxies)
	if err != nil {
		return err
	}
	llmCfg, err := c.LLM.config(os.Getenv)
	if err != nil {
		return err
	}
	m.stopGC = make(chan struct{})
	m.gcDone = gcfloor.Tune(uint64(c.GCFloorMiB)<<20, time.Second, m.stopGC)

	srv, err := server.Build(ctx, server.Config{
		Data: c.Data, Fsync: c.Fsync,
		Redis: c.Redis, RedisPrefix: c.RedisPrefix, SnapshotSessions: true,
		RedisSentinelMaster: c.RedisSentinelMaster, RedisSentinelAddrs: splitList(c.RedisSentinelAddrs),
		RedisCluster: splitList(c.RedisCluster), RedisPassword: c.RedisPassword,
		Logger: m.log, AccessLog: m.logw, Version: Version,
		Tracing:    telemetry.TracingOptions{ServiceName: "quire", Version: Version},
		SessionTTL: c.SessionTTL, BcryptCost: c.BcryptCost,
		UsageKeyResolution: 30 * time.Second, UsageFlush: c.UsageFlush,
		RateLimits:     &c.RateLimits,
		TrustedProxies: trusted,
		ProbeDisk:      time.Second,
		Addr:           c.Addr, MaxConns: c.MaxConns, MaxConnsPerIP: c.MaxConnsPerIP, Timeouts: c.Timeouts,
		ShutdownTimeout: c.ShutdownTimeout,
		MetricsAddr:     c.MetricsAddr, DebugAddr: c.DebugAddr,
		Webhooks: c.Webhooks,
		LLM:      llmCfg,
	})
	if err != nil {
		return err
	}
	m.srv, m.store = srv, srv.Store
	if err := m.bootstrap(ctx); err != nil {
		return err
	}
	if err := srv.Listen(); err != nil {
		return err
	}
	m.http, m.debug = srv.HTTP, srv.Debug
	m.log.Info("quire started", "addr", srv.Addr(), "ui", uiURL(srv.Addr()), "data", srv.Store.Root(),
		"redis_embedded", srv.Redis.Embedded(), "redis_mode", string(srv.Redis.Mode()), "version", Version,
		"tracing", cmp.Or(srv.Tracing.Exporting, "off"), "usage_flush", c.UsageFlush.String())
	m.logw.Flush() // whoever waits for the start (a supervisor, a test) reads it now
	return nil
}

// Wait serves until ctx ends (a signal) or the server fails, then shuts
// down.
func (m *Main) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		m.log.Info("shutting down", "reason", context.Cause(ctx).Error())
		return m.Close()
	case err := <-m.srv.Served():
		m.log.Error("server stopped unexpectedly", "error", err.Error())
		m.Close()
		return err
	}
}

// Addr is the address the server listens on.
func (m *Main) Addr() string { return m.srv.Addr() }

// MetricsAddr is the address /metrics is served on, or "" when off.
func (m *Main) MetricsAddr() string { return m.srv.MetricsAddr() }

// Close stops accepting requests, lets in-flight ones finish, flushes
// usage counts to git, exports the last spans and closes Redis
// (snapshotting embedded sessions). It may be called more than once.
func (m *Main) Close() error {
	m.closeOnce.Do(func() { m.closeError = m.close() })
	return m.closeError
}

func (m *Main) close() error {
	var err error
	if m.srv != nil {
		err = m.srv.Close()
	}
	if m.stopGC != nil {
		close(m.stopGC)
		<-m.gcDone
	}
	if m.log != nil {
		m.log.Info("quire stopped")
	}
	if m.logw != nil {
		m.logw.Close() // every line, the last included, is out before exit
	}
	return err
}

// bootstrap creates the first admin when there is no user at all.
func (m *Main) bootstrap(ctx context.Context) error {
	users, err := m.store.Users(ctx)
	if err != nil || len(users) > 0 {
		return err
	}
	email, password := m.Config.AdminEmail, m.Config.AdminPassword
	if email == "" {
		email = "admin@localhost"
	}
	generated := password == ""
	if generated {
		password = quire.NewSecret()[:24]
	}
	cost := m.Config.BcryptCost
	if cost == 0 {
		cost = httpapi.DefaultBcryptCost // as the API hashes every other password
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return err
	}
	u := &quire.User{Email: email, Name: "Administrator", Role: quire.RoleAdmin, PasswordHash: string(hash)}
	if err := m.store.CreateUser(ctx, quire.Actor{Name: "quire", Email: "quire@localhost"}, u); err != nil {
		return err
	}
	if generated {
		// Printed once, to the console only: this is the one log line that
		// carries a secret, because there is no other way to hand it over.
		fmt.Fprintf(m.logw, "quire: created admin %s with password %s (set QUIRE_ADMIN_PASSWORD to choose it)\n", email, password)
	} else {
		m.log.Info("created admin user", "email", email)
	}
	return nil
}

// uiURL is where a person opens the web UI of a server listening on
// addr: a wildcard host is reached on loopback.
func uiURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/ui/"
}

// splitList reads a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
