// Package testenv builds a complete quire server for tests: a git store in
// a temporary data root, Redis (embedded, or the real one named by
// QUIRE_TEST_REDIS_URL under a key prefix of the test's own) and the HTTP
// API on a real listener. Tests talk to it as clients do.
package testenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/cache"
	"github.com/quire/quire/gitproto"
	"github.com/quire/quire/gitstore"
	"github.com/quire/quire/httpapi"
	"github.com/quire/quire/internal/cluster"
	"github.com/quire/quire/internal/netguard"
	"github.com/quire/quire/internal/server"
	"github.com/quire/quire/llm"
	"github.com/quire/quire/pipeline"
	"github.com/quire/quire/telemetry"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/crypto/bcrypt"
)

// AdminEmail and AdminPassword are the first user of every Env.
const (
	AdminEmail    = "admin@example.com"
	AdminPassword = "admin-password"
)

// Env is one running quire.
type Env struct {
	T     testing.TB
	URL   string
	Store *gitstore.Store
	Redis *cache.Redis
	Git   *gitproto.Server
	// Prompts is the prompt cache in front of Store.
	Prompts *cache.Prompts
	Server  *httpapi.Server
	// App holds the use cases the doors call.
	App  *app.App
	HTTP *httptest.Server
	Log  *cluster.Log
	// Metrics is the registry /metrics serves; Usage the usage recorder.
	Metrics *prometheus.Registry
	Usage   *cache.Usage
	// RateLimiter is set when Options.RateLimits is.
	RateLimiter *cache.RateLimits
	// Admin is a session token of the admin user.
	Admin string
}

// Options tweak an Env.
type Options struct {
	// Root reuses a data root (for restart and multi-process tests).
	Root string
	// RedisURL forces a Redis; "" picks QUIRE_TEST_REDIS_URL or embedded.
	RedisURL string
	// Embedded forces the in-process Redis even when QUIRE_TEST_REDIS_URL
	// is set, so a test can run against both.
	Embedded bool
	// Prefix forces a Redis key prefix (to share sessions between Envs).
	Prefix string
	// Limits overrides the store limits.
	Limits quire.Limits
	// Spans, when set, receives every span (tracetest.NewInMemoryExporter).
	// Otherwise spans are made, for their trace ids, but not sampled.
	Spans sdktrace.SpanExporter
	// CacheStats, when set, is reported on /metrics.
	CacheStats quire.CacheStats
	// Now, when set, is the git store's clock (commit and tag times).
	Now func() time.Time
	// Git tunes the git service (smart HTTP under /git/).
	Git gitstore.GitOptions
	// RateLimits turns rate limiting on (it is off by default, so tests
	// are never throttled). The buckets run on Redis's clock: a test that
	// moves it passes its own miniredis as RedisURL (Miniredis.SetTime).
	RateLimits *pipeline.RateLimits
	// Clock, when set, is the API's clock for issuing and expiring
	// sessions and API keys (httpapi.Config.Now).
	Clock func() time.Time
	// TrustedProxies: see httpapi.Config.TrustedProxies.
	TrustedProxies []string
	// HostCounter gives the server a change counter of its own
	// (server.Config.HostCounter): two Envs on one Root then stand for
	// servers on two hosts, which learn of each other's writes only
	// through Redis.
	HostCounter string
	// BcryptCost is the API's password hash cost; 0 is bcrypt.MinCost,
	// which keeps tests fast.
	BcryptCost int
	// Webhooks tunes event delivery (tests of receivers on 127.0.0.1 set
	// AllowPrivate, and a fast RetrySchedule).
	Webhooks server.WebhookOptions
	// LLM configures model providers for runs (tests point them at a
	// local OpenAI-compatible server, with a short timeout).
	LLM llm.Config
}

// RedisURL is the real Redis tests should use, or "" for embedded only.
func RedisURL() string { return os.Getenv("QUIRE_TEST_REDIS_URL") }

// RedisModes are the Redis set-ups a test should run against: embedded
// always, and the real Redis too when QUIRE_TEST_REDIS_URL is set.
func RedisModes() map[string]Options {
	m := map[string]Options{"miniredis": {Embedded: true}}
	if u := RedisURL(); u != "" {
		m["redis"] = Options{RedisURL: u}
	}
	return m
}

// New starts an Env with a fresh data root and its own Redis key prefix.
func New(t testing.TB) *Env { return NewWith(t, Options{}) }

// NewWith starts an Env with options.
func NewWith(t testing.TB, o Options) *Env {
	t.Helper()
	ctx := context.Background()
	if o.Root == "" {
		o.Root = t.TempDir()
	}
	if o.RedisURL == "" && !o.Embedded {
		o.RedisURL = RedisURL()
	}
	if o.Prefix == "" {
		o.Prefix = "quiretest:" + randomHex(6) + ":"
	}
	logs := &cluster.Log{}
	if o.BcryptCost == 0 {
		o.BcryptCost = bcrypt.MinCost
	}
	s, err := server.Build(ctx, server.Config{
		Data: o.Root, Limits: o.Limits, StoreClock: o.Now, APIClock: o.Clock,
		Redis: o.RedisURL, RedisPrefix: o.Prefix, DeleteRedisKeys: o.RedisURL != "",
		HostCounter: o.HostCounter,
		Logger:      slog.New(slog.NewJSONHandler(logs, nil)),
		Version:     "test",
		Tracing:     telemetry.TracingOptions{Exporter: o.Spans, Getenv: func(string) string { return "" }},
		BcryptCost:  o.BcryptCost,
		Git:         o.Git, CacheStats: o.CacheStats,
		RateLimits:     o.RateLimits,
		TrustedProxies: o.TrustedProxies,
		Webhooks:       o.Webhooks,
		LLM:            o.LLM,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The server's deadlines for slow clients, as quire serve sets them.
	hs := httptest.NewUnstartedServer(s.API)
	netguard.DefaultTimeouts().Apply(hs.Config)
	hs.Start()
	e := &Env{T: t, URL: hs.URL, Store: s.Store, Redis: s.Redis, Git: s.Git, Prompts: s.Prompts, Server: s.API, App: s.App, HTTP: hs, Log: logs, Metrics: s.Metrics, Usage: s.Usage, RateLimiter: s.RateLimiter}
	t.Cleanup(func() {
		s.API.StopStreams() // or Close would wait for open event streams
		hs.Close()
		s.Close()
	})
	store := s.Store
	if _, err := store.UserByEmail(ctx, AdminEmail); quire.ErrorCode(err) == quire.ENOTFOUND {
		hash, _ := bcrypt.GenerateFromPassword([]byte(AdminPassword), bcrypt.MinCost)
		u := &quire.User{Email: AdminEmail, Name: "Admin", Role: quire.RoleAdmin, PasswordHash: string(hash)}
		if err := store.CreateUser(ctx, quire.Actor{Name: "test"}, u); err != nil {
			t.Fatal(err)
		}
	}
	e.Admin = e.Login(AdminEmail, AdminPassword)
	return e
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Response is an HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map (failing the test if it is not).
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// Decode decodes the body into v.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode body: %v\n%s", err, r.Body)
	}
}

// Do sends a request. body may be nil, a string or []byte (sent as is),
// or anything else (sent as JSON). headers are "Key: value" strings.
func (e *Env) Do(method, path, token string, body any, headers ...string) *Response {
	e.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.T.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.T.Fatal(err)
	}
	out := &Response{Status: res.StatusCode, Header: res.Header, Body: b}
	if err := CheckContract(req, out); err != nil {
		e.T.Errorf("contract: %v", err) // Errorf: Do may run on other goroutines
	}
	return out
}

// Must sends a request and fails the test unless the status is want.
func (e *Env) Must(want int, method, path, token string, body any, headers ...string) *Response {
	e.T.Helper()
	r := e.Do(method, path, token, body, headers...)
	if r.Status != want {
		e.T.Fatalf("%s %s: status %d, want %d\n%s", method, path, r.Status, want, r.Body)
	}
	return r
}

// Scrape answers what Prometheus gets from the metrics listener (quire
// serve --metrics-addr): the API itself does not serve /metrics.
func (e *Env) Scrape() *Response {
	e.T.Helper()
	rec := httptest.NewRecorder()
	e.Server.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		e.T.Fatalf("GET /metrics: status %d\n%s", rec.Code, rec.Body)
	}
	return &Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// Login logs in and returns the session token.
func (e *Env) Login(email, password string) string {
	e.T.Helper()
	r := e.Must(200, "POST", "/v1/auth/login", "", map[string]string{"email": email, "password": password})
	return r.JSON(e.T)["token"].(string)
}

// CreateUser creates a member user (as admin) and returns its id and a
// session token.
func (e *Env) CreateUser(email string) (id, token string) {
	e.T.Helper()
	r := e.Must(201, "POST", "/v1/users", e.Admin, map[string]string{"email": email, "password": "password-" + email})
	id = r.JSON(e.T)["user"].(map[string]any)["id"].(string)
	return id, e.Login(email, "password-"+email)
}

// CreateKey creates an API key with token's identity and returns its token.
func (e *Env) CreateKey(token, scope string, projectIDs ...string) string {
	e.T.Helper()
	body := map[string]any{"name": "key-" + scope, "scope": scope}
	if len(projectIDs) > 0 {
		body["project_ids"] = projectIDs
	}
	r := e.Must(201, "POST", "/v1/api-keys", token, body)
	return r.JSON(e.T)["token"].(string)
}

// CreateProject creates a project and returns its id.
func (e *Env) CreateProject(token, slug string) string {
	e.T.Helper()
	r := e.Must(201, "POST", "/v1/projects", token, map[string]string{"name": "Project " + slug, "slug": slug})
	return r.JSON(e.T)["project"].(map[string]any)["id"].(string)
}

// CreateSkill creates a skill in a project and returns its id.
func (e *Env) CreateSkill(token, projectID, slug string) string {
	e.T.Helper()
	r := e.Must(201, "POST", "/v1/projects/"+projectID+"/skills", token, map[string]string{"name": "Skill " + slug, "slug": slug, "description": "test skill"})
	return r.JSON(e.T)["skill"].(map[string]any)["id"].(string)
}

// CreatePrompt creates a prompt in a project and returns its id.
func (e *Env) CreatePrompt(token, projectID, slug string) string {
	e.T.Helper()
	r := e.Must(201, "POST", "/v1/projects/"+projectID+"/prompts", token, map[string]string{"name": "Prompt " + slug, "slug": slug, "description": "test prompt"})
	return r.JSON(e.T)["prompt"].(map[string]any)["id"].(string)
}

// SkillManifest is a valid SKILL.md for slug.
func SkillManifest(slug string) string {
	return "---\nname: " + slug + "\ndescription: A skill for tests.\n---\n# " + slug + "\n"
}

// RepoPath is the bare repository of an asset.
func (e *Env) RepoPath(kind quire.Kind, id string) string {
	e.T.Helper()
	a, err := e.Store.Asset(context.Background(), kind, id)
	if err != nil {
		e.T.Fatal(err)
	}
	return e.Store.RepoPath(a)
}

// ProjectReposIdle waits until the projects' repositories have every
// change queued so far (their views catch up after the answer).
func (e *Env) ProjectReposIdle() {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.App.ProjectReposIdle(ctx); err != nil {
		e.T.Fatalf("project repositories: %v", err)
	}
}

// Git runs the real git binary in dir and returns its trimmed output.
// A fsck holds the repository's repack lock, so the background repacker
// cannot move objects from loose files into a pack under it: git fsck
// lists the loose objects and packs once, and one moved in between would
// look missing.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	if len(args) > 0 && args[0] == "fsck" {
		defer holdRepackLock(t, dir)()
	}
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// MountTmpfs mounts a tmpfs of size (mount -o size=) on a new directory
// and unmounts it at the end of the test, or skips the test when this
// process may not mount: a small disk to fill, or to remount read-only.
func MountTmpfs(t testing.TB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// holdRepackLock takes the repack lock of the quire repository at dir
// (gitstore/odb's quire-repack.lock), waiting for a repack in progress,
// and returns its release; for any other directory it does nothing.
func holdRepackLock(t testing.TB, dir string) func() {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "objects")); err != nil {
		return func() {}
	}
	f, err := os.OpenFile(filepath.Join(dir, "quire-repack.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return func() {}
	}
	for {
		if err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		t.Fatalf("repack lock: %v", err)
	}
	return func() { f.Close() }
}
