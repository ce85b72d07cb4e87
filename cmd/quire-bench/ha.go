package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quire/quire/internal/cluster"
	"github.com/quire/quire/internal/redistest"
)

// The HA section (docs/deployment.md): quire serve processes on one data
// root behind a round-robin balancer (internal/cluster, the one the HA
// test uses), throughput with 1, 2 and 3 of them, then a failover under
// load: a node SIGKILLed and restarted, the Redis primary SIGKILLed and a
// replica promoted by Sentinel.

const (
	haEmail    = "admin@example.com"
	haPassword = "ha-bench-password"
	// haDownAfter is Sentinel's down-after-milliseconds, as in
	// internal/hatest and docs/deployment.md.
	haDownAfter = 1500 * time.Millisecond
	// haMaxWindow is the bound on the failover window.
	haMaxWindow = 15 * time.Second
)

func haSection(ctx context.Context, c *config, r *report) error {
	bin, remove, err := cluster.Build(false)
	if err != nil {
		return err
	}
	defer remove()
	return withTB(func(tb *benchTB) error {
		per, load := 5*time.Second, 20*time.Second
		if c.writeDur < time.Second { // -quick
			per, load = 300*time.Millisecond, 8*time.Second
		}
		rates, err := haThroughput(tb, bin, per)
		if err != nil {
			return err
		}
		fo, err := haFailover(tb, bin, load)
		if err != nil {
			return err
		}
		r.section("High availability", fmt.Sprintf(`
Three quire serve processes on one data root (each through a path of its
own, a symlink) behind a round-robin client that moves to the next node
when a connection is refused, as a load balancer does (internal/cluster,
shared with internal/hatest). First throughput: 8 clients for %s per
figure, with 1, 2 and 3 nodes taking requests, on one Redis. All the
processes, the clients and Redis share this one machine's cores, so more
nodes do not add throughput here (they share the same CPUs and add
coordination); the point of several nodes is availability, and across
hosts each node brings its own CPUs.`, per))
		var rows []row
		for _, op := range []string{"render", "upsert"} {
			base := rates[op][0]
			for k, rate := range rates[op] {
				rows = append(rows, row{figure: fmt.Sprintf("%ss/s, %d node(s)", op, k+1), quire: fmt.Sprintf("%.0f", rate), baseline: fmt.Sprintf("%.0f", base), ratio: rate / base})
			}
		}
		r.table("1 node", rows)
		r.text(fmt.Sprintf(`Failover under load: three nodes on Redis with Sentinel (a primary, a
replica, three Sentinels, down-after-milliseconds %d), %s of mixed load
(2 upserters, a renderer and a session check, GET /v1/auth/me with a
login session, which lives in Redis). At %.0f%% of it a node is SIGKILLed
and restarted; at %.0f%% the Redis primary is SIGKILLed and Sentinel
promotes the replica (%.1f s after the kill here). The window is from the
first to the last failed request after the primary died; the bound is
the issue's %s.`, haDownAfter.Milliseconds(), load, fo.nodeAt*100, fo.redisAt*100, fo.promoted.Seconds(), haMaxWindow))
		r.table("bound", []row{
			{figure: "Redis failover: window of client errors", quire: fmt.Sprintf("%.2f s", fo.window.Seconds()), baseline: fmt.Sprintf("%.0f s", haMaxWindow.Seconds()),
				ratio: fo.window.Seconds() / haMaxWindow.Seconds(), goal: "≤ 1.00x", pass: fo.window <= haMaxWindow},
		})
		r.text(fmt.Sprintf("Requests: %d, of which failed: %d around the node's restart, %d around the Redis failover (%s), %d otherwise.",
			fo.total, fo.nodeErrs, fo.redisErrs, fo.byOp, fo.otherErrs))
		return nil
	})
}

// haNodes makes n nodes of bin on one data root under dir, each through
// a symlink of its own, with args and the admin's credentials.
func haNodes(dir, bin string, n int, args ...string) ([]*cluster.Node, error) {
	root := filepath.Join(dir, "data")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	var nodes []*cluster.Node
	for i := range n {
		view := filepath.Join(dir, fmt.Sprintf("node%d-view", i))
		if err := os.Symlink(root, view); err != nil {
			return nil, err
		}
		nodes = append(nodes, cluster.NewNode(fmt.Sprintf("node%d", i), bin,
			append([]string{"--data", view, "--rate-limit", "0", "--login-limit", "0", "--login-address-limit", "0"}, args...),
			[]string{"QUIRE_ADMIN_EMAIL=" + haEmail, "QUIRE_ADMIN_PASSWORD=" + haPassword}))
	}
	return nodes, nil
}

// haState is what the load works on.
type haState struct {
	session, key string
	skills       []string // each with draft 1
	prompt       string   // published
}

func haSetup(lb *cluster.Balancer) (*haState, error) {
	s := &haState{}
	call := func(method, path, token string, body any, want int, out any) error {
		rep := lb.Do(method, path, token, body)
		if rep.Lost != nil || rep.Status != want {
			return fmt.Errorf("%s %s: want %d: %s", method, path, want, rep)
		}
		if out != nil {
			return json.Unmarshal(rep.Body, out)
		}
		return nil
	}
	var login, key struct{ Token string }
	var p struct{ Project struct{ ID string } }
	var pr struct{ Prompt struct{ ID string } }
	if err := call("POST", "/v1/auth/login", "", map[string]string{"email": haEmail, "password": haPassword}, 200, &login); err != nil {
		return nil, err
	}
	if err := call("POST", "/v1/api-keys", login.Token, map[string]string{"name": "bench", "scope": "admin"}, 201, &key); err != nil {
		return nil, err
	}
	s.session, s.key = login.Token, key.Token
	if err := call("POST", "/v1/projects", s.key, map[string]string{"name": "HA", "slug": "ha"}, 201, &p); err != nil {
		return nil, err
	}
	for i := range 2 {
		var sk struct{ Skill struct{ ID string } }
		slug := fmt.Sprintf("skill-%d", i)
		if err := call("POST", "/v1/projects/"+p.Project.ID+"/skills", s.key, map[string]string{"name": slug, "slug": slug}, 201, &sk); err != nil {
			return nil, err
		}
		if err := call("POST", "/v1/skills/"+sk.Skill.ID+"/versions", s.key, nil, 201, nil); err != nil {
			return nil, err
		}
		s.skills = append(s.skills, sk.Skill.ID)
	}
	if err := call("POST", "/v1/projects/"+p.Project.ID+"/prompts", s.key, map[string]string{"name": "Greeting"}, 201, &pr); err != nil {
		return nil, err
	}
	s.prompt = pr.Prompt.ID
	if err := call("POST", "/v1/prompts/"+s.prompt+"/versions", s.key, map[string]string{"template": "Hello {{name}}"}, 201, nil); err != nil {
		return nil, err
	}
	return s, call("POST", "/v1/prompts/"+s.prompt+"/versions/1/publish", s.key, nil, 200, nil)
}

// haOp sends one request of a kind: render, upsert (worker w's i-th) or
// session; ok when it got the answer it wants.
func haOp(lb *cluster.Balancer, s *haState, op string, w, i int) bool {
	var rep cluster.Reply
	switch op {
	case "render":
		rep = lb.Do("POST", "/v1/prompts/"+s.prompt+"/render", s.key, map[string]any{"variables": map[string]string{"name": "Ada"}})
	case "upsert":
		rep = lb.Do("POST", "/v1/skills/"+s.skills[w%len(s.skills)]+"/versions/1/files", s.key,
			map[string]string{"file_path": fmt.Sprintf("t/w%d-%02d.txt", w, i%40), "content": fmt.Sprint(i)})
	case "session":
		rep = lb.Do("GET", "/v1/auth/me", s.session, nil)
	}
	return rep.Lost == nil && rep.Status == 200
}

// haThroughput measures renders and upserts per second with 1, 2 and 3
// nodes taking requests, on one Redis.
func haThroughput(tb *benchTB, bin string, per time.Duration) (map[string][]float64, error) {
	rs := redistest.StartServer(tb)
	nodes, lb, s, err := haCluster(tb, bin, "--redis", "redis://"+rs.Addr, "--redis-prefix", "bench-tput:")
	if err != nil {
		return nil, err
	}
	defer lb.Close()
	const clients = 8
	rates := map[string][]float64{}
	for k := 1; k <= len(nodes); k++ {
		for i, n := range nodes {
			n.Up.Store(i < k)
		}
		for _, op := range []string{"render", "upsert"} {
			var done, failed atomic.Int64
			stop := time.Now().Add(per)
			var wg sync.WaitGroup
			for w := range clients {
				wg.Go(func() {
					for i := 0; time.Now().Before(stop); i++ {
						if haOp(lb, s, op, w, i) {
							done.Add(1)
						} else {
							failed.Add(1)
						}
					}
				})
			}
			wg.Wait()
			if failed.Load() > 0 {
				return nil, fmt.Errorf("%d node(s), %s: %d requests failed", k, op, failed.Load())
			}
			rates[op] = append(rates[op], float64(done.Load())/per.Seconds())
		}
	}
	return rates, nil
}

// haCluster starts three nodes of bin with args behind a balancer (the
// caller closes it) and sets up what the load works on.
func haCluster(tb *benchTB, bin string, args ...string) ([]*cluster.Node, *cluster.Balancer, *haState, error) {
	nodes, err := haNodes(tb.TempDir(), bin, 3, args...)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, n := range nodes {
		tb.Cleanup(n.Kill)
		if err := n.Start(); err != nil {
			return nil, nil, nil, err
		}
	}
	lb := cluster.NewBalancer(nodes)
	s, err := haSetup(lb)
	if err != nil {
		lb.Close()
		return nil, nil, nil, err
	}
	return nodes, lb, s, nil
}

// failover is what the failover run saw.
type failover struct {
	nodeAt, redisAt                float64       // when, as a fraction of the load
	promoted                       time.Duration // from the primary's death to Sentinel's promotion
	window                         time.Duration // first to last error after the primary died
	total                          int64
	nodeErrs, redisErrs, otherErrs int
	byOp                           string
}

// haFailover runs the mixed load for d on three nodes with Sentinel and
// kills a node, then the Redis primary.
func haFailover(tb *benchTB, bin string, d time.Duration) (*failover, error) {
	rd := redistest.StartSentinel(tb, "quire", 1, 3, haDownAfter)
	nodes, lb, s, err := haCluster(tb, bin,
		"--redis-sentinel-master", "quire", "--redis-sentinel-addrs", strings.Join(rd.SentinelAddrs(), ","), "--redis-prefix", "bench-ha:")
	if err != nil {
		return nil, err
	}
	defer lb.Close()
	type failure struct {
		at time.Time
		op string
	}
	var (
		mu       sync.Mutex
		failures []failure
		total    atomic.Int64
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	for w, op := range []string{"upsert", "upsert", "render", "session"} {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				ok := haOp(lb, s, op, w, i)
				total.Add(1)
				if !ok {
					mu.Lock()
					failures = append(failures, failure{time.Now(), op})
					mu.Unlock()
				}
				if op == "session" || op == "render" {
					time.Sleep(5 * time.Millisecond) // a steady rate, not a flood
				}
			}
		})
	}
	fo := &failover{nodeAt: 0.25, redisAt: 0.5}
	start := time.Now()
	at := func(frac float64) { time.Sleep(time.Until(start.Add(time.Duration(frac * float64(d))))) }
	at(fo.nodeAt)
	nodeKill := time.Now()
	nodes[1].Kill()
	if err := nodes[1].Start(); err != nil {
		stop.Store(true)
		wg.Wait()
		return nil, err
	}
	at(fo.redisAt)
	old := rd.PrimaryAddr(tb)
	redisKill := time.Now()
	rd.Primary.Kill()
	for time.Since(redisKill) < 2*haMaxWindow {
		if a := rd.PrimaryAddr(tb); a != "" && a != old {
			fo.promoted = time.Since(redisKill)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	at(1)
	stop.Store(true)
	wg.Wait()
	if fo.promoted == 0 {
		return nil, fmt.Errorf("no replica promoted by Sentinel within %s", 2*haMaxWindow)
	}
	fo.total = total.Load()
	ops := map[string]int{}
	var first, last time.Time
	for _, f := range failures {
		switch {
		case !f.at.Before(redisKill):
			fo.redisErrs++
			ops[f.op]++
			if first.IsZero() {
				first = f.at
			}
			last = f.at
		case !f.at.Before(nodeKill):
			fo.nodeErrs++
		default:
			fo.otherErrs++
		}
	}
	fo.window = last.Sub(first)
	var parts []string
	for op, n := range ops {
		parts = append(parts, fmt.Sprintf("%d %s", n, op))
	}
	sort.Strings(parts)
	fo.byOp = "none"
	if len(parts) > 0 {
		fo.byOp = strings.Join(parts, ", ")
	}
	return fo, nil
}

// benchTB stands in for a test where internal/redistest needs one: a
// failure ends the section with an error, and cleanups run at its end.
type benchTB struct{ cleanups []func() }

// tbFailure is a benchTB's Fatal, carried by panic to withTB.
type tbFailure struct{ msg string }

func (b *benchTB) Helper()                        {}
func (b *benchTB) Cleanup(f func())               { b.cleanups = append(b.cleanups, f) }
func (b *benchTB) Errorf(format string, a ...any) { panic(tbFailure{fmt.Sprintf(format, a...)}) }
func (b *benchTB) Fatal(a ...any)                 { panic(tbFailure{fmt.Sprint(a...)}) }
func (b *benchTB) Fatalf(format string, a ...any) { panic(tbFailure{fmt.Sprintf(format, a...)}) }
func (b *benchTB) Skip(a ...any)                  { panic(tbFailure{fmt.Sprint(a...)}) }

func (b *benchTB) TempDir() string {
	dir, err := os.MkdirTemp("", "quire-bench-ha-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// withTB runs f with a benchTB, its failures as errors, its cleanups done.
func withTB(f func(*benchTB) error) (err error) {
	tb := &benchTB{}
	defer func() {
		for i := len(tb.cleanups) - 1; i >= 0; i-- {
			tb.cleanups[i]()
		}
	}()
	defer func() {
		if v := recover(); v != nil {
			fail, ok := v.(tbFailure)
			if !ok {
				panic(v)
			}
			err = errors.New(fail.msg)
		}
	}()
	return f(tb)
}
