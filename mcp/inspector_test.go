package mcp_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// inspector finds the MCP Inspector CLI (@modelcontextprotocol/inspector,
// pinned by .ci/run in its npm cache, $QUIRE_CI_NPM/inspector) and the
// Node >= 22 it needs; the test skips without them.
func inspector(t *testing.T) (node, cli string) {
	t.Helper()
	cache := os.Getenv("QUIRE_CI_NPM")
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			t.Skip("no npm cache: the Inspector test is skipped")
		}
		cache = filepath.Join(dir, "quire-ci-npm")
	}
	node = filepath.Join(cache, "inspector", "node_modules", ".bin", "node")
	cli = filepath.Join(cache, "inspector", "node_modules", "@modelcontextprotocol", "inspector", "clients", "cli", "build", "index.js")
	for _, f := range []string{node, cli} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("%s is missing: the Inspector test is skipped (.ci/run installs it)", f)
		}
	}
	return node, cli
}

// TestInspectorCLI runs the MCP Inspector CLI against /mcp in its modern
// (2026-07-28) and auto eras: it lists and gets prompts, reads a skill
// file and a directory, lists and gets skills with digest verification,
// and lists tools under --strict (schema portability) and calls one.
func TestInspectorCLI(t *testing.T) {
	driverHeavy(t)
	node, cli := inspector(t)
	f := newFixture(t)
	// The same over `quire mcp`, the stdio bridge.
	bin := binary(t)
	for _, target := range []struct{ name string }{{"http"}, {"stdio"}} {
		for _, era := range []string{"modern", "auto"} {
			for _, c := range []struct {
				name string
				args []string
				want string
			}{
				{"prompts/list", []string{"--method", "prompts/list"}, `"demo/support"`},
				{"prompts/get", []string{"--method", "prompts/get", "--prompt-name", "demo/greet", "--prompt-args", "name=In"}, "Hello In, you are nobody."},
				{"resources/list", []string{"--method", "resources/list"}, "skill://demo/pdf-tools/scripts/fill.py"},
				{"resources/read", []string{"--method", "resources/read", "--uri", "skill://demo/pdf-tools/SKILL.md"}, "name: pdf-tools"},
				{"resources/directory/read", []string{"--method", "resources/directory/read", "--uri", "skill://demo/pdf-tools"}, "skill://demo/pdf-tools/scripts"},
				{"skills/list", []string{"--method", "skills/list", "--verify", "--require-digests"}, "skill://demo/pdf-tools/SKILL.md"},
				{"skills/get", []string{"--method", "skills/get", "--uri", "skill://demo/pdf-tools/SKILL.md", "--verify"}, "pdf-tools"},
				{"tools/list", []string{"--method", "tools/list", "--strict"}, "upsert_file"},
				{"tools/call", []string{"--method", "tools/call", "--tool-name", "render_prompt", "--tool-arg", "slug=demo/greet", `variables={"name":"In"}`}, "Hello In, you are nobody."},
			} {
				t.Run(target.name+"/"+era+"/"+c.name, func(t *testing.T) {
					args := []string{cli, "--cli", f.e.URL + "/mcp", "--transport", "http", "--protocol-era", era, "--header", "Authorization: Bearer " + f.e.Admin}
					args = append(args, c.args...)
					if target.name == "stdio" {
						args = append([]string{cli, "--cli", "-e", "QUIRE_TOKEN=" + f.e.Admin, "-e", "QUIRE_CONFIG_DIR=" + t.TempDir(), "--protocol-era", era},
							append(slices.Clip(c.args), "--", bin, "mcp", "--server", f.e.URL)...)
					}
					cmd := exec.Command(node, args...)
					var stderr bytes.Buffer
					cmd.Stderr = &stderr
					out, err := cmd.Output()
					if err != nil || !strings.Contains(string(out), c.want) {
						t.Errorf("inspector %s: %v\nstdout: %s\nstderr: %s", strings.Join(c.args, " "), err, out, stderr.String())
					}
					if strings.Contains(stderr.String(), "arning") {
						t.Errorf("inspector %s warns: %s", strings.Join(c.args, " "), stderr.String())
					}
				})
			}
		}
	}
}
