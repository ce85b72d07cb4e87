package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary serve as the benchmark's server child,
// as the quire-bench binary does.
func TestMain(m *testing.M) {
	if role := os.Getenv(serveEnv); role != "" {
		if err := serveChild(role); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestQuickRun runs the whole suite in -quick mode and checks the report
// holds every section and the included fragment. It asserts no figure:
// those depend on the machine.
func TestQuickRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every benchmark section")
	}
	dir := t.TempDir()
	out, inc := filepath.Join(dir, "benchmarks.md"), filepath.Join(dir, "scale.md")
	if err := os.WriteFile(inc, []byte("## Scale\n\nfragment from quire-scale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"-quick", "-out", out, "-include", inc}, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	for _, want := range []string{
		"# Benchmarks", "CPUs (runtime.NumCPU)", "load average at start",
		"## Hot path", "render, 32 conns: req/s", "live, 256 conns: p99",
		"## Allocations per request", "render: allocs/op", "live read: allocs/op",
		"## Writes", "upsert in process", "upsert over HTTP", "8 writers, distinct drafts", "8 writers, one draft",
		"## git over smart HTTP", "mirror clone", "incremental fetch",
		"## Reviews", "comment: p50", "GET review, 5 comments: p99",
		"upsert over HTTP with --fsync: median",
		"## High availability", "renders/s, 3 node(s)", "upserts/s, 1 node(s)", "Redis failover: window of client errors",
		"## MCP", "prompts/get, one session: p50", "prompts/get, 32 sessions: calls/s", "| figure | quire | SDK ping (floor) |",
		"prompts/get, sessionless (2026-07-28): p50", "server/discover (the sessionless floor): p50", "prompts/get with an OAuth access token, one session: p50",
		"## Web UI", "project (25 skills, 25 prompts): p99", "review: p99", "gzipped", "First contentful paint",
		"## Evaluations", "evaluation, 200 × 2", "cached re-evaluation, 200 × 2", "review page, 50 cases: p99",
		"## Scale\n\nfragment from quire-scale",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}

func TestUnknownFlag(t *testing.T) {
	if err := run(context.Background(), []string{"-no-such-flag"}, io.Discard); err == nil {
		t.Fatal("an unknown flag was accepted")
	}
}
