package hatest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const (
	adminEmail    = "admin@example.com"
	adminPassword = "ha-test-password"
)

var build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

// quireBinary builds cmd/quire once per test process.
func quireBinary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		dir, err := os.MkdirTemp("", "quire-hatest-bin-")
		if err != nil {
			build.err = err
			return
		}
		build.dir = dir
		out := filepath.Join(dir, "quire")
		b, err := exec.Command("go", "build", "-o", out, "github.com/quire/quire/cmd/quire").CombinedOutput()
		if err != nil {
			build.err = fmt.Errorf("go build: %v\n%s", err, b)
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

// node is one quire serve process; a restart keeps its data path and
// arguments and takes a new port.
type node struct {
	name string
	args []string
	env  []string

	mu     sync.Mutex
	url    string
	cmd    *exec.Cmd
	logs   *logBuffer
	exited chan struct{}
	up     atomic.Bool // the balancer sends it requests
}

func newNode(name, bin string, args, env []string) *node {
	return &node{name: name, args: append([]string{bin, "serve", "--addr", "127.0.0.1:0"}, args...), env: env, logs: &logBuffer{}}
}

// start runs the process and returns once it listens.
func (n *node) start() error {
	cmd := exec.Command(n.args[0], n.args[1:]...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "QUIRE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, n.env...)
	cmd.Stdout = n.logs
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		found := false
		for sc.Scan() {
			line := sc.Bytes()
			n.logs.Write(append(append([]byte(nil), line...), '\n'))
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
		close(exited)
	}()
	select {
	case addr := <-ready:
		n.mu.Lock()
		n.url, n.cmd, n.exited = "http://"+addr, cmd, exited
		n.mu.Unlock()
		n.up.Store(true)
		return nil
	case <-exited:
		return fmt.Errorf("%s exited before listening:\n%s", n.name, n.logs.tail(4000))
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		return fmt.Errorf("%s did not listen within 60s:\n%s", n.name, n.logs.tail(4000))
	}
}

// kill sends SIGKILL and waits for the process to go.
func (n *node) kill() {
	n.up.Store(false)
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

func (n *node) base() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.url
}

// logBuffer keeps a process's output.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// balancer sends each request to the next node that is up, round robin.
// A refused connection marks the node down and the request goes to the
// next one, as a load balancer's passive health check and retry do; a
// request that was sent and got no answer is not retried (it may have
// been applied) and is reported as such.
type balancer struct {
	nodes []*node
	next  atomic.Uint64
	hc    *http.Client
}

func newBalancer(nodes []*node) *balancer {
	return &balancer{nodes: nodes, hc: &http.Client{
		Timeout:   20 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 16},
	}}
}

// reply is an answer, or why there was none.
type reply struct {
	status int
	body   []byte
	node   string
	// lost is set when the request was sent and no answer came: its
	// outcome is unknown.
	lost error
}

func (r reply) String() string {
	if r.lost != nil {
		return fmt.Sprintf("no answer from %s: %v", r.node, r.lost)
	}
	return fmt.Sprintf("%d from %s: %.200s", r.status, r.node, r.body)
}

func (b *balancer) do(method, path, token string, body any) reply {
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	for range 2 * len(b.nodes) {
		i := b.next.Add(1) % uint64(len(b.nodes))
		n := b.nodes[i]
		if !n.up.Load() {
			continue
		}
		r := b.send(n, method, path, token, raw)
		if r.lost != nil && refused(r.lost) {
			n.up.Store(false)
			continue
		}
		return r
	}
	return reply{lost: errors.New("no node up"), node: "-"}
}

// at sends to one node, whatever the balancer thinks of it.
func (b *balancer) at(n *node, method, path, token string, body any) reply {
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	return b.send(n, method, path, token, raw)
}

func (b *balancer) send(n *node, method, path, token string, raw []byte) reply {
	var rd io.Reader
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, n.base()+path, rd)
	if err != nil {
		return reply{lost: err, node: n.name}
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := b.hc.Do(req)
	if err != nil {
		return reply{lost: err, node: n.name}
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		return reply{lost: err, node: n.name}
	}
	return reply{status: res.StatusCode, body: out, node: n.name}
}

// refused reports a connection that was never made: nothing was sent.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

func decode(t testing.TB, r reply, want int, v any) {
	t.Helper()
	if r.lost != nil || r.status != want {
		t.Fatalf("want %d: %s", want, r)
	}
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			t.Fatalf("decode: %v: %s", err, r.body)
		}
	}
}

// gitOut runs git in dir.
func gitOut(dir string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	return string(out), err
}

// findRepos lists every bare repository under root.
func findRepos(root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasSuffix(p, ".git") {
			if _, err := os.Stat(filepath.Join(p, "HEAD")); err == nil {
				out = append(out, p)
				return filepath.SkipDir
			}
		}
		return nil
	})
	return out
}
