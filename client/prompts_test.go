package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/client"
	"github.com/quire/quire/internal/testenv"
)

// clock is a test clock that only moves when told.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// events records what a cache reports.
type events struct {
	mu    sync.Mutex
	seen  []client.CacheEvent
	stale []error
}

func (ev *events) hook(_ string, e client.CacheEvent) {
	ev.mu.Lock()
	ev.seen = append(ev.seen, e)
	ev.mu.Unlock()
}

func (ev *events) onStale(_ string, err error) {
	ev.mu.Lock()
	ev.stale = append(ev.stale, err)
	ev.mu.Unlock()
}

func (ev *events) count(e client.CacheEvent) int {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	n := 0
	for _, s := range ev.seen {
		if s == e {
			n++
		}
	}
	return n
}

// await polls until the cache has reported e n times (a background
// revalidation finished), or fails after a deadline.
func (ev *events) await(t testing.TB, e client.CacheEvent, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for ev.count(e) < n {
		if time.Now().After(deadline) {
			t.Fatalf("no %d×%s after 10s; events %v", n, e, ev.seen)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (ev *events) lastStale() error {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.stale) == 0 {
		return nil
	}
	return ev.stale[len(ev.stale)-1]
}

// publishPrompt creates (or revises) prompt slug in project with body
// and publishes the new version.
func publishPrompt(t testing.TB, e *testenv.Env, project, slug string, body map[string]any) {
	t.Helper()
	r := e.Do("GET", "/v1/prompts/"+slug, e.Admin, nil)
	if r.Status == 404 {
		e.Must(201, "POST", "/v1/projects/"+project+"/prompts", e.Admin, map[string]string{"name": slug, "slug": slug})
	}
	v := e.Must(201, "POST", "/v1/prompts/"+slug+"/versions", e.Admin, body).JSON(t)["version"].(map[string]any)["version"].(float64)
	e.Must(200, "POST", "/v1/prompts/"+slug+"/versions/"+itoa(int(v))+"/publish", e.Admin, nil)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestPromptCacheRevalidates(t *testing.T) {
	begin(t)
	e := testenv.New(t)
	ctx := context.Background()
	e.CreateProject(e.Admin, "support")
	publishPrompt(t, e, "support", "greeting", map[string]any{"template": "Hello {{name}}"})

	c, tr := newClient(t, e, e.Admin)
	clk, ev := newClock(), &events{}
	pc := c.Prompts(client.WithTTL(time.Minute), client.WithClock(clk.Now), client.WithMetrics(ev.hook))
	defer pc.Close()

	v1 := must(pc.Get(ctx, "support/greeting"))
	if v1.Number != 1 || *v1.Template != "Hello {{name}}" {
		t.Fatalf("first get %+v", v1)
	}
	sent := tr.n.Load()
	again := must(pc.Get(ctx, "support/greeting"))
	if again != v1 || tr.n.Load() != sent {
		t.Fatalf("a fresh Get made %d requests", tr.n.Load()-sent)
	}
	r := must(pc.Render(ctx, "support/greeting", map[string]any{"name": "Ann"}))
	if *r.Text != "Hello Ann" || r.Version != 1 || tr.n.Load() != sent {
		t.Fatalf("render %q v%d, %d requests", *r.Text, r.Version, tr.n.Load()-sent)
	}

	// A new version stays unseen within the TTL...
	publishPrompt(t, e, "support", "greeting", map[string]any{"template": "Hi {{name}}"})
	clk.Advance(59 * time.Second)
	if v := must(pc.Get(ctx, "support/greeting")); v.Number != 1 {
		t.Fatalf("within the TTL: v%d", v.Number)
	}
	// ...then a Get answers at once with what it holds and revalidates
	// in the background.
	clk.Advance(2 * time.Second)
	if v := must(pc.Get(ctx, "support/greeting")); v.Number != 1 {
		t.Fatalf("stale get: v%d", v.Number)
	}
	ev.await(t, client.EventUpdated, 1)
	if v := must(pc.Get(ctx, "support/greeting")); v.Number != 2 {
		t.Fatalf("after revalidation: v%d", v.Number)
	}
	// Unchanged: the revalidation is a 304 carrying If-None-Match.
	clk.Advance(2 * time.Minute)
	must(pc.Get(ctx, "support/greeting"))
	ev.await(t, client.EventNotModified, 1)
	tr.mu.Lock()
	last, lastINM := tr.statuses[len(tr.statuses)-1], tr.inm[len(tr.inm)-1]
	tr.mu.Unlock()
	v2 := must(pc.Get(ctx, "support/greeting"))
	if last != http.StatusNotModified || lastINM != `"`+v2.Commit+`"` {
		t.Fatalf("revalidation: status %d with If-None-Match %s", last, lastINM)
	}

	// A pinned version is cached apart from the live one.
	if v := must(pc.Get(ctx, "support/greeting", client.Version(1))); v.Number != 1 || *v.Template != "Hello {{name}}" {
		t.Fatalf("Version(1): %+v", v)
	}
	// A prompt deleted on the server is dropped at its revalidation.
	e.Must(204, "DELETE", "/v1/prompts/greeting", e.Admin, nil)
	clk.Advance(2 * time.Minute)
	must(pc.Get(ctx, "support/greeting"))
	ev.await(t, client.EventEvicted, 1)
	_, err := pc.Get(ctx, "support/greeting")
	if !client.IsNotFound(err) {
		t.Fatalf("get of a deleted prompt: %v", err)
	}

	// Bad keys and unknown prompts.
	for _, key := range []string{"", "support", "/greeting", "support/", "a/b/c"} {
		if _, err := pc.Get(ctx, key); err == nil {
			t.Errorf("Get(%q) succeeded", key)
		}
	}
	if _, err := pc.Get(ctx, "support/nope"); !client.IsNotFound(err) {
		t.Errorf("unknown prompt: %v", err)
	}
	if _, err := pc.Get(ctx, "nope/greeting"); !client.IsNotFound(err) {
		t.Errorf("unknown project: %v", err)
	}
}

// TestPromptCacheServerDown: 5xx answers, then the server stopped; the
// cache serves and renders its last good versions, reports each failure,
// and serves seeded fallbacks for prompts it never fetched.
func TestPromptCacheServerDown(t *testing.T) {
	begin(t)
	e := testenv.New(t)
	ctx := context.Background()
	e.CreateProject(e.Admin, "support")
	publishPrompt(t, e, "support", "greeting", map[string]any{"template": "Hello {{name}}"})

	// A proxy that can answer 503 in the server's place.
	var failing atomic.Bool
	target, _ := url.Parse(e.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"redis is down","code":"unavailable"}`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()

	clk, ev := newClock(), &events{}
	opts := []client.CacheOption{client.WithTTL(time.Minute), client.WithClock(clk.Now), client.WithMetrics(ev.hook), client.WithStaleHandler(ev.onStale),
		client.WithFallback("support/farewell", "Bye {{name}}")}
	viaProxy := must(client.New(proxy.URL, client.WithToken(e.Admin)))
	pc := viaProxy.Prompts(opts...)
	defer pc.Close()
	direct := must(client.New(e.URL, client.WithToken(e.Admin)))
	pd := direct.Prompts(opts...)
	defer pd.Close()
	for _, p := range []*client.PromptCache{pc, pd} {
		must(p.Get(ctx, "support/greeting"))
	}

	// 5xx: the last good version stays, the failure is reported.
	failing.Store(true)
	clk.Advance(2 * time.Minute)
	if v := must(pc.Get(ctx, "support/greeting")); v.Number != 1 {
		t.Fatalf("stale get %+v", v)
	}
	ev.await(t, client.EventError, 1)
	var ae *client.APIError
	if err := ev.lastStale(); !errors.As(err, &ae) || ae.Status != 503 || ae.Code != "unavailable" {
		t.Fatalf("stale handler heard %v", err)
	}
	if r := must(pc.Render(ctx, "support/greeting", map[string]any{"name": "Ann"})); *r.Text != "Hello Ann" {
		t.Fatalf("render while failing: %q", *r.Text)
	}

	// The server stopped: nothing answers at all.
	e.HTTP.Close()
	clk.Advance(2 * time.Minute)
	if r := must(pd.Render(ctx, "support/greeting", map[string]any{"name": "Bea"})); *r.Text != "Hello Bea" {
		t.Fatalf("render with the server down: %q", *r.Text)
	}
	ev.await(t, client.EventError, 2)
	if err := ev.lastStale(); err == nil || errors.As(err, &ae) {
		t.Fatalf("stale handler heard %v, want a connection error", err)
	}
	// Never fetched: the fallback when seeded, else the error.
	r := must(pd.Render(ctx, "support/farewell", map[string]any{"name": "Cy"}))
	if *r.Text != "Bye Cy" || r.Version != 0 {
		t.Fatalf("fallback render %+v", r)
	}
	if ev.count(client.EventFallback) != 1 {
		t.Fatalf("fallback events %d", ev.count(client.EventFallback))
	}
	if _, err := pd.Get(ctx, "support/other"); err == nil {
		t.Fatal("a prompt never fetched and not seeded was served with the server down")
	}
	// A fallback is not served for a pinned version.
	if _, err := pd.Get(ctx, "support/farewell", client.Version(3)); err == nil {
		t.Fatal("a pinned version was served from a fallback")
	}
}

// TestPromptCacheGetAllocs: a cached Get makes no request and no
// allocation.
func TestPromptCacheGetAllocs(t *testing.T) {
	begin(t)
	e := testenv.New(t)
	ctx := context.Background()
	e.CreateProject(e.Admin, "support")
	publishPrompt(t, e, "support", "greeting", map[string]any{"template": "Hello {{name}}"})
	c, tr := newClient(t, e, e.Admin)
	pc := c.Prompts()
	defer pc.Close()
	must(pc.Get(ctx, "support/greeting"))
	must(pc.Get(ctx, "support/greeting", client.Version(1)))
	sent := tr.n.Load()
	allocs := testing.AllocsPerRun(200, func() {
		pc.Get(ctx, "support/greeting")
		pc.Get(ctx, "support/greeting", client.Version(1))
	})
	if allocs != 0 || tr.n.Load() != sent {
		t.Fatalf("cached Get: %.1f allocations, %d requests", allocs, tr.n.Load()-sent)
	}
}

type specCase struct {
	Name     string            `json:"name"`
	Data     json.RawMessage   `json:"data"`
	Template string            `json:"template"`
	Partials map[string]string `json:"partials"`
}

// TestRenderMatchesServer renders the vendored Mustache spec (every case
// whose data is an object and that needs no partials) with the server
// and with the cache: the same text, or both refuse.
func TestRenderMatchesServer(t *testing.T) {
	if raceDetector {
		// Hundreds of renders one after another: the detector finds
		// nothing here the concurrency tests do not, and makes it one of
		// the slowest tests; make test runs it without -race.
		t.Skip("sequential and heavy: make test runs it without -race")
	}
	begin(t)
	e := testenv.New(t)
	ctx := context.Background()
	e.CreateProject(e.Admin, "spec")
	files, _ := filepath.Glob("../render/testdata/spec/*.json")
	if len(files) == 0 {
		t.Fatal("no spec files")
	}
	type posed struct {
		slug, name string
		vars       json.RawMessage
	}
	var cases []posed
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Tests []specCase }
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for _, sc := range doc.Tests {
			if len(sc.Partials) > 0 || !strings.HasPrefix(strings.TrimSpace(string(sc.Data)), "{") {
				continue
			}
			n++
			slug := "c" + itoa(n)
			e.Must(201, "POST", "/v1/projects/spec/prompts", e.Admin, map[string]string{"name": slug, "slug": slug})
			if r := e.Do("POST", "/v1/prompts/"+slug+"/versions", e.Admin, map[string]any{"template": sc.Template}); r.Status != 201 {
				continue // a template the server does not store (not a render case)
			}
			if r := e.Do("POST", "/v1/prompts/"+slug+"/versions/1/publish", e.Admin, nil); r.Status != 200 {
				continue
			}
			cases = append(cases, posed{slug, filepath.Base(f) + "/" + sc.Name, sc.Data})
		}
	}
	if len(cases) < 80 {
		t.Fatalf("only %d spec cases posed", len(cases))
	}
	t.Logf("%d spec cases posed", len(cases))
	c, _ := newClient(t, e, e.Admin)
	pc := c.Prompts()
	defer pc.Close()
	for _, k := range cases {
		srv := e.Do("POST", "/v1/prompts/"+k.slug+"/render", e.Admin, `{"variables":`+string(k.vars)+`}`)
		dec := json.NewDecoder(strings.NewReader(string(k.vars)))
		dec.UseNumber()
		var vars map[string]any
		if err := dec.Decode(&vars); err != nil {
			t.Fatal(err)
		}
		local, err := pc.Render(ctx, "spec/"+k.slug, vars)
		switch {
		case srv.Status == 200 && err == nil:
			var got struct {
				Rendered string `json:"rendered"`
			}
			srv.Decode(t, &got)
			if got.Rendered != *local.Text {
				t.Errorf("%s: server %q, cache %q", k.name, got.Rendered, *local.Text)
			}
		case srv.Status == 422 && quire.ErrorCode(err) == quire.EUNPROCESSABLE:
			var got struct {
				Details map[string]any `json:"details"`
			}
			srv.Decode(t, &got)
			var qe *quire.Error
			errors.As(err, &qe)
			if !reflect.DeepEqual(got.Details["missing"], toAny(qe.Details["missing"])) {
				t.Errorf("%s: server missing %v, cache %v", k.name, got.Details["missing"], qe.Details["missing"])
			}
		default:
			t.Errorf("%s: server %d %s, cache %v", k.name, srv.Status, srv.Body, err)
		}
	}
}

// toAny turns a []string into the []any JSON decoding gives.
func toAny(v any) any {
	if l, ok := v.([]string); ok {
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out
	}
	return v
}

// TestRenderChatAndPartials: a chat prompt with a placeholder and a
// partial, live and pinned, and Go-typed variables, render as on the
// server.
func TestRenderChatAndPartials(t *testing.T) {
	begin(t)
	e := testenv.New(t)
	ctx := context.Background()
	e.CreateProject(e.Admin, "support")
	publishPrompt(t, e, "support", "sig", map[string]any{"template": "-- {{team}} v1"})
	publishPrompt(t, e, "support", "sig", map[string]any{"template": "-- {{team}} v2"})
	publishPrompt(t, e, "support", "chat", map[string]any{"messages": []map[string]any{
		{"role": "system", "content": "You help {{name}} ({{age}}, {{score}}). {{> sig}} {{> sig@1}}"},
		{"type": "placeholder", "name": "history"},
		{"role": "user", "content": "{{#items}}[{{.}}]{{/items}} {{question}}"},
	}})
	vars := map[string]any{
		"name": "Ann", "age": 42, "score": 1.5, "team": "Support", "question": "Why?",
		"items":   []any{1, "two", true},
		"history": []any{map[string]any{"role": "user", "content": "Hi"}, map[string]any{"role": "assistant", "content": "Hello"}},
	}
	body, _ := json.Marshal(map[string]any{"variables": vars})
	var srv client.Rendered
	e.Must(200, "POST", "/v1/prompts/chat/render", e.Admin, body).Decode(t, &srv)
	c, _ := newClient(t, e, e.Admin)
	pc := c.Prompts()
	defer pc.Close()
	local := must(pc.Render(ctx, "support/chat", vars))
	if !reflect.DeepEqual(local.Messages, srv.Messages) || local.Commit != srv.Commit || local.Version != srv.Version {
		t.Fatalf("local %+v\nserver %+v", local, srv)
	}
	if !reflect.DeepEqual(local.Partials, srv.Partials) {
		t.Fatalf("partials local %+v, server %+v", local.Partials, srv.Partials)
	}
	// Bad placeholder values fail alike.
	vars["history"] = "not a list"
	body, _ = json.Marshal(map[string]any{"variables": vars})
	e.Must(422, "POST", "/v1/prompts/chat/render", e.Admin, body)
	if _, err := pc.Render(ctx, "support/chat", vars); quire.ErrorCode(err) != quire.EUNPROCESSABLE {
		t.Fatalf("bad placeholder: %v", err)
	}
	delete(vars, "question")
	if _, err := pc.Render(ctx, "support/chat", vars); quire.ErrorCode(err) != quire.EUNPROCESSABLE {
		t.Fatalf("missing variable: %v", err)
	}
}
