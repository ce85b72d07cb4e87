package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/llm"
)

// provider is a local OpenAI-compatible chat-completions server on
// 127.0.0.1: by default it answers "<model> says: <last message>"; fail,
// when set, answers instead (true: answered).
type provider struct {
	*httptest.Server
	mu    sync.Mutex
	calls int
	fail  func(w http.ResponseWriter, model string) bool
}

func newProvider(t *testing.T) *provider {
	p := &provider{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model    string              `json:"model"`
			Messages []map[string]string `json:"messages"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil || r.URL.Path != "/v1/chat/completions" || len(body.Messages) == 0 {
			t.Errorf("provider got %s %s", r.URL.Path, b)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.calls++
		fail := p.fail
		p.mu.Unlock()
		if fail != nil && fail(w, body.Model) {
			return
		}
		time.Sleep(5 * time.Millisecond) // a latency to show
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": body.Model + " says: " + body.Messages[len(body.Messages)-1]["content"]}}},
			"usage": map[string]any{"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20},
		})
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *provider) set(fail func(w http.ResponseWriter, model string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail, p.calls = fail, 0
}

func (p *provider) called() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// runFixture is the web fixture with provider "local" configured, and a
// second version of the prompt "greeting" for side-by-side runs.
func runFixture(t *testing.T) (*fixture, *provider) {
	p := newProvider(t)
	f := newFixture(t, testenv.Options{LLM: llm.Config{
		Providers: []llm.Provider{{Name: "local", BaseURL: p.URL + "/v1", APIKey: "sk-web-test"}},
		Timeout:   5 * time.Second, Backoff: 10 * time.Millisecond, MaxBackoff: time.Second,
	}})
	f.e.Must(201, "POST", "/v1/prompts/"+f.promptID+"/versions", f.e.Admin, map[string]any{"template": "Hi {{name}}!", "model": "gpt-two"})
	return f, p
}

const playPath = "/ui/p/demo/prompts/greeting/play"

// Without a provider the playground says so instead of offering Run, and
// a forged run is refused with the reason, never a 500.
func TestPlaygroundRunWithoutProvider(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, f.e.URL)
	tok := b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	p := b.get(playPath)
	wantPage(t, p, 200, `id="run-why">No model provider is configured`)
	if strings.Contains(p.body, `value="run"`) {
		t.Errorf("the playground offers Run with no provider:\n%s", p.body)
	}
	r := b.do("POST", playPath+"?version=1", url.Values{"csrf": {tok}, "action": {"run"}, "var.name": {"Ada"}})
	wantPage(t, r, 409, "no model provider is configured")
}

// A run shows the model's output (escaped), finish reason, tokens and
// latency; two versions run side by side; a viewer may not run; each
// failure is a clear message with the API's status.
func TestPlaygroundRun(t *testing.T) {
	f, prov := runFixture(t)
	b := newBrowser(t, f.e.URL)
	tok := b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	wantPage(t, b.get(playPath), 200, `<button type="submit" name="action" value="run" id="run">Run</button>`, `<option value="2">v2 (draft)</option>`)

	probe := `<img src=x onerror=alert('out')>`
	r := b.do("POST", playPath+"?version=1", url.Values{"csrf": {tok}, "action": {"run"}, "var.name": {probe}})
	wantPage(t, r, 200, `<h2 id="runs-h">Run</h2>`, `<h3 id="run-h-0">v1</h3>`,
		`<pre class="source output" tabindex="0">gpt-test says: Hello &lt;img src=x onerror=alert(&#39;out&#39;)&gt; &lt;script&gt;</pre>`,
		`<dd class="finish">stop</dd>`, `<dd class="tokens">12 in, 8 out</dd>`, ` ms</dd>`, `<code>gpt-test</code> via <code>local</code>`)
	if strings.Contains(r.body, "<img src=x") || strings.Contains(r.body, "Hello <script>") {
		t.Errorf("the output is served as HTML:\n%s", r.body)
	}

	r = b.do("POST", playPath+"?version=1", url.Values{"csrf": {tok}, "action": {"run"}, "compare": {"2"}, "var.name": {"Bo"}})
	wantPage(t, r, 200, "Runs side by side", `<h3 id="run-h-0">v1</h3>`, `<h3 id="run-h-1">v2</h3>`,
		"gpt-test says: Hello Bo &lt;script&gt;", "gpt-two says: Hi Bo!", `<option value="2" selected>v2 (draft)</option>`)
	if n := prov.called(); n != 3 {
		t.Errorf("provider called %d times, want 3", n)
	}

	// Without its token the run is refused before the provider is called.
	prov.set(nil)
	wantPage(t, b.do("POST", playPath+"?version=1", url.Values{"action": {"run"}, "var.name": {"Bo"}}), 403)
	// A missing variable: the render's 422, and no call.
	wantPage(t, b.do("POST", playPath+"?version=1", url.Values{"csrf": {tok}, "action": {"run"}}), 422, `<p class="error" role="alert">`, "name")
	if n := prov.called(); n != 0 {
		t.Errorf("provider called %d times for refused runs", n)
	}

	prov.set(func(w http.ResponseWriter, _ string) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"the <b>model</b> is overloaded","type":"server_error"}}`)
		return true
	})
	r = b.do("POST", playPath+"?version=1", url.Values{"csrf": {tok}, "action": {"run"}, "var.name": {"Bo"}})
	wantPage(t, r, 502, `model provider &#34;local&#34; answered 500: the &lt;b&gt;model&lt;/b&gt; is overloaded`)

	prov.set(func(w http.ResponseWriter, _ string) bool {
		w.Header().Set("Retry-After", "120")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit"}}`)
		return true
	})
	r = b.do("POST", playPath+"?version=1", url.Values{"csrf": {tok}, "action": {"run"}, "var.name": {"Bo"}})
	wantPage(t, r, 503, `model provider &#34;local&#34; is rate limiting quire; retry later: try again in 120 s.`)
	if ra := r.header.Get("Retry-After"); ra != "120" {
		t.Errorf("Retry-After %q", ra)
	}

	// One version fails, the other answers: the page is the answer, with
	// the failure in its column.
	prov.set(func(w http.ResponseWriter, model string) bool {
		if model != "gpt-two" {
			return false
		}
		http.Error(w, "no such model", http.StatusNotFound)
		return true
	})
	r = b.do("POST", playPath+"?version=1", url.Values{"csrf": {tok}, "action": {"run"}, "compare": {"2"}, "var.name": {"Bo"}})
	wantPage(t, r, 200, "gpt-test says: Hello Bo", `<h3 id="run-h-1">v2</h3>`, `<p class="error" role="alert">model provider &#34;local&#34; answered 404`)

	// A viewer sees why there is no Run button, and a forged run is 403.
	viewerID, _ := f.e.CreateUser("viewer@example.com")
	f.e.Must(200, "PUT", "/v1/projects/demo/members/"+viewerID, f.e.Admin, map[string]string{"role": "viewer"})
	vb := newBrowser(t, f.e.URL)
	vtok := vb.signIn("viewer@example.com", "password-viewer@example.com")
	p := vb.get(playPath)
	wantPage(t, p, 200, `id="run-why">Running the prompt sends it to a model`)
	if strings.Contains(p.body, `value="run"`) {
		t.Errorf("a viewer is offered Run")
	}
	prov.set(nil)
	wantPage(t, vb.do("POST", playPath+"?version=1", url.Values{"csrf": {vtok}, "action": {"run"}, "var.name": {"Bo"}}), 403)
	if n := prov.called(); n != 0 {
		t.Errorf("provider called %d times for a viewer", n)
	}
}
