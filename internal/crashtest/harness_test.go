package crashtest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire/internal/cluster"
)

var (
	flagTrials = flag.Int("crash.trials", 0, "crash trials to run (default $QUIRE_CRASH_TRIALS, else 4)")
	flagSeed   = flag.Int64("crash.seed", 0, "random seed of the crash test (0: from the clock)")
	flagKeep   = flag.Bool("crash.keep", false, "keep the data roots of the crash test")
)

const (
	adminEmail    = "admin@example.com"
	adminPassword = "crash-test-password"
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if build.remove != nil {
		build.remove()
	}
	os.Exit(code)
}

// trials is how many crash trials to run.
func trials() int {
	if *flagTrials > 0 {
		return *flagTrials
	}
	if n, err := strconv.Atoi(os.Getenv("QUIRE_CRASH_TRIALS")); err == nil && n > 0 {
		return n
	}
	return 4
}

var build struct {
	once   sync.Once
	path   string
	remove func()
	err    error
}

// quireBinary builds cmd/quire once per test process and returns its path.
// It is built without -race (a race-instrumented server answers a fraction
// of the writes in a trial, so each death would test little; the
// in-process tests cover data races) unless QUIRE_CRASH_RACE=1.
func quireBinary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() { build.path, build.remove, build.err = cluster.Build(os.Getenv("QUIRE_CRASH_RACE") == "1") })
	if build.err != nil {
		t.Skipf("cannot build quire: %v", build.err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the git binary is required")
	}
	return build.path
}

// server is one quire serve process (internal/cluster's, as the HA
// test's nodes are).
type server struct {
	*cluster.Proc
	logs *cluster.Log
}

// startServer starts quire serve on root. With wait it returns once the
// server listens; otherwise at once (URL is then empty).
func startServer(t testing.TB, bin, root string, fsync, wait bool) (*server, error) {
	return startWrapped(t, nil, bin, root, fsync, wait)
}

// startWrapped is startServer with the command run under wrap (strace).
func startWrapped(t testing.TB, wrap []string, bin, root string, fsync, wait bool) (*server, error) {
	t.Helper()
	args := append(wrap, bin, "serve", "--data", root, "--addr", "127.0.0.1:0")
	if fsync {
		args = append(args, "--fsync")
	}
	p, err := cluster.Start(args, []string{"QUIRE_ADMIN_EMAIL=" + adminEmail, "QUIRE_ADMIN_PASSWORD=" + adminPassword}, wait)
	if p == nil {
		return nil, err
	}
	return &server{Proc: p, logs: p.Logs}, err
}

// kill sends SIGKILL and waits for the process to go.
func (s *server) kill() { s.Kill() }

// stop asks for a graceful shutdown (SIGTERM) and waits for it.
func (s *server) stop() error { return s.Stop() }

// client talks to one server with one credential.
type client struct {
	base  string
	token string
	hc    *http.Client
}

func newClient(base, token string) *client {
	return &client{base: base, token: token, hc: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64},
	}}
}

func (c *client) with(token string) *client {
	return &client{base: c.base, token: token, hc: c.hc}
}

func (c *client) close() { c.hc.CloseIdleConnections() }

// reply is an HTTP answer.
type reply struct {
	status int
	body   []byte
}

func (r *reply) decode(v any) error {
	if err := json.Unmarshal(r.body, v); err != nil {
		return fmt.Errorf("decode %d reply: %v: %.300s", r.status, err, r.body)
	}
	return nil
}

// errTransport wraps failures where no HTTP answer came back: the outcome
// of the request is unknown.
type errTransport struct{ err error }

func (e *errTransport) Error() string { return "no answer: " + e.err.Error() }

// call sends one request. A transport failure is *errTransport; 429 is
// retried after its Retry-After.
func (c *client) call(method, path string, body any) (*reply, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		var rd io.Reader
		if raw != nil {
			rd = bytes.NewReader(raw)
		}
		req, err := http.NewRequest(method, c.base+path, rd)
		if err != nil {
			return nil, err
		}
		if raw != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		res, err := c.hc.Do(req)
		if err != nil {
			return nil, &errTransport{err}
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return nil, &errTransport{err}
		}
		if res.StatusCode == http.StatusTooManyRequests && attempt < 20 {
			wait, _ := strconv.Atoi(res.Header.Get("Retry-After"))
			time.Sleep(min(time.Duration(wait)*time.Second+10*time.Millisecond, time.Second)) // honoring Retry-After, as clients must
			continue
		}
		return &reply{status: res.StatusCode, body: b}, nil
	}
}

// expect checks a reply's status, naming the request when it is wrong.
func expect(r *reply, want int, what string) error {
	if r.status != want {
		return fmt.Errorf("%s: status %d, want %d: %.500s", what, r.status, want, r.body)
	}
	return nil
}
