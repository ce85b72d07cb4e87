package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerateAndMeasure runs both commands at a tiny size so the tool
// keeps working; it checks what they produce, not how fast.
func TestGenerateAndMeasure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs quire serve")
	}
	ctx := context.Background()
	dir := t.TempDir()
	data, md := filepath.Join(dir, "data"), filepath.Join(dir, "scale.md")
	var out bytes.Buffer
	err := run(ctx, []string{"generate", "-data", data, "-projects", "3", "-skills", "20", "-versions", "2", "-files", "3", "-prompts", "5", "-prompt-versions", "2", "-payloads", "1"}, &out)
	if err != nil {
		t.Fatalf("generate: %v\n%s", err, out.String())
	}
	out.Reset()
	err = run(ctx, []string{"measure", "-data", data, "-out", md, "-c", "4", "-d", "200ms", "-warmup", "50ms", "-rounds", "1", "-list-d", "100ms", "-list-c", "1", "-touch-c", "2"}, &out)
	if err != nil {
		t.Fatalf("measure: %v\n%s", err, out.String())
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		"## Scale",
		"3 projects, 20 skills and 5 prompts (25 repositories)",
		"| start-up (exec to /healthz 200) |",
		"| RSS after touching every repository |",
		"| RSS after touching every repository twice |",
		"| touch every repository once (25, 2 conns) |",
		"| list skills of a project (page of 50) p50 / p99 (server CPU per request) |",
		"| list files of a skill version (page of 50) p50 / p99 (server CPU per request) |",
		"| render req/s, full root (4 conns; server CPU per request) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasSuffix(line, " errors") && !strings.HasSuffix(line, ", 0 errors") {
			t.Errorf("requests failed: %s", line)
		}
	}
}

func TestGenerateRejectsBadFlags(t *testing.T) {
	var out bytes.Buffer
	for _, args := range [][]string{
		{"generate"},
		{"generate", "-data", t.TempDir(), "-versions", "0"},
		{"measure"},
		{"nonsense"},
		{},
	} {
		if err := run(context.Background(), args, &out); err == nil {
			t.Errorf("quire-scale %v: no error", args)
		}
	}
}
