// Package cluster runs quire serve processes for the tests and the
// benchmark that need real ones (internal/crashtest, internal/hatest,
// cmd/quire-bench's HA section): it builds cmd/quire, starts a process
// and waits until it listens, keeps its log, kills and restarts it, and
// spreads requests over several nodes round robin as a load balancer
// does. One copy of that code, where each harness had its own.
package cluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Build builds cmd/quire into a new temporary directory (with the race
// detector when race is set) and returns the binary and a function that
// removes it.
func Build(race bool) (bin string, remove func(), err error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", nil, errors.New("no go tool to build quire with")
	}
	dir, err := os.MkdirTemp("", "quire-cluster-bin-")
	if err != nil {
		return "", nil, err
	}
	remove = func() { os.RemoveAll(dir) }
	bin = filepath.Join(dir, "quire")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	args = append(args, "github.com/quire/quire/cmd/quire")
	if b, err := exec.Command(goTool, args...).CombinedOutput(); err != nil {
		remove()
		return "", nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return bin, remove, nil
}

// Proc is one quire serve process.
type Proc struct {
	// URL is http://host:port once the process listens.
	URL  string
	Logs *Log
	// Exited is closed when the process has exited; State is then set.
	Exited chan struct{}
	State  *os.ProcessState

	cmd   *exec.Cmd
	ready chan string
}

// Start runs args (a quire binary, "serve" and its flags, maybe behind a
// wrapper such as strace) with the environment of this process less its
// QUIRE_ variables, plus env. With wait it returns once the process
// listens (it logs "quire started" with its address); otherwise at once,
// and Wait does it later.
func Start(args, env []string, wait bool) (*Proc, error) {
	return start(args, env, wait, &Log{})
}

// start is Start writing the process's output to logs.
func start(args, env []string, wait bool, logs *Log) (*Proc, error) {
	cmd := exec.Command(args[0], args[1:]...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "QUIRE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	p := &Proc{cmd: cmd, Logs: logs, Exited: make(chan struct{}), ready: make(chan string, 1)}
	cmd.Stdout = p.Logs
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		found := false
		for sc.Scan() {
			line := sc.Bytes()
			p.Logs.Write(append(append([]byte(nil), line...), '\n'))
			if !found && bytes.Contains(line, []byte(`"quire started"`)) {
				var rec struct{ Addr string }
				if json.Unmarshal(line, &rec) == nil && rec.Addr != "" {
					found = true
					p.ready <- rec.Addr
				}
			}
		}
		io.Copy(io.Discard, stderr)
		cmd.Wait()
		p.State = cmd.ProcessState
		close(p.Exited)
	}()
	if !wait {
		return p, nil
	}
	return p, p.Wait(60 * time.Second)
}

// Wait returns once the process listens, setting URL; an error if it
// exits first or within passes (then it is killed).
func (p *Proc) Wait(within time.Duration) error {
	select {
	case addr := <-p.ready:
		p.URL = "http://" + addr
		return nil
	case <-p.Exited:
		return fmt.Errorf("quire exited before listening (%v):\n%s", p.State, p.Logs.Tail(4000))
	case <-time.After(within):
		p.Kill()
		return fmt.Errorf("quire did not listen within %s:\n%s", within, p.Logs.Tail(4000))
	}
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Kill sends SIGKILL and waits for the process to go.
func (p *Proc) Kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.Exited
}

// Stop asks for a graceful shutdown (SIGTERM) and waits for it: an error
// if it takes over a minute or the exit status is not 0.
func (p *Proc) Stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.Exited:
	case <-time.After(60 * time.Second):
		p.Kill()
		return errors.New("quire did not stop within 60s of SIGTERM")
	}
	if !p.State.Success() {
		return fmt.Errorf("quire exited with %v after SIGTERM:\n%s", p.State, p.Logs.Tail(4000))
	}
	return nil
}

// Log is a process's output, safe for concurrent use.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Tail returns at most the last n bytes written.
func (l *Log) Tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.buf.String()
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Lines returns the lines written that contain sub.
func (l *Log) Lines(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}
