package client_test

import (
	"context"
	"testing"

	"github.com/quire/quire/client"
	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/render"
)

// The figures in docs/clients.md come from
//
//	go test -run '^$' -bench . -benchmem ./client
//
// and, for the server's whole render handler, BenchmarkRenderLive in
// httpapi.

const benchTemplate = "Hello {{name}}, here is a short note about {{topic}}."

func benchCache(b *testing.B) *client.PromptCache {
	begin(b)
	e := testenv.New(b)
	e.CreateProject(e.Admin, "bench")
	publishPrompt(b, e, "bench", "note", map[string]any{"template": benchTemplate})
	c, _ := newClient(b, e, e.Admin)
	pc := c.Prompts()
	b.Cleanup(pc.Close)
	must(pc.Get(context.Background(), "bench/note"))
	return pc
}

// BenchmarkPromptCacheGet is a Get served from memory.
func BenchmarkPromptCacheGet(b *testing.B) {
	pc := benchCache(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		pc.Get(ctx, "bench/note")
	}
}

// BenchmarkPromptCacheRender is a local render of a cached prompt.
func BenchmarkPromptCacheRender(b *testing.B) {
	pc := benchCache(b)
	ctx := context.Background()
	vars := map[string]any{"name": "Ann", "topic": "caching"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pc.Render(ctx, "bench/note", vars); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServerRenderInProcess is what the server's render costs in
// process once the prompt is cached and parsed (app.Render's own work):
// decode the request's variables, render the memoized template.
func BenchmarkServerRenderInProcess(b *testing.B) {
	t, err := render.ParseWithPartials(benchTemplate)
	if err != nil {
		b.Fatal(err)
	}
	raw := []byte(`{"name":"Ann","topic":"caching"}`)
	b.ReportAllocs()
	for b.Loop() {
		vars, err := render.DecodeVars(raw)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := t.RenderWith(vars, render.Options{Name: "note"}); err != nil {
			b.Fatal(err)
		}
	}
}
