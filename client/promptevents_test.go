package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/quire/quire/client"
	"github.com/quire/quire/internal/testenv"
)

// awaitVersion polls Get until it answers version n (10 s at most): with
// a clock that never moves, only an event can bring it.
func awaitVersion(t *testing.T, pc *client.PromptCache, key string, n int, opts ...client.GetOption) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := must(pc.Get(context.Background(), key, opts...))
		if v.Number == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still at v%d 10s after the change, want v%d", key, v.Number, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPromptCacheEvents(t *testing.T) {
	begin(t)
	e := testenv.New(t)
	e.CreateProject(e.Admin, "support")
	publishPrompt(t, e, "support", "greeting", map[string]any{"template": "Hello {{name}}"})
	publishPrompt(t, e, "support", "other", map[string]any{"template": "Other"})

	e.Must(200, "PUT", "/v1/prompts/greeting/labels/stable", e.Admin, map[string]any{"version": 1})
	c, _ := newClient(t, e, e.CreateKey(e.Admin, "read"))
	clk, ev := newClock(), &events{}
	// The TTL never passes: the clock stands still.
	pc := c.Prompts(client.WithTTL(time.Hour), client.WithClock(clk.Now), client.WithMetrics(ev.hook), client.WithEvents())
	defer pc.Close()
	if v := must(pc.Get(context.Background(), "support/greeting")); v.Number != 1 {
		t.Fatalf("first get: v%d", v.Number)
	}
	must(pc.Get(context.Background(), "support/greeting", client.Label("stable")))

	// A publish is seen without waiting for the TTL.
	publishPrompt(t, e, "support", "greeting", map[string]any{"template": "Hi {{name}}"})
	awaitVersion(t, pc, "support/greeting", 2)
	out := must(pc.Render(context.Background(), "support/greeting", map[string]any{"name": "Ann"}))
	if *out.Text != "Hi Ann" {
		t.Fatalf("render after the event: %q", *out.Text)
	}
	ev.await(t, client.EventNotified, 1)
	// A label move too.
	e.Must(200, "PUT", "/v1/prompts/greeting/labels/stable", e.Admin, map[string]any{"version": 2})
	awaitVersion(t, pc, "support/greeting", 2, client.Label("stable"))
	// Without WithEvents nothing subscribes: the TTL alone applies.
	plain := c.Prompts(client.WithTTL(time.Hour), client.WithClock(clk.Now))
	defer plain.Close()
	must(plain.Get(context.Background(), "support/other"))
	publishPrompt(t, e, "support", "other", map[string]any{"template": "Other 2"})
	awaitVersion(t, pc, "support/greeting", 2) // the stream is still up
	if v := must(plain.Get(context.Background(), "support/other")); v.Number != 1 {
		t.Fatalf("a cache without events saw v%d within its TTL", v.Number)
	}
}
