// Package redistest starts real Redis servers for tests, each a private
// redis-server process on a spare loopback port in the test's temporary
// directory: a single server, a replica, Sentinels (redis-server
// --sentinel) and a Cluster of primaries. Everything started is killed
// when the test ends; nothing touches a Redis the test did not start.
// Tests that need it skip when the redis-server binary is missing.
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// TB is what redistest needs of a test: testing.TB has it, and so does
// cmd/quire-bench's stand-in, which starts Redis outside go test.
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Skip(args ...any)
	TempDir() string
}

// Binary returns the redis-server binary, or skips t without one.
func Binary(t TB) string {
	t.Helper()
	p, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed (.ci/run installs it)")
	}
	return p
}

// Server is one redis-server process (a data server or a Sentinel).
type Server struct {
	Addr string
	Port int
	Dir  string

	t    TB
	cmd  *exec.Cmd
	args []string
	done chan struct{}

	client *redis.Client
}

// StartServer starts a data server with args added to its command line
// (e.g. "--replicaof", "127.0.0.1 6380").
func StartServer(t TB, args ...string) *Server {
	t.Helper()
	return start(t, false, args)
}

func start(t TB, sentinel bool, extra []string) *Server {
	t.Helper()
	bin := Binary(t)
	var last error
	for range 5 { // a port picked free may be taken before redis binds it
		port := freePort(t)
		dir := filepath.Join(t.TempDir(), strconv.Itoa(port))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var args []string
		if sentinel {
			conf := filepath.Join(dir, "sentinel.conf")
			body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\n%s\n", port, dir, strings.Join(extra, "\n"))
			if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			args = []string{conf, "--sentinel"}
		} else {
			args = append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
				"--save", "", "--appendonly", "no", "--protected-mode", "no"}, extra...)
		}
		s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, Dir: dir, t: t, args: args}
		if last = s.launch(bin); last == nil {
			t.Cleanup(s.Kill)
			return s
		}
	}
	t.Fatalf("start redis-server: %v", last)
	return nil
}

func (s *Server) launch(bin string) error {
	log, err := os.OpenFile(filepath.Join(s.Dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(bin, s.args...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("redis-server on %s exited: %s", s.Addr, s.Log())
		default:
		}
		c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
		err := c.Ping(context.Background()).Err()
		c.Close()
		if err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Kill()
	return fmt.Errorf("redis-server on %s did not answer in 10s: %s", s.Addr, s.Log())
}

// Log is what the server wrote to its log.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	return string(b)
}

// Kill ends the server with SIGKILL, as a crashed machine would, and
// waits for it to go.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// Pause stops the server (SIGSTOP): it keeps its connections but answers
// nothing, as a hung machine would. Resume continues it.
func (s *Server) Pause()  { s.cmd.Process.Signal(syscall.SIGSTOP) }
func (s *Server) Resume() { s.cmd.Process.Signal(syscall.SIGCONT) }

// Restart starts a killed server again on the same port and directory.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.launch(Binary(s.t)); err != nil {
		s.t.Fatal(err)
	}
}

// Client is a plain client of this one server (one per server, closed
// when the test ends).
func (s *Server) Client() *redis.Client {
	if s.client == nil {
		s.client = redis.NewClient(&redis.Options{Addr: s.Addr, DialTimeout: time.Second, MaxRetries: -1})
		s.t.Cleanup(func() { s.client.Close() })
	}
	return s.client
}

func freePort(t TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Replicated is a primary, its replicas and the Sentinels watching it.
type Replicated struct {
	Master    string
	Primary   *Server
	Replicas  []*Server
	Sentinels []*Server
}

// SentinelAddrs are the Sentinels' addresses.
func (r *Replicated) SentinelAddrs() []string {
	var out []string
	for _, s := range r.Sentinels {
		out = append(out, s.Addr)
	}
	return out
}

// StartSentinel starts a primary named master, replicas replicas of it
// and sentinels Sentinels (quorum: a majority of them) that declare a
// primary down after downAfter without an answer. It returns once the
// replicas are in sync and every Sentinel knows the replicas and the
// other Sentinels, so a kill of the primary can fail over at once.
func StartSentinel(t TB, master string, replicas, sentinels int, downAfter time.Duration) *Replicated {
	t.Helper()
	r := &Replicated{Master: master, Primary: StartServer(t)}
	for range replicas {
		r.Replicas = append(r.Replicas, StartServer(t, "--replicaof", "127.0.0.1", strconv.Itoa(r.Primary.Port)))
	}
	quorum := sentinels/2 + 1
	for range sentinels {
		r.Sentinels = append(r.Sentinels, start(t, true, []string{
			fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d %d", master, r.Primary.Port, quorum),
			fmt.Sprintf("sentinel down-after-milliseconds %s %d", master, downAfter.Milliseconds()),
			fmt.Sprintf("sentinel failover-timeout %s 10000", master),
			fmt.Sprintf("sentinel parallel-syncs %s 1", master),
		}))
	}
	ctx := context.Background()
	WaitFor(t, 30*time.Second, "replicas in sync", func() bool {
		info, err := r.Primary.Client().Info(ctx, "replication").Result()
		return err == nil && strings.Count(info, "state=online") == replicas
	})
	WaitFor(t, 30*time.Second, "Sentinels know each other and the replicas", func() bool {
		for _, s := range r.Sentinels {
			m, err := s.Client().Do(ctx, "SENTINEL", "MASTER", master).Result()
			if err != nil {
				return false
			}
			f := fields(m)
			if f["num-other-sentinels"] != strconv.Itoa(sentinels-1) || f["num-slaves"] != strconv.Itoa(replicas) {
				return false
			}
		}
		return true
	})
	return r
}

// PrimaryAddr is the primary's address as the Sentinels name it now.
func (r *Replicated) PrimaryAddr(t TB) string {
	t.Helper()
	for _, s := range r.Sentinels {
		a, err := s.Client().Do(context.Background(), "SENTINEL", "GET-MASTER-ADDR-BY-NAME", r.Master).StringSlice()
		if err == nil && len(a) == 2 {
			return a[0] + ":" + a[1]
		}
	}
	return ""
}

// fields reads a flat name/value reply (RESP2 array or RESP3 map).
func fields(v any) map[string]string {
	out := map[string]string{}
	switch x := v.(type) {
	case []any:
		for i := 0; i+1 < len(x); i += 2 {
			out[fmt.Sprint(x[i])] = fmt.Sprint(x[i+1])
		}
	case map[any]any:
		for k, v := range x {
			out[fmt.Sprint(k)] = fmt.Sprint(v)
		}
	}
	return out
}

// Cluster is a Redis Cluster of primaries only, the slots split evenly.
type Cluster struct {
	Nodes []*Server
}

// Addrs are the nodes' addresses.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, n := range c.Nodes {
		out = append(out, n.Addr)
	}
	return out
}

// StartCluster starts n cluster-enabled servers, gives each a share of
// the 16,384 slots, introduces them and waits for every node to report
// the cluster ok (what redis-cli --cluster create does, without it).
func StartCluster(t TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{}
	for range n {
		c.Nodes = append(c.Nodes, StartServer(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000"))
	}
	ctx := context.Background()
	per := 16384 / n
	for i, node := range c.Nodes {
		lo, hi := i*per, (i+1)*per-1
		if i == n-1 {
			hi = 16383
		}
		if err := node.Client().Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			t.Fatalf("cluster addslotsrange: %v", err)
		}
	}
	for _, node := range c.Nodes[1:] {
		if err := c.Nodes[0].Client().ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(node.Port)).Err(); err != nil {
			t.Fatalf("cluster meet: %v", err)
		}
	}
	WaitFor(t, 30*time.Second, "cluster state ok on every node", func() bool {
		for _, node := range c.Nodes {
			info, err := node.Client().ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(n)) {
				return false
			}
		}
		return true
	})
	return c
}

// WaitFor polls cond until it holds, failing t after within.
func WaitFor(t TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// LogLines returns the lines of a server's log holding substr, for a
// failing test's message.
func (s *Server) LogLines(substr string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s.Log()))
	for sc.Scan() {
		if strings.Contains(sc.Text(), substr) {
			out = append(out, sc.Text())
		}
	}
	return out
}
