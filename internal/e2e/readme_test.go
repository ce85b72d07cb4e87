package e2e

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadmeWalkthrough runs README.md's walkthrough as written, with
// bash, curl and jq, against a new server started as the README's first
// command starts it: every curl must succeed (any answer that is not a
// 2xx fails it, as does a login that leaves TOKEN=null), and so must the
// git command at its end.
func TestReadmeWalkthrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	script := walkthrough(t, string(readme))

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	srv := exec.Command(quireBin, "serve", "--addr", addr, "--data", filepath.Join(dir, "repos"), "--log-level", "warn")
	srv.Dir = dir
	srv.Env = append(os.Environ(), "QUIRE_ADMIN_EMAIL=admin@example.com", "QUIRE_ADMIN_PASSWORD=change-me")
	log, err := os.Create(filepath.Join(dir, "quire.log"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Stdout, srv.Stderr = log, log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Signal(os.Interrupt); srv.Wait() })
	for i := 0; ; i++ {
		r, err := http.Get("http://" + addr + "/readyz")
		if err == nil && r.StatusCode == 200 {
			r.Body.Close()
			break
		}
		if i > 100 {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("the server did not start: %v\n%s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Every curl fails on an answer that is not a success, and the
	// script stops at the first failure.
	prelude := "set -euo pipefail\ncurl() { command curl --fail-with-body \"$@\"; }\n"
	script = strings.ReplaceAll(script, "127.0.0.1:8080", addr)
	script += "\n[ \"$TOKEN\" != null ] && [ \"$P\" != null ]\n"
	cmd := exec.Command("bash", "-c", prelude+script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's walkthrough failed: %v\n%s", err, out)
	}
	// What it says happened, happened: the second version archived, a
	// key made, the script executable in git.
	for _, want := range []string{`"state":"archived"`, `"token":"ak_`, `"mode":"100755"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("walkthrough output lacks %s:\n%s", want, out)
		}
	}
}

// walkthrough is the indented code block under README's "## Walkthrough"
// heading, unindented.
func walkthrough(t *testing.T, readme string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "\n## Walkthrough\n")
	if !ok {
		t.Fatal("README.md has no Walkthrough section")
	}
	var b strings.Builder
	started := false
	for _, line := range strings.Split(rest, "\n") {
		switch {
		case strings.HasPrefix(line, "    "):
			started = true
			b.WriteString(line[4:] + "\n")
		case line == "" && started:
			b.WriteString("\n")
		case started:
			return b.String()
		}
	}
	if !started {
		t.Fatal("the Walkthrough section has no code block")
	}
	return b.String()
}
