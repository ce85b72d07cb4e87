package cli_test

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/llm"
)

// echoModel is a local OpenAI-compatible provider answering "echo: " and
// the last message.
func echoModel(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct {
			Model    string              `json:"model"`
			Messages []map[string]string `json:"messages"`
		}
		if json.Unmarshal(b, &body) != nil || len(body.Messages) == 0 {
			http.Error(w, "bad request", 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "c", "object": "chat.completion", "created": 1, "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "echo: " + body.Messages[len(body.Messages)-1]["content"]}}},
			"usage":   map[string]any{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
		})
	}))
	t.Cleanup(s.Close)
	return s
}

// TestEval: quire eval prints the cases, exits 1 on a failing assertion
// and 0 once fixed, and writes JUnit XML.
func TestEval(t *testing.T) {
	m := echoModel(t)
	f := newFixtureWith(t, testenv.Options{LLM: llm.Config{Providers: []llm.Provider{{Name: "local", BaseURL: m.URL + "/v1"}}, Timeout: 5 * time.Second}})
	e := f.e
	e.CreatePrompt(e.Admin, f.project, "hello")
	e.Must(201, "POST", "/v1/prompts/hello/versions", e.Admin, map[string]any{"template": "Hello {{name}}", "model": "m"})
	e.Must(200, "POST", "/v1/prompts/hello/versions/1/publish", e.Admin, nil)
	e.Must(201, "POST", "/v1/prompts/hello/versions", e.Admin, map[string]any{"template": "Hi {{name}}", "model": "m"})
	for _, name := range []string{"Ann", "Bo"} {
		e.Must(201, "POST", "/v1/prompts/hello/payloads", e.Admin, map[string]any{"name": name, "variables": map[string]string{"name": name},
			"assertions": []map[string]any{{"type": "contains", "value": "Hello"}, {"type": "max_length", "value": 50}}})
	}
	dir := t.TempDir()

	// Without --wait: the id, at once.
	r := f.must(t, dir, "eval", "demo/hello", "2")
	if !strings.Contains(r.stdout, "evaluation ") || !strings.Contains(r.stdout, "version 2: queued") {
		t.Errorf("eval: %q", r.stdout)
	}
	// --wait on the failing draft: a table, exit 1.
	r = f.quire(t, dir, nil, "eval", "demo/hello", "2", "--against", "live", "--wait", "--junit", "eval.xml")
	if r.code != 1 || !strings.Contains(r.stderr, "2 cases failed, 0 cases in error") {
		t.Fatalf("failing eval: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"PAYLOAD  REPEAT  RESULT  CHANGED  DETAIL", "Ann      1       FAIL    yes      contains: does not contain \"Hello\"",
		"demo/hello version 2: completed; 0 passed, 2 failed, 0 errored, 2 of 2 outputs changed against live"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "eval.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Type string `xml:"type,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("JUnit XML: %v\n%s", err, b)
	}
	if s := suites.Suites; len(s) != 1 || s[0].Name != "demo/hello version 2" || s[0].Tests != 2 || s[0].Failures != 2 ||
		s[0].Cases[0].Name != "Ann" || s[0].Cases[0].Failure == nil || s[0].Cases[0].Failure.Type != "contains" {
		t.Errorf("JUnit XML:\n%s", b)
	}
	// The fix passes: exit 0; --json prints the evaluation.
	e.Must(200, "PATCH", "/v1/prompts/hello/versions/2", e.Admin, map[string]any{"template": "Hello there {{name}}"})
	r = f.must(t, dir, "eval", "demo/hello", "2", "--wait", "--json")
	if j := r.json(t); j["evaluation"].(map[string]any)["state"] != "completed" || len(j["cases"].([]any)) != 2 {
		t.Errorf("--json: %s", r.stdout)
	}
	// Usage errors and the server's refusals.
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"eval", "hello", "2"}, 2, "PROJECT/SLUG"},
		{[]string{"eval", "demo/hello"}, 2, "accepts 2 arg"},
		{[]string{"eval", "demo/hello", "2", "--repeat", "9"}, 2, "--repeat"},
		{[]string{"eval", "demo/hello", "2", "--against", "head"}, 1, "against"},
		{[]string{"eval", "demo/nope", "2"}, 1, "not found"},
	} {
		if r := f.quire(t, dir, nil, tc.args...); r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("quire %v: exit %d %q, want %d %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
}
