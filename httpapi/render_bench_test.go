package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// BenchmarkRenderLive is one render of a live two-variable prompt with an
// API key, through the whole handler (auth, cache, render, JSON), without
// the network.
func BenchmarkRenderLive(b *testing.B) {
	e := testenv.New(b)
	id := newPrompt(e, "bench")
	publishTemplate(e, id, "Hello {{name}}, here is a short note about {{topic}}.")
	key := e.CreateKey(e.Admin, "read")
	body := `{"variables":{"name":"Ann","topic":"caching"}}`
	path := "/v1/prompts/" + id + "/render"
	do := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		e.Server.ServeHTTP(w, req)
		return w
	}
	if w := do(); w.Code != http.StatusOK {
		b.Fatalf("%d %s", w.Code, w.Body)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		do()
	}
}

// BenchmarkLiveRead is one read of a prompt's live version with an API
// key, through the whole handler, without the network.
func BenchmarkLiveRead(b *testing.B) {
	e := testenv.New(b)
	id := newPrompt(e, "bench")
	publishTemplate(e, id, "Hello {{name}}, here is a short note about {{topic}}.")
	key := e.CreateKey(e.Admin, "read")
	path := "/v1/prompts/" + id + "/live"
	do := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		e.Server.ServeHTTP(w, req)
		return w
	}
	if w := do(); w.Code != http.StatusOK {
		b.Fatalf("%d %s", w.Code, w.Body)
	}
	b.ReportAllocs()
	for b.Loop() {
		do()
	}
}

// BenchmarkRenderNested compares, through the whole handler, a live
// prompt that includes a partial that includes a partial that includes a
// partial (3 levels) with a plain prompt rendering the same text: the
// goal is a nested rate of at least 0.8x the plain one.
func BenchmarkRenderNested(b *testing.B) {
	e := testenv.New(b)
	pid := e.CreateProject(e.Admin, "bench")
	const line = "Follow the house style, {{name}}; keep to {{topic}} and be brief.\n"
	l3 := e.CreatePrompt(e.Admin, pid, "level3")
	l2 := e.CreatePrompt(e.Admin, pid, "level2")
	l1 := e.CreatePrompt(e.Admin, pid, "level1")
	nested := e.CreatePrompt(e.Admin, pid, "nested")
	plain := e.CreatePrompt(e.Admin, pid, "plain")
	publishTemplate(e, l3, line)
	publishTemplate(e, l2, line+"{{> level3}}")
	publishTemplate(e, l1, line+"{{> level2}}")
	publishTemplate(e, nested, line+"{{> level1}}")
	publishTemplate(e, plain, strings.Repeat(line, 4))
	key := e.CreateKey(e.Admin, "read")
	body := `{"variables":{"name":"Ann","topic":"caching"}}`
	for _, bc := range []struct{ name, id string }{{"plain", plain}, {"nested3", nested}} {
		b.Run(bc.name, func(b *testing.B) {
			path := "/v1/prompts/" + bc.id + "/render"
			do := func() *httptest.ResponseRecorder {
				req := httptest.NewRequest("POST", path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+key)
				w := httptest.NewRecorder()
				e.Server.ServeHTTP(w, req)
				return w
			}
			w := do()
			if w.Code != http.StatusOK || strings.Count(w.Body.String(), "house style") != 4 {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
			b.ReportAllocs()
			for b.Loop() {
				do()
			}
		})
	}
}
