package crashtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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
	if build.dir != "" {
		os.RemoveAll(build.dir)
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
	once sync.Once
	dir  string
	path string
	err  error
}

// quireBinary builds cmd/quire once per test process and returns its path.
// It is built without -race (a race-instrumented server answers a fraction
// of the writes in a trial, so each death would test little; the
// in-process tests cover data races) unless QUIRE_CRASH_RACE=1.
func quireBinary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			build.err = errors.New("no go tool to build quire with")
			return
		}
		dir, err := os.MkdirTemp("", "quire-crashtest-bin-")
		if err != nil {
			build.err = err
			return
		}
		build.dir = dir
		out := filepath.Join(dir, "quire")
		args := []string{"build", "-o", out}
		if os.Getenv("QUIRE_CRASH_RACE") == "1" {
			args = append(args, "-race")
		}
		args = append(args, "github.com/quire/quire/cmd/quire")
		b, err := exec.Command(goTool, args...).CombinedOutput()
		if err != nil {
			build.err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, b)
			return
		}
		build.path = out
	})
	if build.err != nil {
		t.Skipf("cannot build quire: %v", build.err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the git binary is required")
	}
	return build.path
}

// server is one quire serve process.
type server struct {
	cmd    *exec.Cmd
	URL    string
	logs   *syncBuffer
	exited chan struct{}
	state  *os.ProcessState
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
	cmd := exec.Command(args[0], args[1:]...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "QUIRE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "QUIRE_ADMIN_EMAIL="+adminEmail, "QUIRE_ADMIN_PASSWORD="+adminPassword)
	s := &server{cmd: cmd, logs: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout = s.logs
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		found := false
		for sc.Scan() {
			line := sc.Bytes()
			s.logs.Write(append(append([]byte(nil), line...), '\n'))
			if !found && bytes.Contains(line, []byte(`"quire started"`)) {
				var rec struct{ Addr string }
				if json.Unmarshal(line, &rec) == nil && rec.Addr != "" {
					found = true
					ready <- rec.Addr
				}
			}
		}
		io.Copy(io.Discard, stderr)
		cmd.Wait()
		s.state = cmd.ProcessState
		close(s.exited)
	}()
	if !wait {
		return s, nil
	}
	select {
	case addr := <-ready:
		s.URL = "http://" + addr
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("quire exited before listening (%v):\n%s", s.state, s.logs.Tail(4000))
	case <-time.After(60 * time.Second):
		s.kill()
		return nil, fmt.Errorf("quire did not start listening within 60s:\n%s", s.logs.Tail(4000))
	}
}

// kill sends SIGKILL and waits for the process to go.
func (s *server) kill() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// stop asks for a graceful shutdown (SIGTERM) and waits for it.
func (s *server) stop() error {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(60 * time.Second):
		s.kill()
		return errors.New("quire did not stop within 60s of SIGTERM")
	}
	if !s.state.Success() {
		return fmt.Errorf("quire exited with %v after SIGTERM:\n%s", s.state, s.logs.Tail(4000))
	}
	return nil
}

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

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Tail returns at most the last n bytes written.
func (b *syncBuffer) Tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

// Lines returns the lines written that contain sub.
func (b *syncBuffer) Lines(sub string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range strings.Split(b.buf.String(), "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}
