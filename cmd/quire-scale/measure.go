package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quire/quire/internal/bench"
)

// measurer starts quire on a generated data root and on an empty one and
// measures them over HTTP.
type measurer struct {
	data      string
	out       string
	quire     string
	conns     int
	dur       time.Duration
	warm      time.Duration
	rounds    int
	listDur   time.Duration
	listConns int
	touchers  int
}

func (m *measurer) parse(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("quire-scale measure", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&m.data, "data", "", "data root filled by generate (required)")
	fs.StringVar(&m.out, "out", "", "markdown file to write the results to (default: stdout only)")
	fs.StringVar(&m.quire, "quire", "", "quire binary (default: built from this module)")
	fs.IntVar(&m.conns, "c", 32, "connections of the render runs")
	fs.DurationVar(&m.dur, "d", 5*time.Second, "duration of each render run")
	fs.DurationVar(&m.warm, "warmup", time.Second, "warm-up before each run")
	fs.IntVar(&m.rounds, "rounds", 3, "rounds of empty then full render; medians are reported")
	fs.DurationVar(&m.listDur, "list-d", 3*time.Second, "duration of each list endpoint's run")
	fs.IntVar(&m.listConns, "list-c", 4, "connections of the list runs")
	fs.IntVar(&m.touchers, "touch-c", 8, "connections touching every repository")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if m.data == "" {
		return fmt.Errorf("measure: -data is required")
	}
	if m.rounds < 1 || m.conns < 1 || m.listConns < 1 || m.touchers < 1 {
		return fmt.Errorf("measure: -rounds, -c, -list-c and -touch-c must be positive")
	}
	return nil
}

// figure is one row of the results table.
type figure struct {
	name, value, goal string
	pass              string // "yes", "no" or "" (no goal)
}

func passed(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

func (m *measurer) run(ctx context.Context, out io.Writer) error {
	tmp, err := os.MkdirTemp("", "quire-scale-measure-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := m.quire
	if bin == "" {
		bin = filepath.Join(tmp, "quire")
		fmt.Fprintln(out, "measure: building quire")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/quire/quire/cmd/quire")
		build.Stdout, build.Stderr = out, out
		if err := build.Run(); err != nil {
			return fmt.Errorf("build quire: %w", err)
		}
	}
	load := bench.LoadAvg()

	full, err := startServer(ctx, bin, m.data, tmp, "full")
	if err != nil {
		return err
	}
	defer full.stop()
	var figs []figure
	figs = append(figs, figure{"start-up (exec to /healthz 200)", full.startup.Round(time.Millisecond).String(), "< 2s", passed(full.startup < 2*time.Second)})
	idle, err := full.rss()
	if err != nil {
		return err
	}
	figs = append(figs, figure{"idle RSS after start", mib(idle), "< 300 MiB", passed(idle < 300<<20)})
	fmt.Fprintf(out, "measure: started in %s, idle RSS %s\n", full.startup.Round(time.Millisecond), mib(idle))

	token, err := full.login()
	if err != nil {
		return err
	}
	inv, err := full.inventory(token)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "measure: %d projects, %d skills, %d prompts\n", len(inv.projects), len(inv.skills), len(inv.prompts))
	if len(inv.skills)+len(inv.prompts) == 0 {
		return fmt.Errorf("measure: the data root holds no skills or prompts; run generate first")
	}

	t0 := time.Now()
	if err := full.touchAll(token, inv, m.touchers); err != nil {
		return err
	}
	touch := time.Since(t0)
	touched, err := full.rss()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "measure: touched %d repositories in %s, RSS %s\n", len(inv.skills)+len(inv.prompts), touch.Round(time.Millisecond), mib(touched))
	// A second pass shows whether memory keeps growing with the
	// repositories touched or stays within the configured bounds.
	if err := full.touchAll(token, inv, m.touchers); err != nil {
		return err
	}
	twice, err := full.rss()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "measure: touched them again, RSS %s\n", mib(twice))
	figs = append(figs,
		figure{fmt.Sprintf("touch every repository once (%d, %d conns)", len(inv.skills)+len(inv.prompts), m.touchers), touch.Round(time.Millisecond).String(), "", ""},
		figure{"RSS after touching every repository", mib(touched), "< 300 MiB", passed(touched < 300<<20)},
		figure{"RSS after touching every repository twice", fmt.Sprintf("%s (%+.0f MiB)", mib(twice), float64(twice-touched)/(1<<20)), "bounded by configuration (< 300 MiB)", passed(twice < 300<<20)})

	for _, l := range inv.lists(full.url, token) {
		var r bench.Result
		cpu, err := full.cpuPer(func() int64 { r = bench.Run(m.listConns, m.listDur, m.warm/2, l.next); return r.Sent })
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "measure: %s: %d requests, p50 %s, p99 %s, server CPU %s per request, %d errors\n", l.name, r.Requests, r.P50, r.P99, cpu, r.Errors)
		figs = append(figs, figure{fmt.Sprintf("list %s (page of 50) p50 / p99 (server CPU per request)", l.name),
			fmt.Sprintf("%s / %s (%s)", r.P50.Round(10*time.Microsecond), r.P99.Round(10*time.Microsecond), cpu.Round(10*time.Microsecond)),
			"p99 < 20ms", passed(r.P99 < 20*time.Millisecond && r.Errors == 0 && r.Requests > 0)})
	}

	emptyRoot := filepath.Join(tmp, "empty")
	empty, err := startServer(ctx, bin, emptyRoot, tmp, "empty")
	if err != nil {
		return err
	}
	defer empty.stop()
	emptyToken, err := empty.login()
	if err != nil {
		return err
	}
	emptyPrompt, err := empty.seedPrompt(emptyToken)
	if err != nil {
		return err
	}
	renderBody := []byte(`{"variables":{"name":"Ann","topic":"caching"}}`)
	reqs := map[string]bench.Request{
		"empty": {Method: "POST", URL: empty.url + "/v1/prompts/" + emptyPrompt + "/render", Token: emptyToken, Body: renderBody},
		"full":  {Method: "POST", URL: full.url + "/v1/prompts/" + inv.prompts[0].id + "/render", Token: token, Body: renderBody},
	}
	results := map[string][]bench.Result{}
	cpus := map[string][]time.Duration{}
	servers := map[string]*server{"empty": empty, "full": full}
	for i := range m.rounds {
		// Alternate, so load from elsewhere on the machine hits both alike.
		for _, root := range []string{"empty", "full"} {
			var r bench.Result
			cpu, err := servers[root].cpuPer(func() int64 { r = bench.Measure(reqs[root], m.conns, m.dur, m.warm); return r.Sent })
			if err != nil {
				return err
			}
			results[root] = append(results[root], r)
			cpus[root] = append(cpus[root], cpu)
			fmt.Fprintf(out, "measure: render %s round %d: %.0f req/s, p50 %s, p99 %s, server CPU %s per request, %d errors\n", root, i+1, r.RPS, r.P50, r.P99, cpu, r.Errors)
		}
	}
	re, rf := bench.Median(results["empty"]), bench.Median(results["full"])
	ce, cf := bench.MedianDuration(cpus["empty"]), bench.MedianDuration(cpus["full"])
	ratio := rf.RPS / re.RPS
	figs = append(figs,
		figure{fmt.Sprintf("render req/s, empty root (%d conns; server CPU per request)", m.conns), fmt.Sprintf("%.0f (%s)", re.RPS, ce.Round(time.Microsecond)), "", ""},
		figure{fmt.Sprintf("render req/s, full root (%d conns; server CPU per request)", m.conns), fmt.Sprintf("%.0f, %.2fx of empty (%s, %.2fx)", rf.RPS, ratio, cf.Round(time.Microsecond), float64(cf)/float64(ce)),
			">= 0.90x of empty", passed(ratio >= 0.9 && rf.Errors == 0)})
	final, err := full.rss()
	if err != nil {
		return err
	}
	figs = append(figs, figure{"RSS at the end (full root)", mib(final), "< 300 MiB", passed(final < 300<<20)})

	md := report(figs, inv, load, m)
	fmt.Fprint(out, md)
	if m.out != "" {
		return os.WriteFile(m.out, []byte(md), 0o644)
	}
	return nil
}

// report renders the results as a markdown section.
func report(figs []figure, inv *inventory, load string, m *measurer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Scale\n\n")
	fmt.Fprintf(&b, "`quire-scale measure` on a data root of %d projects, %d skills and %d prompts (%d repositories), embedded Redis, GOMAXPROCS=%d, load average at start %s.\n\n",
		len(inv.projects), len(inv.skills), len(inv.prompts), len(inv.skills)+len(inv.prompts), runtime.GOMAXPROCS(0), load)
	fmt.Fprintf(&b, "| figure | value | goal | pass |\n|---|---|---|---|\n")
	for _, f := range figs {
		goal, pass := f.goal, f.pass
		if goal == "" {
			goal, pass = "—", "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", f.name, f.value, goal, pass)
	}
	fmt.Fprintf(&b, "\nList latencies: %d connections for %s per endpoint, each request on a random project or asset. Render: %d connections, %d rounds of %s alternating empty and full root, medians. Server CPU per request is the server process's user+system time over a run divided by the requests sent in it (warm-up included): unlike latency it hardly depends on what else the machine runs.\n",
		m.listConns, m.listDur, m.conns, m.rounds, m.dur)
	return b.String()
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// server is a quire serve subprocess.
type server struct {
	url     string
	cmd     *exec.Cmd
	startup time.Duration
	log     *os.File
}

// startServer runs quire serve on data and waits for /healthz.
func startServer(ctx context.Context, bin, data, tmp, name string) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	logf, err := os.Create(filepath.Join(tmp, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "serve", "-addr", addr, "-data", data, "-log-level", "warn")
	// No Redis URL: the embedded one. No request limit: the runs are the load.
	cmd.Env = append(os.Environ(), "QUIRE_ADMIN_EMAIL="+adminEmail, "QUIRE_ADMIN_PASSWORD="+adminPassword, "QUIRE_REDIS=", "QUIRE_RATE_LIMIT=0")
	cmd.Stdout, cmd.Stderr = logf, logf
	s := &server{url: "http://" + addr, cmd: cmd, log: logf}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start quire: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	client := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-exited:
			b, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("quire serve exited: %s", b)
		default:
		}
		if res, err := client.Get(s.url + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				s.startup = time.Since(start)
				return s, nil
			}
		}
		if time.Since(start) > 2*time.Minute {
			s.stop()
			return nil, fmt.Errorf("quire serve not healthy after 2 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *server) stop() {
	if s.cmd.Process != nil {
		s.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { s.cmd.Process.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			s.cmd.Process.Kill()
		}
	}
	s.log.Close()
}

// rss is the server's resident set size, from /proc.
func (s *server) rss() (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("read RSS: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("read RSS: no VmRSS in /proc status")
}

// cpuPer runs load, which returns how many requests it sent, and returns
// the server's CPU time per request (bench.CPUPer).
func (s *server) cpuPer(load func() int64) (time.Duration, error) {
	return bench.CPUPer(s.cmd.Process.Pid, load)
}

// call sends one request and decodes a 2xx answer into out.
func (s *server) call(method, path, token string, body, out any) error {
	return bench.Call(s.url, method, path, token, body, out)
}

func (s *server) login() (string, error) {
	var login struct{ Token string }
	err := s.call("POST", "/v1/auth/login", "", map[string]string{"email": adminEmail, "password": adminPassword}, &login)
	return login.Token, err
}

// seedPrompt creates a project and a published prompt like the
// generated ones, for the empty root's render runs.
func (s *server) seedPrompt(token string) (string, error) {
	var proj struct{ Project struct{ ID string } }
	if err := s.call("POST", "/v1/projects", token, map[string]string{"name": "Empty"}, &proj); err != nil {
		return "", err
	}
	var prompt struct{ Prompt struct{ ID string } }
	if err := s.call("POST", "/v1/projects/"+proj.Project.ID+"/prompts", token, map[string]string{"name": "Greeting"}, &prompt); err != nil {
		return "", err
	}
	body := map[string]any{"template": "You are assistant 0 (revision 9). Greet {{name}} and write a short note about {{topic}}.", "model": "gpt-test", "model_params": map[string]any{"temperature": 0.2}}
	if err := s.call("POST", "/v1/prompts/"+prompt.Prompt.ID+"/versions", token, body, nil); err != nil {
		return "", err
	}
	return prompt.Prompt.ID, s.call("POST", "/v1/prompts/"+prompt.Prompt.ID+"/versions/1/publish", token, nil, nil)
}

type assetRef struct{ id, project string }

// inventory is what the server lists: every project, skill and prompt.
type inventory struct {
	projects        []string
	skills, prompts []assetRef
}

// inventory pages through every list, as a client would.
func (s *server) inventory(token string) (*inventory, error) {
	inv := &inventory{}
	type page struct {
		Projects   []struct{ ID string }
		Skills     []struct{ ID string }
		Prompts    []struct{ ID string }
		NextCursor string `json:"next_cursor"`
	}
	each := func(path string, fn func(p *page)) error {
		cursor := ""
		for {
			var p page
			if err := s.call("GET", path+"?limit=500&cursor="+cursor, token, nil, &p); err != nil {
				return err
			}
			fn(&p)
			if cursor = p.NextCursor; cursor == "" {
				return nil
			}
		}
	}
	if err := each("/v1/projects", func(p *page) {
		for _, x := range p.Projects {
			inv.projects = append(inv.projects, x.ID)
		}
	}); err != nil {
		return nil, err
	}
	for _, pid := range inv.projects {
		if err := each("/v1/projects/"+pid+"/skills", func(p *page) {
			for _, x := range p.Skills {
				inv.skills = append(inv.skills, assetRef{x.ID, pid})
			}
		}); err != nil {
			return nil, err
		}
		if err := each("/v1/projects/"+pid+"/prompts", func(p *page) {
			for _, x := range p.Prompts {
				inv.prompts = append(inv.prompts, assetRef{x.ID, pid})
			}
		}); err != nil {
			return nil, err
		}
	}
	return inv, nil
}

// touchAll reads one file of every skill (version 1, which generate
// always leaves, published or archived) and renders every prompt.
func (s *server) touchAll(token string, inv *inventory, conns int) error {
	tr := &http.Transport{MaxIdleConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, conns)
	total := len(inv.skills) + len(inv.prompts)
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				req := bench.Request{Method: "GET", Token: token}
				if i < len(inv.skills) {
					req.URL = s.url + "/v1/skills/" + inv.skills[i].id + "/versions/1/files/SKILL.md"
				} else {
					req.Method, req.Body = "POST", []byte(`{"variables":{"name":"Ann","topic":"caching"}}`)
					req.URL = s.url + "/v1/prompts/" + inv.prompts[i-len(inv.skills)].id + "/render"
				}
				status, body, err := req.Do(client)
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("%s %s: %d %s", req.Method, req.URL, status, body)
				}
				if err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// list is one list endpoint and how to pick the next request to it.
type list struct {
	name string
	next func(worker int) bench.Request
}

func (inv *inventory) lists(url, token string) []list {
	get := func(path string) bench.Request {
		return bench.Request{Method: "GET", URL: url + path, Token: token}
	}
	pick := func(n int) int { return rand.IntN(n) }
	ls := []list{{"projects", func(int) bench.Request { return get("/v1/projects?limit=50") }}}
	if len(inv.projects) > 0 {
		ls = append(ls,
			list{"skills of a project", func(int) bench.Request {
				return get("/v1/projects/" + inv.projects[pick(len(inv.projects))] + "/skills?limit=50")
			}},
			list{"prompts of a project", func(int) bench.Request {
				return get("/v1/projects/" + inv.projects[pick(len(inv.projects))] + "/prompts?limit=50")
			}})
	}
	if len(inv.skills) > 0 {
		ls = append(ls,
			list{"versions of a skill", func(int) bench.Request {
				return get("/v1/skills/" + inv.skills[pick(len(inv.skills))].id + "/versions?limit=50")
			}},
			list{"files of a skill version", func(int) bench.Request {
				return get("/v1/skills/" + inv.skills[pick(len(inv.skills))].id + "/versions/1/files?limit=50")
			}})
	}
	return ls
}
