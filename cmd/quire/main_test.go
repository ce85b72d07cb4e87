package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quire/quire/internal/cluster"
	"golang.org/x/crypto/bcrypt"
)

// start runs a quire on a free port with data root dir; opts change its
// configuration first.
func start(t *testing.T, dir, redisURL string, opts ...func(*Config)) (*Main, *cluster.Log) {
	t.Helper()
	out := &cluster.Log{}
	m := NewMain(out)
	m.Config.Addr = "127.0.0.1:0"
	m.Config.Data = dir
	m.Config.Redis = redisURL
	m.Config.AdminEmail, m.Config.AdminPassword = "admin@example.com", "admin-password"
	m.Config.BcryptCost = bcrypt.MinCost
	for _, o := range opts {
		o(&m.Config)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, out
}

func call(t *testing.T, m *Main, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+m.Addr()+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func TestHealthAndReadiness(t *testing.T) {
	m, _ := start(t, t.TempDir(), "")
	if code, body := call(t, m, "GET", "/healthz", "", nil); code != 200 || body["status"] != "ok" {
		t.Fatalf("healthz %d %v", code, body)
	}
	if code, body := call(t, m, "GET", "/readyz", "", nil); code != 200 || body["status"] != "ready" {
		t.Fatalf("readyz %d %v", code, body)
	}
	// The data root going away makes the process unready, not unhealthy.
	if err := os.RemoveAll(m.store.Root()); err != nil {
		t.Fatal(err)
	}
	// The disk probe's answer is kept for a second: poll.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code, body := call(t, m, "GET", "/readyz", "", nil)
		if code == 503 && body["error"] == "data root not writable" && body["code"] == "unavailable" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz without a data root: %d %v", code, body)
		}
	}
	if code, _ := call(t, m, "GET", "/healthz", "", nil); code != 200 {
		t.Fatalf("healthz without a data root: %d", code)
	}
}

func TestReadinessWithRedisDown(t *testing.T) {
	// Nothing listens on port 1: Redis is down from the start.
	m, _ := start(t, t.TempDir(), "redis://127.0.0.1:1/0", func(c *Config) { c.MetricsAddr = "127.0.0.1:0" })
	if code, _ := call(t, m, "GET", "/healthz", "", nil); code != 200 {
		t.Fatalf("healthz %d", code)
	}
	code, body := call(t, m, "GET", "/readyz", "", nil)
	if code != 503 || body["error"] != "redis unreachable" || body["code"] != "unavailable" {
		t.Fatalf("readyz with Redis down: %d %v", code, body)
	}
	// Logins need Redis: 503, never 500.
	if code, _ := call(t, m, "POST", "/v1/auth/login", "", map[string]string{"email": "admin@example.com", "password": "admin-password"}); code != 503 {
		t.Fatalf("login with Redis down: %d", code)
	}
	// Metrics still answer, and count the Redis failures.
	res, err := http.Get("http://" + m.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !regexp.MustCompile(`(?m)^quire_redis_errors_total\{command="ping"\} [1-9]`).Match(b) {
		t.Fatalf("metrics with Redis down: %d\n%s", res.StatusCode, b)
	}
}

// TestShutdownFlushesUsage uses an API key, stops quire as SIGTERM would,
// and finds the key's last use in a new process on the same data root
// (whose embedded Redis starts empty).
func TestShutdownFlushesUsage(t *testing.T) {
	dir := t.TempDir()
	m, out := start(t, dir, "")
	_, login := call(t, m, "POST", "/v1/auth/login", "", map[string]string{"email": "admin@example.com", "password": "admin-password"})
	sess := login["token"].(string)
	_, created := call(t, m, "POST", "/v1/api-keys", sess, map[string]string{"name": "ci", "scope": "read"})
	key := created["token"].(string)
	if code, _ := call(t, m, "GET", "/v1/auth/me", key, nil); code != 200 {
		t.Fatal("key refused")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	log := out.String()
	for _, want := range []string{`"msg":"quire started"`, `"ui":"http://127.0.0.1:`, `"msg":"created admin user","email":"admin@example.com"`, `"msg":"usage flushed"`, `"msg":"quire stopped"`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}

	m2, _ := start(t, dir, "")
	// The session survived too (embedded Redis snapshot).
	_, keys := call(t, m2, "GET", "/v1/api-keys", sess, nil)
	list, _ := keys["api_keys"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["last_used_at"] == nil {
		t.Fatalf("keys after restart: %v", keys)
	}
}

func TestServeWaitsForSignal(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	m, out := start(t, t.TempDir(), "")
	done := make(chan error, 1)
	go func() { done <- m.Wait(ctx) }()
	cancel(errors.New("terminated"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return")
	}
	if !strings.Contains(out.String(), `"msg":"shutting down","reason":"terminated"`) {
		t.Fatalf("no shutdown line:\n%s", out.String())
	}
	if _, err := http.Get("http://" + m.Addr() + "/healthz"); err == nil {
		t.Fatal("still serving after shutdown")
	}
}

func TestServerTimeouts(t *testing.T) {
	m, _ := start(t, t.TempDir(), "")
	h := m.http
	if h.ReadHeaderTimeout <= 0 || h.IdleTimeout <= 0 || h.MaxHeaderBytes <= 0 {
		t.Fatalf("timeouts not all set: read header %s, idle %s, max header bytes %d", h.ReadHeaderTimeout, h.IdleTimeout, h.MaxHeaderBytes)
	}
	// No fixed limit on a whole request or response, which would cut long
	// pushes and clones: bodies and writes must make progress instead
	// (internal/netguard), and both deadlines are on by default.
	if h.ReadTimeout != 0 || h.WriteTimeout != 0 || m.Config.Timeouts.Body <= 0 || m.Config.Timeouts.BodyMinRate <= 0 || m.Config.Timeouts.Write <= 0 {
		t.Fatalf("read timeout %s, write timeout %s, progress deadlines %+v", h.ReadTimeout, h.WriteTimeout, m.Config.Timeouts)
	}
	if h.ReadHeaderTimeout > 30*time.Second {
		t.Fatalf("ReadHeaderTimeout %s lets slow clients hold connections", h.ReadHeaderTimeout)
	}
}

// TestServeHelp checks that --help documents every flag with its QUIRE_*
// variable, and that the variables work.
func TestServeHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"serve", "--help"}, &stdout, &stderr)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run --help: %v", err)
	}
	help := stderr.String()
	flagLine := regexp.MustCompile(`(?m)^  -([a-z-]+)`)
	found := flagLine.FindAllStringSubmatch(help, -1)
	want := []string{"addr", "data", "debug-addr", "fsync", "log-level", "redis", "redis-prefix", "redis-sentinel-master", "redis-sentinel-addrs", "redis-cluster", "session-ttl", "shutdown-timeout", "usage-flush",
		"rate-limit", "login-limit", "login-address-limit", "gc-floor", "metrics-addr", "max-conns", "max-conns-per-ip",
		"read-header-timeout", "body-timeout", "body-min-rate", "write-timeout", "idle-timeout", "trusted-proxies",
		"webhook-allow-private", "webhook-retry-schedule", "webhook-timeout", "event-stream-max", "llm", "llm-default", "llm-concurrency"}
	got := map[string]bool{}
	for _, f := range found {
		got[f[1]] = true
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("--help does not list -%s", w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("--help lists %d flags, the test knows %d: update it and the docs", len(got), len(want))
	}
	// Each flag's entry (its line and the usage under it) names its variable.
	entries := flagLine.Split(help, -1)[1:]
	for i, f := range found {
		env := "$QUIRE_" + strings.ToUpper(strings.ReplaceAll(f[1], "-", "_"))
		if !strings.Contains(entries[i], env) {
			t.Errorf("-%s does not name %s:%s", f[1], env, entries[i])
		}
	}
	for _, v := range []string{"QUIRE_ADMIN_EMAIL", "QUIRE_ADMIN_PASSWORD", "QUIRE_REDIS_PASSWORD", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if !strings.Contains(help, v) {
			t.Errorf("--help does not mention %s", v)
		}
	}

	t.Setenv("QUIRE_USAGE_FLUSH", "5s")
	t.Setenv("QUIRE_SHUTDOWN_TIMEOUT", "7s")
	t.Setenv("QUIRE_ADDR", "127.0.0.1:9999")
	t.Setenv("QUIRE_DEBUG_ADDR", "127.0.0.1:6060")
	t.Setenv("QUIRE_GC_FLOOR", "32")
	m := NewMain(io.Discard)
	if err := m.ParseFlags([]string{"--shutdown-timeout", "9s"}); err != nil {
		t.Fatal(err)
	}
	if m.Config.UsageFlush != 5*time.Second || m.Config.ShutdownTimeout != 9*time.Second || m.Config.Addr != "127.0.0.1:9999" || m.Config.DebugAddr != "127.0.0.1:6060" || m.Config.GCFloorMiB != 32 {
		t.Fatalf("config from environment and flags: %+v", m.Config)
	}
	t.Setenv("QUIRE_MAX_CONNS_PER_IP", "10")
	t.Setenv("QUIRE_BODY_MIN_RATE", "512")
	t.Setenv("QUIRE_READ_HEADER_TIMEOUT", "3s")
	t.Setenv("QUIRE_METRICS_ADDR", "127.0.0.1:9090")
	t.Setenv("QUIRE_EVENT_STREAM_MAX", "10m")
	m = NewMain(io.Discard)
	if err := m.ParseFlags([]string{"--max-conns", "500", "--idle-timeout", "20s"}); err != nil {
		t.Fatal(err)
	}
	if c := m.Config; c.MaxConnsPerIP != 10 || c.Timeouts.BodyMinRate != 512 || c.Timeouts.ReadHeader != 3*time.Second ||
		c.MetricsAddr != "127.0.0.1:9090" || c.Webhooks.StreamMax != 10*time.Minute || c.MaxConns != 500 || c.Timeouts.Idle != 20*time.Second || c.Timeouts.Body != 20*time.Second {
		t.Fatalf("limits from environment and flags: %+v", c)
	}
	for env, bad := range map[string]string{"QUIRE_USAGE_FLUSH": "soon", "QUIRE_MAX_CONNS": "many", "QUIRE_BODY_TIMEOUT": "1", "QUIRE_EVENT_STREAM_MAX": "forever"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, bad)
			if err := NewMain(io.Discard).ParseFlags(nil); err == nil || !strings.Contains(err.Error(), env) {
				t.Fatalf("bad %s: %v", env, err)
			}
		})
	}
}

func TestDebugListener(t *testing.T) {
	out := &cluster.Log{}
	m := NewMain(out)
	m.Config.Addr, m.Config.DebugAddr, m.Config.Data = "127.0.0.1:0", "127.0.0.1:0", t.TempDir()
	m.Config.BcryptCost = bcrypt.MinCost
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	get := func(url string) (int, string) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("http://" + m.debug.Addr + "/debug/pprof/"); code != 200 || !strings.Contains(body, "goroutine") {
		t.Fatalf("pprof index on the debug listener: %d %.200s", code, body)
	}
	if code, body := get("http://" + m.Addr() + "/debug/pprof/"); code != 404 {
		t.Fatalf("pprof index on the API listener: %d %.200s", code, body)
	}
}

func TestDebugListenerRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:6060"} {
		m := NewMain(&cluster.Log{})
		m.Config.Addr, m.Config.DebugAddr, m.Config.Data = "127.0.0.1:0", addr, t.TempDir()
		m.Config.BcryptCost = bcrypt.MinCost
		err := m.Run(context.Background())
		m.Close()
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("debug address %q: Run error %v, want a refusal", addr, err)
		}
	}
}

func TestUIURL(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8080":    "http://127.0.0.1:8080/ui/",
		":8080":             "http://127.0.0.1:8080/ui/",
		"0.0.0.0:9000":      "http://127.0.0.1:9000/ui/",
		"[::]:9000":         "http://127.0.0.1:9000/ui/",
		"[::1]:9000":        "http://[::1]:9000/ui/",
		"quire.internal:80": "http://quire.internal:80/ui/",
		"nonsense":          "",
	} {
		if got := uiURL(addr); got != want {
			t.Errorf("uiURL(%q) = %q, want %q", addr, got, want)
		}
	}
}
