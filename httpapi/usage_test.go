package httpapi_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire/cache"
	"github.com/quire/quire/internal/testenv"
)

func createPrompt(e *testenv.Env, projectID, slug string) string {
	e.T.Helper()
	r := e.Must(201, "POST", "/v1/projects/"+projectID+"/prompts", e.Admin, map[string]string{"name": "Prompt " + slug, "slug": slug})
	return r.JSON(e.T)["prompt"].(map[string]any)["id"].(string)
}

type usageBody struct {
	Usage struct {
		PromptID   string     `json:"prompt_id"`
		Renders    int64      `json:"renders"`
		LastUsedAt *time.Time `json:"last_used_at"`
		Versions   []struct {
			Version    int        `json:"version"`
			Renders    int64      `json:"renders"`
			LastUsedAt *time.Time `json:"last_used_at"`
		} `json:"versions"`
	} `json:"usage"`
}

func getUsage(e *testenv.Env, prompt, token string) usageBody {
	e.T.Helper()
	var u usageBody
	e.Must(200, "GET", "/v1/prompts/"+prompt+"/usage", token, nil).Decode(e.T, &u)
	return u
}

// TestPromptUsageSurvivesRestart counts renders through the call the render
// handler makes, reads them back, flushes them to git and reads them again
// from a fresh server on the same data root with an empty Redis.
func TestPromptUsageSurvivesRestart(t *testing.T) {
	root := t.TempDir()
	e := testenv.NewWith(t, testenv.Options{Root: root})
	ctx := context.Background()
	pid := e.CreateProject(e.Admin, "demo")
	prompt := createPrompt(e, pid, "greet")

	if u := getUsage(e, "greet", e.Admin); u.Usage.Renders != 0 || len(u.Usage.Versions) != 0 || u.Usage.LastUsedAt != nil {
		t.Fatalf("unused prompt has usage: %+v", u)
	}
	before := time.Now().Add(-time.Second)
	for range 3 {
		e.Server.RecordRender(ctx, prompt, 1)
	}
	e.Server.RecordRender(ctx, prompt, 2)
	check := func(env *testenv.Env, total, v1, v2 int64) {
		t.Helper()
		u := getUsage(env, prompt, env.Admin)
		if u.Usage.PromptID != prompt || u.Usage.Renders != total || len(u.Usage.Versions) != 2 ||
			u.Usage.Versions[0].Version != 1 || u.Usage.Versions[0].Renders != v1 ||
			u.Usage.Versions[1].Version != 2 || u.Usage.Versions[1].Renders != v2 {
			t.Fatalf("usage = %+v, want %d renders (v1 %d, v2 %d)", u.Usage, total, v1, v2)
		}
		if u.Usage.LastUsedAt == nil || u.Usage.LastUsedAt.Before(before) || u.Usage.Versions[0].LastUsedAt == nil {
			t.Fatalf("last_used_at = %v", u.Usage.LastUsedAt)
		}
	}
	check(e, 4, 3, 1)

	// Flushed to git: the same answer, now from git alone.
	if err := e.Usage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	check(e, 4, 3, 1)
	e.Server.RecordRender(ctx, prompt, 1) // pending again, on top of git
	check(e, 5, 4, 1)
	if err := e.Usage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, e.Store.Root()+"/_system.git", "fsck", "--strict")

	// A restart with an empty Redis keeps the flushed totals.
	e.HTTP.Close()
	e2 := testenv.NewWith(t, testenv.Options{Root: root})
	check(e2, 5, 4, 1)

	// Usage needs read access to the prompt.
	_, outsider := e2.CreateUser("out@example.com")
	e2.Must(404, "GET", "/v1/prompts/greet/usage", outsider, nil)
	e2.Must(401, "GET", "/v1/prompts/greet/usage", "", nil)
}

// TestUsageFlushesOnceAcrossProcesses runs two usage recorders over one
// Redis and one data root, as two quire processes would, flushing while
// renders come in: every render is counted exactly once.
func TestUsageFlushesOnceAcrossProcesses(t *testing.T) {
	e := testenv.New(t)
	ctx := context.Background()
	pid := e.CreateProject(e.Admin, "demo")
	prompt := createPrompt(e, pid, "greet")
	other, err := cache.NewUsage(e.Redis, e.Store, cache.UsageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const renders = 200
	var wg sync.WaitGroup
	for i, u := range []*cache.Usage{e.Usage, other} {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := range renders / 2 {
				if err := u.RecordRender(ctx, prompt, 1+j%2); err != nil {
					t.Error(err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 10 + i {
				if err := u.Flush(ctx); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	// The other process's last renders may still be held in it (pushed to
	// Redis within a batch interval): its final flush, as at its shutdown,
	// sends them. The API of this one counts its own at once.
	if err := other.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if u := getUsage(e, "greet", e.Admin); u.Usage.Renders != renders {
		t.Fatalf("renders = %d, want %d", u.Usage.Renders, renders)
	}
	if err := e.Usage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	durable, err := e.Store.PromptUsage(ctx, prompt)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, v := range durable.Versions {
		total += v.Renders
	}
	if total != renders {
		t.Fatalf("flushed renders = %d, want %d", total, renders)
	}
}

func TestAPIKeyLastUsed(t *testing.T) {
	root := t.TempDir()
	e := testenv.NewWith(t, testenv.Options{Root: root})
	key := e.CreateKey(e.Admin, "read")
	keyOf := func(env *testenv.Env) map[string]any {
		t.Helper()
		list := env.Must(200, "GET", "/v1/api-keys", env.Admin, nil).JSON(t)["api_keys"].([]any)
		if len(list) != 1 {
			t.Fatalf("%d keys", len(list))
		}
		return list[0].(map[string]any)
	}
	k := keyOf(e)
	if k["last_used_at"] != nil {
		t.Fatalf("unused key has last_used_at %v", k["last_used_at"])
	}
	before := time.Now().Add(-time.Second)
	e.Must(200, "GET", "/v1/auth/me", key, nil)
	k = keyOf(e)
	used, err := time.Parse(time.RFC3339Nano, k["last_used_at"].(string))
	if err != nil || used.Before(before) {
		t.Fatalf("last_used_at = %v (%v)", k["last_used_at"], err)
	}
	got := e.Must(200, "GET", "/v1/api-keys/"+k["id"].(string), e.Admin, nil).JSON(t)["api_key"].(map[string]any)
	if got["last_used_at"] != k["last_used_at"] {
		t.Fatalf("GET key last_used_at %v, list %v", got["last_used_at"], k["last_used_at"])
	}

	// Using a key does not write git: the system repository's main does
	// not move (metadata history stays the audit trail).
	head := testenv.Git(t, root+"/_system.git", "rev-parse", "main")
	e.Must(200, "GET", "/v1/auth/me", key, nil)
	if testenv.Git(t, root+"/_system.git", "rev-parse", "main") != head {
		t.Fatal("using an API key committed to the system repository")
	}

	if err := e.Usage.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.HTTP.Close()
	e2 := testenv.NewWith(t, testenv.Options{Root: root})
	if k2 := keyOf(e2); k2["last_used_at"] == nil {
		t.Fatal("last_used_at lost across a restart")
	}
}

// TestUsageBatchedPerProcess: a render is counted in its process first and
// reaches the shared Redis, where other processes read it, with the next
// push (every batch interval, and before every flush).
func TestUsageBatchedPerProcess(t *testing.T) {
	e := testenv.New(t)
	ctx := context.Background()
	pid := e.CreateProject(e.Admin, "demo")
	prompt := createPrompt(e, pid, "greet")
	other, err := cache.NewUsage(e.Redis, e.Store, cache.UsageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other.RecordRender(ctx, prompt, 1)
	e.Server.RecordRender(ctx, prompt, 1)
	if u := getUsage(e, "greet", e.Admin); u.Usage.Renders != 1 {
		t.Fatalf("before the other process pushes: renders = %d, want 1 (this process's own)", u.Usage.Renders)
	}
	if err := other.Push(ctx); err != nil {
		t.Fatal(err)
	}
	if u := getUsage(e, "greet", e.Admin); u.Usage.Renders != 2 {
		t.Fatalf("after the push: renders = %d, want 2", u.Usage.Renders)
	}
}

// TestAPIKeyLastUsedByGit: a key used only by git (ls-remote, clone) gets
// its last_used_at as API use does, kept across a flush and a restart.
func TestAPIKeyLastUsedByGit(t *testing.T) {
	root := t.TempDir()
	e := testenv.NewWith(t, testenv.Options{Root: root})
	e.CreateSkill(e.Admin, e.CreateProject(e.Admin, "demo"), "pdf")
	key := e.CreateKey(e.Admin, "read")
	lastUsed := func(env *testenv.Env) any {
		t.Helper()
		list := env.Must(200, "GET", "/v1/api-keys", env.Admin, nil).JSON(t)["api_keys"].([]any)
		if len(list) != 1 {
			t.Fatalf("%d keys", len(list))
		}
		return list[0].(map[string]any)["last_used_at"]
	}
	if got := lastUsed(e); got != nil {
		t.Fatalf("unused key has last_used_at %v", got)
	}
	g := newGitClient(t, e)
	before := time.Now().Add(-time.Second)
	g.must(t.TempDir(), "ls-remote", g.url(key, "demo/skills/pdf.git"))
	used, err := time.Parse(time.RFC3339Nano, fmt.Sprint(lastUsed(e)))
	if err != nil || used.Before(before) {
		t.Fatalf("after git ls-remote: last_used_at = %v (%v)", lastUsed(e), err)
	}
	g.must(t.TempDir(), "clone", "-q", g.url(key, "demo/skills/pdf.git"), "w")
	if err := e.Usage.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.HTTP.Close()
	if got := lastUsed(testenv.NewWith(t, testenv.Options{Root: root})); got == nil {
		t.Fatal("git use of the key lost across a flush and restart")
	}
}
