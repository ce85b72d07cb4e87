package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/llm"
)

// fakeProvider is a local OpenAI-compatible chat-completions server: it
// records what quire sent and answers what the test tells it to.
type fakeProvider struct {
	*httptest.Server
	mu       sync.Mutex
	requests []fakeRequest
	// answer, when set, answers a request (n counts from 0); otherwise a
	// completion echoing the last message.
	answer func(w http.ResponseWriter, n int) bool
}

type fakeRequest struct {
	Auth string
	Path string
	Body map[string]any
}

func newFakeProvider(t *testing.T) *fakeProvider {
	f := &fakeProvider{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("provider got a body that is not JSON: %s", b)
		}
		f.mu.Lock()
		n := len(f.requests)
		f.requests = append(f.requests, fakeRequest{Auth: r.Header.Get("Authorization"), Path: r.URL.Path, Body: body})
		answer := f.answer
		f.mu.Unlock()
		if answer != nil && answer(w, n) {
			return
		}
		msgs, _ := body["messages"].([]any)
		last, _ := msgs[len(msgs)-1].(map[string]any)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": body["model"],
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "echo: " + last["content"].(string)}}},
			"usage": map[string]any{"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
		})
	}))
	t.Cleanup(f.Close)
	return f
}

// reset forgets the requests and answers from now on with answer.
func (f *fakeProvider) reset(answer func(w http.ResponseWriter, n int) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests, f.answer = nil, answer
}

func (f *fakeProvider) got() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.requests...)
}

const (
	runKey      = "sk-test-secret-key-0123456789"
	otherRunKey = "sk-other-secret-key-9876543210"
)

// runEnv is a quire whose provider "local" (the default) is fake and
// "other" is another fake; it has a project with a text prompt "greet"
// and a chat prompt "chat", each with a live version.
func runEnv(t *testing.T) (e *testenv.Env, local, other *fakeProvider) {
	local, other = newFakeProvider(t), newFakeProvider(t)
	e = testenv.NewWith(t, testenv.Options{LLM: llm.Config{
		Providers: []llm.Provider{{Name: "local", BaseURL: local.URL + "/v1", APIKey: runKey}, {Name: "other", BaseURL: other.URL + "/v1", APIKey: otherRunKey}},
		Default:   "local", Timeout: 5 * time.Second, Backoff: 10 * time.Millisecond, MaxBackoff: 2 * time.Second,
	}})
	p := e.CreateProject(e.Admin, "runs")
	e.CreatePrompt(e.Admin, p, "greet")
	e.Must(201, "POST", "/v1/prompts/greet/versions", e.Admin, map[string]any{"template": "Hello {{name}}", "model": "gpt-test", "model_params": map[string]any{"temperature": 0.25, "max_tokens": 50}})
	e.Must(200, "POST", "/v1/prompts/greet/versions/1/publish", e.Admin, nil)
	e.CreatePrompt(e.Admin, p, "chat")
	e.Must(201, "POST", "/v1/prompts/chat/versions", e.Admin, map[string]any{"messages": []map[string]string{
		{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi {{name}}"}}, "model": "chat-model"})
	return e, local, other
}

func TestRunSendsTheRenderToTheProvider(t *testing.T) {
	e, local, other := runEnv(t)
	r := e.Must(200, "POST", "/v1/prompts/greet/versions/1/run", e.Admin, map[string]any{"variables": map[string]string{"name": "Ann"}})
	var out struct {
		Run struct {
			Version      int                 `json:"version"`
			Commit       string              `json:"commit"`
			Messages     []map[string]string `json:"messages"`
			Output       string              `json:"output"`
			FinishReason string              `json:"finish_reason"`
			Model        string              `json:"model"`
			Provider     string              `json:"provider"`
			Usage        map[string]int      `json:"usage"`
			LatencyMS    *int                `json:"latency_ms"`
		} `json:"run"`
	}
	r.Decode(t, &out)
	run := out.Run
	if run.Version != 1 || len(run.Commit) != 40 || run.Output != "echo: Hello Ann" || run.FinishReason != "stop" ||
		run.Model != "gpt-test" || run.Provider != "local" || run.Usage["input_tokens"] != 11 || run.Usage["output_tokens"] != 7 || run.LatencyMS == nil {
		t.Fatalf("run = %s", r.Body)
	}
	if len(run.Messages) != 1 || run.Messages[0]["role"] != "user" || run.Messages[0]["content"] != "Hello Ann" {
		t.Errorf("messages = %v, want the text as one user message", run.Messages)
	}
	reqs := local.got()
	if len(reqs) != 1 {
		t.Fatalf("provider got %d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if got.Auth != "Bearer "+runKey || got.Path != "/v1/chat/completions" {
		t.Errorf("provider got Authorization %q at %s", got.Auth, got.Path)
	}
	if got.Body["model"] != "gpt-test" || got.Body["temperature"] != 0.25 || got.Body["max_tokens"] != 50.0 {
		t.Errorf("provider got body %v, want the version's model and model_params", got.Body)
	}
	msgs, _ := json.Marshal(got.Body["messages"])
	if string(msgs) != `[{"content":"Hello Ann","role":"user"}]` {
		t.Errorf("provider got messages %s", msgs)
	}

	// A chat draft, by the project-scoped address, with model and provider
	// overridden: its messages as rendered, to the other provider.
	r = e.Must(200, "POST", "/v1/projects/runs/prompts/chat/versions/1/run", e.Admin, map[string]any{"variables": map[string]string{"name": "Bo"}, "model": "override", "provider": "other"})
	if m := r.JSON(t)["run"].(map[string]any); m["provider"] != "other" || m["model"] != "override" || m["output"] != "echo: Hi Bo" {
		t.Errorf("chat run = %s", r.Body)
	}
	if len(local.got()) != 1 {
		t.Errorf("the default provider was called for a run naming another")
	}
	if o := other.got(); len(o) != 1 || o[0].Auth != "Bearer "+otherRunKey || o[0].Body["model"] != "override" {
		t.Errorf("the other provider got %+v", o)
	}
	if msgs, _ := json.Marshal(other.got()[0].Body["messages"]); string(msgs) != `[{"content":"You are terse.","role":"system"},{"content":"Hi Bo","role":"user"}]` {
		t.Errorf("chat messages sent as %s", msgs)
	}
	// The live version, by "live".
	e.Must(200, "POST", "/v1/prompts/greet/versions/live/run", e.Admin, map[string]any{"variables": map[string]string{"name": "Cy"}})
	// Runs are not renders: the usage counts stay at zero.
	if u := e.Must(200, "GET", "/v1/prompts/greet/usage", e.Admin, nil); strings.Contains(string(u.Body), `"renders":1`) || strings.Contains(string(u.Body), `"renders":2`) {
		t.Errorf("runs were counted as renders: %s", u.Body)
	}
}

func TestRunFailures(t *testing.T) {
	e, local, _ := runEnv(t)
	readKey := e.CreateKey(e.Admin, "read")
	vars := map[string]any{"variables": map[string]string{"name": "Ann"}}
	code := func(r *testenv.Response) string { s, _ := r.JSON(t)["code"].(string); return s }

	// Missing variables: 422 as render, before the provider is called.
	r := e.Must(422, "POST", "/v1/prompts/greet/versions/1/run", e.Admin, map[string]any{})
	if d, _ := r.JSON(t)["details"].(map[string]any); d == nil || !strings.Contains(string(r.Body), `"name"`) {
		t.Errorf("missing variables: %s", r.Body)
	}
	// A read key may render, not run.
	e.Must(403, "POST", "/v1/prompts/greet/versions/1/run", readKey, vars)
	// A provider that is not configured.
	if r := e.Must(409, "POST", "/v1/prompts/greet/versions/1/run", e.Admin, map[string]any{"variables": map[string]string{"name": "A"}, "provider": "nope"}); code(r) != "no_provider" {
		t.Errorf("unknown provider: %s", r.Body)
	}
	if n := len(local.got()); n != 0 {
		t.Fatalf("provider called %d times by refused runs", n)
	}

	// The provider fails: 502 with its status and message.
	local.reset(func(w http.ResponseWriter, _ int) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(500)
		io.WriteString(w, `{"error":{"message":"the model is on fire","type":"server_error"}}`)
		return true
	})
	r = e.Must(502, "POST", "/v1/prompts/greet/versions/1/run", e.Admin, vars)
	d, _ := r.JSON(t)["details"].(map[string]any)
	if code(r) != "provider_error" || d["status"] != 500.0 || d["message"] != "the model is on fire" || d["provider"] != "local" {
		t.Errorf("provider 500: %s", r.Body)
	}

	// 429 twice, then an answer: retried, 200.
	local.reset(func(w http.ResponseWriter, n int) bool {
		if n < 2 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"message":"slow down"}}`)
			return true
		}
		return false
	})
	e.Must(200, "POST", "/v1/prompts/greet/versions/1/run", e.Admin, vars)
	if n := len(local.got()); n != 3 {
		t.Errorf("provider got %d requests, want 3 (two 429s retried)", n)
	}

	// 429 forever: retried a bounded number of times, then 503 with
	// Retry-After.
	local.reset(func(w http.ResponseWriter, _ int) bool {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(429)
		return true
	})
	r = e.Must(503, "POST", "/v1/prompts/greet/versions/1/run", e.Admin, vars)
	if r.Header.Get("Retry-After") == "" || code(r) != "unavailable" {
		t.Errorf("429 forever: Retry-After %q, %s", r.Header.Get("Retry-After"), r.Body)
	}
	if n := len(local.got()); n != 4 {
		t.Errorf("provider got %d requests, want 4 (one and three retries)", n)
	}
	// A Retry-After past the bound is not waited for: 503 at once, with
	// the provider's Retry-After.
	local.reset(func(w http.ResponseWriter, _ int) bool {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(429)
		return true
	})
	r = e.Must(503, "POST", "/v1/prompts/greet/versions/1/run", e.Admin, vars)
	if r.Header.Get("Retry-After") != "120" || len(local.got()) != 1 {
		t.Errorf("long Retry-After: header %q after %d requests", r.Header.Get("Retry-After"), len(local.got()))
	}

	// The keys were sent, never logged.
	if logs := e.Log.String(); strings.Contains(logs, runKey) || strings.Contains(logs, otherRunKey) {
		t.Error("a provider's key is in the server's log")
	}
}

func TestRunWithoutProvider(t *testing.T) {
	e := testenv.New(t)
	p := e.CreateProject(e.Admin, "noprov")
	e.CreatePrompt(e.Admin, p, "greet")
	e.Must(201, "POST", "/v1/prompts/greet/versions", e.Admin, map[string]any{"template": "Hello", "model": "m"})
	r := e.Must(409, "POST", "/v1/prompts/greet/versions/1/run", e.Admin, nil)
	if r.JSON(t)["code"] != "no_provider" {
		t.Errorf("no provider: %s", r.Body)
	}
	// Rendering works as ever.
	e.Must(200, "POST", "/v1/prompts/greet/render", e.Admin, map[string]any{"version": 1})
}

func TestRunBadInput(t *testing.T) {
	e, local, _ := runEnv(t)
	for name, c := range map[string]struct {
		path string
		body any
		want int
	}{
		"unknown field":      {"/v1/prompts/greet/versions/1/run", `{"variables":{"name":"A"},"temperature":1}`, 400},
		"malformed JSON":     {"/v1/prompts/greet/versions/1/run", `{"variables":`, 400},
		"variables an array": {"/v1/prompts/greet/versions/1/run", `{"variables":[1]}`, 400},
		"model not a string": {"/v1/prompts/greet/versions/1/run", `{"variables":{"name":"A"},"model":3}`, 400},
		"model too long":     {"/v1/prompts/greet/versions/1/run", map[string]any{"variables": map[string]string{"name": "A"}, "model": strings.Repeat("m", 300)}, 400},
		"version zero":       {"/v1/prompts/greet/versions/0/run", `{}`, 400},
		"version not a name": {"/v1/prompts/greet/versions/a%20b/run", `{}`, 400},
		"no such version":    {"/v1/prompts/greet/versions/9/run", `{}`, 404},
		"no such label":      {"/v1/prompts/greet/versions/stable/run", `{}`, 404},
		"no such payload":    {"/v1/prompts/greet/versions/1/run", `{"payload_id":"nope"}`, 404},
	} {
		t.Run(name, func(t *testing.T) {
			e.Must(c.want, "POST", c.path, e.Admin, c.body)
		})
	}
	if n := len(local.got()); n != 0 {
		t.Errorf("provider called %d times by bad requests", n)
	}
}

// A run by label, with a payload's variables; a version with no model is
// 422; a provider slower than the timeout is 502.
func TestRunByLabelPayloadTimeout(t *testing.T) {
	local := newFakeProvider(t)
	e := testenv.NewWith(t, testenv.Options{LLM: llm.Config{
		Providers: []llm.Provider{{Name: "local", BaseURL: local.URL + "/v1", APIKey: runKey}},
		Timeout:   300 * time.Millisecond,
	}})
	p := e.CreateProject(e.Admin, "labelled")
	e.CreatePrompt(e.Admin, p, "greet")
	e.Must(201, "POST", "/v1/prompts/greet/versions", e.Admin, map[string]any{"template": "Hello {{name}}", "model": "m1"})
	e.Must(200, "POST", "/v1/prompts/greet/versions/1/publish", e.Admin, nil)
	e.Must(200, "PUT", "/v1/prompts/greet/labels/stable", e.Admin, map[string]int{"version": 1})
	e.Must(201, "POST", "/v1/prompts/greet/versions", e.Admin, map[string]any{"template": "Bye {{name}}", "model": ""})
	pl := e.Must(201, "POST", "/v1/prompts/greet/payloads", e.Admin, map[string]any{"name": "dee", "variables": map[string]string{"name": "Dee"}}).JSON(t)
	payload := pl["payload"].(map[string]any)["id"].(string)

	r := e.Must(200, "POST", "/v1/prompts/greet/versions/stable/run", e.Admin, map[string]any{"payload_id": payload})
	if m := r.JSON(t)["run"].(map[string]any); m["version"] != 1.0 || m["output"] != "echo: Hello Dee" {
		t.Errorf("run by label with a payload = %s", r.Body)
	}
	// Draft 2 has no model: nothing to send.
	e.Must(422, "POST", "/v1/prompts/greet/versions/2/run", e.Admin, map[string]any{"payload_id": payload})
	if n := len(local.got()); n != 1 {
		t.Errorf("provider got %d requests, want 1", n)
	}

	local.reset(func(w http.ResponseWriter, _ int) bool {
		time.Sleep(time.Second)
		return false
	})
	r = e.Must(502, "POST", "/v1/prompts/greet/versions/1/run", e.Admin, map[string]any{"payload_id": payload})
	if r.JSON(t)["code"] != "provider_error" || !strings.Contains(string(r.Body), "did not answer within") {
		t.Errorf("slow provider: %s", r.Body)
	}
}
