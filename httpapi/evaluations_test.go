package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/llm"
)

// modelServer is a local OpenAI-compatible provider with deterministic
// answers: a judge request (its system message starts "You judge") is
// answered PASS unless the rubric says "strict"; any other is answered
// by reply (the last message's content in, the output out), "echo: "
// and the content by default. fail, when set, answers a request with
// that status instead; delay holds each answer.
type modelServer struct {
	*httptest.Server
	calls  atomic.Int64
	judged atomic.Int64
	mu     sync.Mutex
	reply  func(content string) string
	fail   atomic.Int64 // a status to answer with, 0 for none
	delay  atomic.Int64 // nanoseconds
}

func newModelServer(t *testing.T) *modelServer {
	m := &modelServer{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct {
			Model    string              `json:"model"`
			Messages []map[string]string `json:"messages"`
		}
		json.Unmarshal(b, &body)
		m.calls.Add(1)
		if d := time.Duration(m.delay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		if st := m.fail.Load(); st != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(int(st))
			io.WriteString(w, `{"error":{"message":"the model is down","type":"server_error"}}`)
			return
		}
		last := body.Messages[len(body.Messages)-1]["content"]
		var out string
		if strings.HasPrefix(body.Messages[0]["content"], "You judge") {
			m.judged.Add(1)
			out = "PASS: it is polite."
			if strings.Contains(last, "strict") {
				out = "FAIL: not strict enough."
			}
		} else {
			m.mu.Lock()
			reply := m.reply
			m.mu.Unlock()
			out = "echo: " + last
			if reply != nil {
				out = reply(last)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": out}}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}))
	t.Cleanup(m.Close)
	return m
}

// evalEnv is a quire with provider "local" (m) and a prompt "greet":
// version 1 "Hello {{name}}" live, draft 2 "Hi {{name}}!", and payloads
// ann and bo, ann asserting its output contains "Hello".
type evalEnv struct {
	*testenv.Env
	t       *testing.T
	m       *modelServer
	ann, bo string
	project string
}

func newEvalEnv(t *testing.T) *evalEnv {
	m := newModelServer(t)
	e := testenv.NewWith(t, testenv.Options{LLM: llm.Config{
		Providers: []llm.Provider{{Name: "local", BaseURL: m.URL + "/v1", APIKey: runKey}},
		Timeout:   5 * time.Second, Backoff: 10 * time.Millisecond, MaxBackoff: time.Second, Concurrency: 2,
	}})
	ev := &evalEnv{Env: e, t: t, m: m}
	ev.project = e.CreateProject(e.Admin, "evals")
	e.CreatePrompt(e.Admin, ev.project, "greet")
	e.Must(201, "POST", "/v1/prompts/greet/versions", e.Admin, obj{"template": "Hello {{name}}", "model": "gpt-test"})
	e.Must(200, "POST", "/v1/prompts/greet/versions/1/publish", e.Admin, nil)
	e.Must(201, "POST", "/v1/prompts/greet/versions", e.Admin, obj{"template": "Hi {{name}}!", "model": "gpt-test"})
	ev.ann = ev.payload("ann", obj{"name": "Ann"}, []obj{{"type": "contains", "value": "Hello"}})
	ev.bo = ev.payload("bo", obj{"name": "Bo"}, []obj{{"type": "max_length", "value": 100}})
	return ev
}

func (ev *evalEnv) payload(name string, vars obj, assertions []obj) string {
	r := ev.Must(201, "POST", "/v1/prompts/greet/payloads", ev.Admin, obj{"name": name, "variables": vars, "assertions": assertions})
	return r.JSON(ev.t)["payload"].(map[string]any)["id"].(string)
}

// evaluation is an evaluation as the API answers it.
type evaluation struct {
	Evaluation struct {
		ID        string `json:"id"`
		State     string `json:"state"`
		Version   int    `json:"version"`
		Against   string `json:"against"`
		Error     string `json:"error"`
		CreatedBy struct {
			Email string `json:"email"`
		} `json:"created_by"`
		CreatedAt string         `json:"created_at"`
		Counts    map[string]int `json:"counts"`
		Usage     map[string]int `json:"usage"`
	} `json:"evaluation"`
	Cases []struct {
		PayloadID   string         `json:"payload_id"`
		PayloadName string         `json:"payload_name"`
		Repeat      int            `json:"repeat"`
		Head        *evalSideView  `json:"head"`
		Against     *evalSideView  `json:"against"`
		Changed     bool           `json:"changed"`
		Extra       map[string]any `json:"-"`
	} `json:"cases"`
}

type evalSideView struct {
	Output     string `json:"output"`
	Assertions []struct {
		Type   string `json:"type"`
		Passed bool   `json:"passed"`
		Detail string `json:"detail"`
	} `json:"assertions"`
	Usage     map[string]int `json:"usage"`
	LatencyMS *int           `json:"latency_ms"`
	Cached    bool           `json:"cached"`
	Error     string         `json:"error"`
	Judges    []struct {
		Model  string `json:"model"`
		Output string `json:"output"`
	} `json:"judges"`
}

// start starts an evaluation of version n and returns its id.
func (ev *evalEnv) start(n int, body any) string {
	ev.t.Helper()
	r := ev.Must(202, "POST", fmt.Sprintf("/v1/prompts/greet/versions/%d/evaluations", n), ev.Admin, body)
	var out evaluation
	r.Decode(ev.t, &out)
	if out.Evaluation.State != "queued" || out.Evaluation.ID == "" || out.Evaluation.Version != n || out.Evaluation.CreatedBy.Email != testenv.AdminEmail || out.Evaluation.CreatedAt == "" {
		ev.t.Fatalf("started evaluation = %s", r.Body)
	}
	return out.Evaluation.ID
}

// wait polls evaluation id of version n until it is finished.
func (ev *evalEnv) wait(n int, id string) evaluation {
	ev.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var out evaluation
		ev.Must(200, "GET", fmt.Sprintf("/v1/prompts/greet/versions/%d/evaluations/%s", n, id), ev.Admin, nil).Decode(ev.t, &out)
		switch out.Evaluation.State {
		case "completed", "failed", "canceled":
			return out
		}
		if time.Now().After(deadline) {
			ev.t.Fatalf("evaluation %s still %s", id, out.Evaluation.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEvaluationAgainstLive(t *testing.T) {
	ev := newEvalEnv(t)
	id := ev.start(2, obj{"against": "live"})
	got := ev.wait(2, id)
	if got.Evaluation.State != "completed" || got.Evaluation.Against != "live" {
		t.Fatalf("evaluation = %+v", got.Evaluation)
	}
	if c := got.Evaluation.Counts; c["cases"] != 2 || c["passed"] != 1 || c["failed"] != 1 || c["errored"] != 0 || c["changed"] != 2 {
		t.Errorf("counts = %v", c)
	}
	if u := got.Evaluation.Usage; u["calls"] != 4 || u["input_tokens"] != 40 || u["output_tokens"] != 20 {
		t.Errorf("usage = %v", u)
	}
	if len(got.Cases) != 2 {
		t.Fatalf("cases = %+v", got.Cases)
	}
	ann := got.Cases[0]
	if ann.PayloadID != ev.ann || ann.PayloadName != "ann" || ann.Repeat != 1 || !ann.Changed {
		t.Errorf("case = %+v", ann)
	}
	if ann.Head.Output != "echo: Hi Ann!" || len(ann.Head.Assertions) != 1 || ann.Head.Assertions[0].Passed ||
		ann.Head.Assertions[0].Type != "contains" || ann.Head.Assertions[0].Detail != `does not contain "Hello"` ||
		ann.Head.Usage["input_tokens"] != 10 || ann.Head.LatencyMS == nil || ann.Head.Cached {
		t.Errorf("head = %+v", ann.Head)
	}
	if ann.Against == nil || ann.Against.Output != "echo: Hello Ann" || !ann.Against.Assertions[0].Passed {
		t.Errorf("against = %+v", ann.Against)
	}
	if bo := got.Cases[1]; bo.Head.Output != "echo: Hi Bo!" || !bo.Head.Assertions[0].Passed || bo.Head.Assertions[0].Detail != "12 characters, at most 100" {
		t.Errorf("bo = %+v", bo.Head)
	}
	if n := ev.m.calls.Load(); n != 4 {
		t.Errorf("provider called %d times, want 4", n)
	}

	// Listed under its version, not under another.
	if l := ev.Must(200, "GET", "/v1/prompts/greet/versions/2/evaluations", ev.Admin, nil).JSON(t)["evaluations"].([]any); len(l) != 1 || l[0].(map[string]any)["id"] != id {
		t.Errorf("list = %v", l)
	}
	if l := ev.Must(200, "GET", "/v1/projects/evals/prompts/greet/versions/1/evaluations", ev.Admin, nil).JSON(t)["evaluations"].([]any); len(l) != 0 {
		t.Errorf("version 1 lists %v", l)
	}
	ev.Must(404, "GET", "/v1/prompts/greet/versions/1/evaluations/"+id, ev.Admin, nil)
	// Project-scoped, and by a read key: reading is open to readers.
	reader := ev.CreateKey(ev.Admin, "read", ev.project)
	ev.Must(200, "GET", "/v1/projects/evals/prompts/greet/versions/2/evaluations/"+id, reader, nil)

	// The event, on the stream's log.
	evs := string(ev.Must(200, "GET", "/v1/projects/evals/events?limit=100", ev.Admin, nil).Body)
	if !strings.Contains(evs, `"evaluation.completed"`) || !strings.Contains(evs, `"evaluation":"`+id+`"`) {
		t.Errorf("events lack evaluation.completed:\n%s", evs)
	}
}

// TestEvaluationCache: an unchanged case is not sent again; fresh sends
// it; a changed payload sends only its cases.
func TestEvaluationCache(t *testing.T) {
	ev := newEvalEnv(t)
	ev.wait(2, ev.start(2, obj{"against": 1}))
	if n := ev.m.calls.Load(); n != 4 {
		t.Fatalf("first evaluation: %d calls", n)
	}
	start := time.Now()
	again := ev.wait(2, ev.start(2, obj{"against": 1}))
	if n := ev.m.calls.Load(); n != 4 {
		t.Errorf("a re-evaluation sent %d more calls", n-4)
	}
	if u := again.Evaluation.Usage; u["cached_calls"] != 4 || u["calls"] != 0 || !again.Cases[0].Head.Cached || again.Evaluation.Counts["failed"] != 1 {
		t.Errorf("cached evaluation: %+v %+v", again.Evaluation, again.Cases[0].Head)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a cached evaluation took %s", d)
	}
	ev.wait(2, ev.start(2, obj{"against": 1, "fresh": true}))
	if n := ev.m.calls.Load(); n != 8 {
		t.Errorf("fresh: %d calls, want 8", n)
	}
	ev.Must(200, "PUT", "/v1/prompts/greet/payloads/"+ev.bo, ev.Admin, obj{"variables": obj{"name": "Bob"}})
	ev.wait(2, ev.start(2, obj{"against": 1}))
	if n := ev.m.calls.Load(); n != 10 {
		t.Errorf("one payload changed: %d calls, want 10", n)
	}
	// repeat makes distinct cases, each sent.
	r := ev.wait(2, ev.start(2, obj{"repeat": 3, "payloads": []string{ev.ann}}))
	if len(r.Cases) != 3 || r.Cases[2].Repeat != 3 || r.Cases[0].Against != nil {
		t.Errorf("repeat: %+v", r.Cases)
	}
	if n := ev.m.calls.Load(); n != 12 { // repeat 1 of ann is cached
		t.Errorf("repeat 3: %d calls, want 12", n)
	}
}

// TestEvaluationAssertionKinds: every kind, the judge's call recorded.
func TestEvaluationAssertionKinds(t *testing.T) {
	ev := newEvalEnv(t)
	ev.m.mu.Lock()
	ev.m.reply = func(content string) string {
		if strings.Contains(content, "json") {
			return `{"a": 1, "b": "x"}`
		}
		return "echo: " + content
	}
	ev.m.mu.Unlock()
	id := ev.payload("json", obj{"name": "json"}, []obj{
		{"type": "contains", "value": `"a"`},
		{"type": "not_contains", "value": "error"},
		{"type": "equals", "value": `{"a": 1, "b": "x"}`},
		{"type": "regex", "value": `^\{.*\}$`},
		{"type": "max_length", "value": 5},
		{"type": "json_valid"},
		{"type": "json_schema", "schema": obj{"type": "object", "required": []string{"a"}, "properties": obj{"a": obj{"type": "integer"}}}},
		{"type": "json_schema", "schema": obj{"type": "object", "properties": obj{"b": obj{"type": "integer"}}}},
		{"type": "llm_judge", "rubric": "Is it polite?"},
		{"type": "llm_judge", "rubric": "Be strict.", "model": "judge-model"},
	})
	got := ev.wait(2, ev.start(2, obj{"payloads": []string{id}}))
	want := []struct {
		typ    string
		passed bool
		detail string
	}{
		{"contains", true, `contains "\"a\""`},
		{"not_contains", true, `does not contain "error"`},
		{"equals", true, "equals the expected text"},
		{"regex", true, `matches /^\{.*\}$/`},
		{"max_length", false, "18 characters, at most 5"},
		{"json_valid", true, "is JSON"},
		{"json_schema", true, "satisfies the schema"},
		{"json_schema", false, "/b: "},
		{"llm_judge", true, "PASS: it is polite."},
		{"llm_judge", false, "FAIL: not strict enough."},
	}
	h := got.Cases[0].Head
	if len(h.Assertions) != len(want) {
		t.Fatalf("assertions = %+v", h.Assertions)
	}
	for i, w := range want {
		a := h.Assertions[i]
		if a.Type != w.typ || a.Passed != w.passed || !strings.HasPrefix(a.Detail, w.detail) {
			t.Errorf("assertion %d = %+v, want %+v", i, a, w)
		}
	}
	if len(h.Judges) != 2 || h.Judges[0].Model != "gpt-test" || h.Judges[1].Model != "judge-model" || h.Judges[1].Output != "FAIL: not strict enough." {
		t.Errorf("judges = %+v", h.Judges)
	}
	if c := got.Evaluation.Counts; c["failed"] != 1 || c["passed"] != 0 {
		t.Errorf("counts = %v", c)
	}
	if u := got.Evaluation.Usage; u["calls"] != 3 {
		t.Errorf("usage = %v (the judges' calls count)", u)
	}
	// Judges are cached too.
	ev.wait(2, ev.start(2, obj{"payloads": []string{id}}))
	if n := ev.m.judged.Load(); n != 2 {
		t.Errorf("judge called %d times over two evaluations", n)
	}
}

// TestEvaluationCancel: cancel answers within a second and nothing is
// sent after it; the cases done stay.
func TestEvaluationCancel(t *testing.T) {
	ev := newEvalEnv(t)
	for i := range 20 {
		ev.payload(fmt.Sprintf("p%d", i), obj{"name": fmt.Sprintf("N%d", i)}, nil)
	}
	ev.m.delay.Store(int64(300 * time.Millisecond))
	id := ev.start(2, nil)
	time.Sleep(700 * time.Millisecond)
	start := time.Now()
	r := ev.Must(200, "POST", "/v1/prompts/greet/versions/2/evaluations/"+id+"/cancel", ev.Admin, nil)
	if d := time.Since(start); d > time.Second {
		t.Errorf("cancel took %s", d)
	}
	if s := r.JSON(t)["evaluation"].(map[string]any)["state"]; s != "canceled" {
		t.Errorf("canceled: %s", r.Body)
	}
	sent := ev.m.calls.Load()
	time.Sleep(500 * time.Millisecond)
	if n := ev.m.calls.Load(); n != sent {
		t.Errorf("%d calls after the cancel", n-sent)
	}
	got := ev.wait(2, id)
	if got.Evaluation.State != "canceled" || len(got.Cases) == 0 || len(got.Cases) >= 22 || got.Evaluation.Counts["cases"] != 22 {
		t.Errorf("canceled evaluation: %+v with %d cases", got.Evaluation, len(got.Cases))
	}
	if r := ev.Must(409, "POST", "/v1/prompts/greet/versions/2/evaluations/"+id+"/cancel", ev.Admin, nil); !strings.Contains(string(r.Body), "canceled") {
		t.Errorf("second cancel: %s", r.Body)
	}
	// A cancel emits no completed or failed event.
	if evs := string(ev.Must(200, "GET", "/v1/projects/evals/events?limit=100", ev.Admin, nil).Body); strings.Contains(evs, "evaluation.") {
		t.Errorf("events after a cancel:\n%s", evs)
	}
}

// TestEvaluationProviderDown: every case errored is a failed evaluation
// with its event; a run still answers meanwhile.
func TestEvaluationProviderDown(t *testing.T) {
	ev := newEvalEnv(t)
	ev.m.fail.Store(500)
	got := ev.wait(2, ev.start(2, nil))
	if got.Evaluation.State != "failed" || !strings.Contains(got.Evaluation.Error, "the model is down") || got.Evaluation.Counts["errored"] != 2 {
		t.Errorf("evaluation = %+v", got.Evaluation)
	}
	if got.Cases[0].Head.Error == "" || got.Cases[0].Head.Assertions == nil {
		t.Errorf("case = %+v", got.Cases[0].Head)
	}
	if evs := string(ev.Must(200, "GET", "/v1/projects/evals/events?limit=100", ev.Admin, nil).Body); !strings.Contains(evs, `"evaluation.failed"`) {
		t.Errorf("events lack evaluation.failed:\n%s", evs)
	}
}

// TestEvaluationRunsBesideRequests: a slow evaluation holds none of the
// provider slots a run needs.
func TestEvaluationRunsBesideRequests(t *testing.T) {
	ev := newEvalEnv(t)
	for i := range 10 {
		ev.payload(fmt.Sprintf("p%d", i), obj{"name": fmt.Sprintf("N%d", i)}, nil)
	}
	ev.m.delay.Store(int64(400 * time.Millisecond))
	id := ev.start(2, nil)
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	ev.Must(200, "POST", "/v1/prompts/greet/versions/2/run", ev.Admin, obj{"variables": obj{"name": "Cy"}})
	if d := time.Since(start); d > 800*time.Millisecond {
		t.Errorf("a run waited %s behind an evaluation", d)
	}
	ev.Must(200, "POST", "/v1/prompts/greet/versions/2/evaluations/"+id+"/cancel", ev.Admin, nil)
}

func TestEvaluationRefusals(t *testing.T) {
	ev := newEvalEnv(t)
	reader := ev.CreateKey(ev.Admin, "read", ev.project)
	ev.Must(403, "POST", "/v1/prompts/greet/versions/2/evaluations", reader, nil)
	id := ev.start(2, nil)
	ev.wait(2, id)
	ev.Must(403, "POST", "/v1/prompts/greet/versions/2/evaluations/"+id+"/cancel", reader, nil)

	bad := []struct {
		name   string
		status int
		path   string
		body   any
		want   string
	}{
		{"unknown field", 400, "2", obj{"versions": 1}, "unknown field"},
		{"malformed", 400, "2", `{"repeat":`, "malformed"},
		{"against word", 400, "2", obj{"against": "head"}, "against"},
		{"against zero", 400, "2", obj{"against": 0}, "against"},
		{"against object", 400, "2", obj{"against": obj{}}, "against"},
		{"repeat 6", 400, "2", obj{"repeat": 6}, "repeat"},
		{"repeat negative", 400, "2", obj{"repeat": -1}, "repeat"},
		{"payloads not a list", 400, "2", obj{"payloads": "x"}, ""},
		{"unknown payload", 422, "2", obj{"payloads": []string{ev.ann, "nope"}}, "/payloads/1"},
		{"against missing version", 422, "2", obj{"against": 9}, "version 9"},
		{"no such version", 404, "9", nil, ""},
		{"bad version", 400, "0", nil, ""},
		{"unknown label", 404, "nolabel", nil, ""},
	}
	calls := ev.m.calls.Load()
	for _, tc := range bad {
		r := ev.Do("POST", "/v1/prompts/greet/versions/"+tc.path+"/evaluations", ev.Admin, tc.body)
		if r.Status != tc.status || !strings.Contains(string(r.Body), tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, r.Status, r.Body, tc.status, tc.want)
		}
	}
	ev.Must(404, "GET", "/v1/prompts/greet/versions/2/evaluations/00000000-0000-4000-8000-000000000000", ev.Admin, nil)
	ev.Must(404, "GET", "/v1/prompts/greet/versions/2/evaluations/..%2Fx", ev.Admin, nil)
	ev.Must(404, "POST", "/v1/prompts/greet/versions/2/evaluations/00000000-0000-4000-8000-000000000000/cancel", ev.Admin, nil)
	if n := ev.m.calls.Load(); n != calls {
		t.Errorf("refused requests called the provider %d times", n-calls)
	}
	// A prompt without payloads, a version without a model.
	ev.CreatePrompt(ev.Admin, ev.project, "bare")
	ev.Must(201, "POST", "/v1/prompts/bare/versions", ev.Admin, obj{"template": "x"})
	if r := ev.Must(422, "POST", "/v1/prompts/bare/versions/1/evaluations", ev.Admin, nil); !strings.Contains(string(r.Body), "no model") {
		t.Errorf("no model: %s", r.Body)
	}
	ev.Must(200, "PATCH", "/v1/prompts/bare/versions/1", ev.Admin, obj{"model": "m"})
	if r := ev.Must(422, "POST", "/v1/prompts/bare/versions/1/evaluations", ev.Admin, nil); !strings.Contains(string(r.Body), "no payloads") {
		t.Errorf("no payloads: %s", r.Body)
	}
}

func TestEvaluationWithoutProvider(t *testing.T) {
	e := testenv.New(t)
	p := e.CreateProject(e.Admin, "np")
	e.CreatePrompt(e.Admin, p, "greet")
	e.Must(201, "POST", "/v1/prompts/greet/versions", e.Admin, obj{"template": "Hi", "model": "m"})
	e.Must(201, "POST", "/v1/prompts/greet/payloads", e.Admin, obj{"variables": obj{}})
	if r := e.Must(409, "POST", "/v1/prompts/greet/versions/1/evaluations", e.Admin, nil); !strings.Contains(string(r.Body), "no_provider") {
		t.Errorf("no provider: %s", r.Body)
	}
}

// TestEvaluationInGit: an evaluation is refs/evaluations/<id> of the
// prompt's repository, one JSON file per case, read with git log -p;
// clients fetch it on request and cannot push it.
func TestEvaluationInGit(t *testing.T) {
	ev := newEvalEnv(t)
	id := ev.start(2, obj{"against": "live"})
	ev.wait(2, id)
	g := newGitClient(t, ev.Env)
	w := t.TempDir()
	g.must(w, "clone", "-q", g.url(ev.Admin, "evals/prompts/greet.git"), "c")
	w += "/c"
	if out := g.must(w, "for-each-ref", "--format=%(refname)"); strings.Contains(out, "refs/evaluations") {
		t.Errorf("a plain clone fetched evaluations:\n%s", out)
	}
	g.must(w, "fetch", "-q", "origin", "refs/evaluations/*:refs/evaluations/*")
	ref := "refs/evaluations/" + id
	log := g.must(w, "log", "-p", "--format=%ae %s", ref)
	for _, want := range []string{
		testenv.AdminEmail + " Complete evaluation",
		testenv.AdminEmail + " Run evaluation",
		testenv.AdminEmail + " Evaluate version 2: 2 case(s) against live",
		"cases/" + ev.ann + "-1.json", `"output": "echo: Hi Ann!"`, `"state": "completed"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("git log -p %s lacks %q:\n%s", ref, want, log)
		}
	}
	if out := g.must(w, "show", ref+":cases/"+ev.bo+"-1.json"); !strings.Contains(out, `"payload_name": "bo"`) {
		t.Errorf("case file:\n%s", out)
	}
	g.must(w, "commit", "-q", "--allow-empty", "-m", "forged")
	for _, r := range []string{ref, "refs/evaluations/new"} {
		if out := g.fails(w, "push", g.url(ev.Admin, "evals/prompts/greet.git"), "+HEAD:"+r); !strings.Contains(out, "rejected") {
			t.Errorf("push to %s: %s", r, out)
		}
	}
	if out := g.must(w, "ls-remote", "origin"); strings.Count(out, "refs/evaluations/") != 1 {
		t.Errorf("refs after refused pushes:\n%s", out)
	}
}
