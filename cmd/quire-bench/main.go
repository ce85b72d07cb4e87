// Command quire-bench runs quire's benchmark suite on this machine and
// writes docs/benchmarks.md: every figure beside a baseline measured in
// the same run, as a ratio, because absolute numbers on a shared machine
// drift while ratios taken together hold.
//
//	go run ./cmd/quire-bench                 # the whole suite, 3-5 minutes
//	go run ./cmd/quire-bench -quick -out /tmp/b.md
//
// Sections: the HTTP hot path (cached render and live read against a
// 120-byte net/http floor), allocations per request in process, writes
// (upsert against the git CLI's plumbing, throughput with concurrent
// writers), git (clone and incremental fetch against git
// http-backend), reviews (against a file upsert), events (stream
// fan-out, webhook delivery of a burst, and a SIGKILL in the middle of
// one), MCP (prompts/get against the REST render of the same prompt) and
// high availability (throughput by node count, a failover under load).
// -include appends markdown fragments (the scale report).
//
// The HTTP servers of the hot path, quire and the floor alike, run in
// child processes of this binary, so the load client's CPU is accounted
// apart from the server's and the two servers are treated the same; the
// load client and the servers still share the machine's cores, which is
// why the figures that matter are the ratios.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

func main() {
	if role := os.Getenv(serveEnv); role != "" {
		if err := serveChild(role); err != nil {
			fmt.Fprintln(os.Stderr, "quire-bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "quire-bench:", err)
		}
		os.Exit(1)
	}
}

// config is what one run measures.
type config struct {
	// only, when set, names the sections to run (comma-separated).
	only     string
	out      string
	includes []string
	redis    string
	// cpuprofile, when set, is where the hot path's quire server writes
	// its CPU profile.
	cpuprofile string
	// dur and warm are each hot-path load run and its warm-up; rounds
	// how many times floor and quire alternate.
	dur, warm time.Duration
	rounds    int
	conns     []int
	// benchtime is the testing.Benchmark duration of the in-process figures.
	benchtime string
	// writeDur is each write throughput run; upserts the upserts per
	// latency figure.
	writeDur time.Duration
	upserts  int
	writers  []int
	// files and commits size the git repository; gitRounds the clones
	// and fetches per server.
	files, commits, gitRounds int
	// mcpCalls is the sequential calls of each kind of the MCP section.
	mcpCalls int
	// publishes is how many publishes the project repository section
	// times each way.
	publishes int
	// uiProjects projects of uiPerProject skills and as many prompts
	// each make the web UI section's data root.
	uiProjects, uiPerProject int
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func parse(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("quire-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var includes multi
	quick := fs.Bool("quick", false, "smoke run: every section, tiny durations (figures not meaningful)")
	fs.StringVar(&c.only, "only", "", "run only these sections, comma-separated: hot,alloc,writes,project,git,reviews,events,mcp,ha,ui,evals (the report then lacks the others)")
	fs.StringVar(&c.out, "out", "docs/benchmarks.md", "markdown report to write")
	fs.Var(&includes, "include", "markdown fragment to append (repeatable)")
	fs.StringVar(&c.redis, "redis", "", "redis:// URL for quire (default: embedded)")
	fs.StringVar(&c.cpuprofile, "cpuprofile", "", "write the CPU profile of the hot path's quire server to this file (go tool pprof reads it)")
	fs.DurationVar(&c.dur, "d", 3*time.Second, "duration of each hot-path load run")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds of floor, render and live read per connection count; medians are reported")
	fs.DurationVar(&c.writeDur, "write-d", 3*time.Second, "duration of each write throughput run")
	fs.IntVar(&c.upserts, "upserts", 200, "upserts per write latency figure")
	fs.IntVar(&c.files, "git-files", 1000, "files in the git benchmark repository")
	fs.IntVar(&c.gitRounds, "git-rounds", 5, "clones and fetches per server")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.includes = includes
	c.warm, c.conns, c.benchtime, c.writers, c.commits = time.Second, []int{1, 32, 256}, "1s", []int{1, 8, 64}, 50
	c.mcpCalls = 10000
	c.publishes = 40
	c.uiProjects, c.uiPerProject = 20, 50
	if *quick {
		c.dur, c.warm, c.rounds, c.benchtime = 200*time.Millisecond, 50*time.Millisecond, 1, "200x"
		c.writeDur, c.upserts, c.writers = 200*time.Millisecond, 5, []int{1, 8}
		c.files, c.commits, c.gitRounds = 50, 3, 1
		c.mcpCalls = 300
		c.publishes = 5
		c.uiProjects, c.uiPerProject = 2, 10
	}
	return c, nil
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	c, err := parse(args, stderr)
	if err != nil {
		return err
	}
	r := newReport(stderr)
	sections := []struct {
		name, short string
		run         func(context.Context, *config, *report) error
	}{
		{"hot path", "hot", hotPath},
		{"allocations", "alloc", allocations},
		{"writes", "writes", writes},
		{"project repository", "project", projectRepoSection},
		{"git", "git", gitSection},
		{"reviews", "reviews", reviewsSection},
		{"events", "events", eventsSection},
		{"mcp", "mcp", mcpSection},
		{"high availability", "ha", haSection},
		{"web UI", "ui", uiSection},
		{"evaluations", "evals", evalsSection},
	}
	for _, s := range sections {
		if c.only != "" && !slices.Contains(strings.Split(c.only, ","), s.short) {
			continue
		}
		r.logf("%s ...", s.name)
		if err := s.run(ctx, c, r); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	for _, inc := range c.includes {
		b, err := os.ReadFile(inc)
		if err != nil {
			return err
		}
		r.include(b)
	}
	return os.WriteFile(c.out, r.markdown(c), 0o644)
}
