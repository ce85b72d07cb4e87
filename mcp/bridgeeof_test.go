package mcp_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBridgeAnswersBeforeEOF: requests piped into `quire mcp` whose
// input then ends are all answered before it exits, in both eras.
func TestBridgeAnswersBeforeEOF(t *testing.T) {
	driverHeavy(t)
	f := newFixture(t)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"pipe","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, c := range []struct {
		name  string
		input string
		ids   []int
	}{
		{"2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"prompts/list"}
{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"demo/greet","arguments":{"name":"Pi"}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"render_prompt","arguments":{"slug":"demo/greet","variables":{"name":"Pi"}}}}
`, []int{1, 2, 3, 4}},
		{"2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}
{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"demo/greet","arguments":{"name":"Pi"},` + meta + `}}
{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"skill://demo/pdf-tools/SKILL.md",` + meta + `}}
`, []int{1, 2, 3}},
		// An open subscriptions/listen does not hold the bridge up.
		{"2026-07-28 listening", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"promptsListChanged":true},` + meta + `}}
{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"demo/greet","arguments":{"name":"Pi"},` + meta + `}}
`, []int{2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(binary(t), "mcp", "--server", f.e.URL)
			cmd.Env = append(os.Environ(), "QUIRE_CONFIG_DIR="+t.TempDir(), "QUIRE_TOKEN="+f.e.Admin)
			cmd.Stdin = strings.NewReader(c.input)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
			start := time.Now()
			out, err := cmd.Output()
			timer.Stop()
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("quire mcp took %v to exit after its input ended", d)
			}
			if err != nil {
				t.Fatalf("quire mcp: %v\n%s", err, stderr.String())
			}
			got := map[int]map[string]any{}
			for line := range strings.Lines(string(out)) {
				var msg struct {
					ID     *int           `json:"id"`
					Result map[string]any `json:"result"`
					Error  map[string]any `json:"error"`
				}
				if err := json.Unmarshal([]byte(line), &msg); err != nil {
					t.Fatalf("stdout line %q: %v", line, err)
				}
				if msg.ID != nil {
					if msg.Error != nil {
						t.Errorf("request %d: %v", *msg.ID, msg.Error)
					}
					got[*msg.ID] = msg.Result
				}
			}
			for _, id := range c.ids {
				if got[id] == nil {
					t.Errorf("request %d not answered before exit; stdout:\n%s\nstderr:\n%s", id, out, stderr.String())
				}
			}
			if strings.HasPrefix(c.name, "2026-07-28") {
				for _, id := range c.ids {
					if r := got[id]; r != nil && r["resultType"] != "complete" {
						t.Errorf("request %d: resultType %v", id, r["resultType"])
					}
				}
			}
		})
	}
}
