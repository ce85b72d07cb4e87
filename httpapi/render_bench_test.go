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
