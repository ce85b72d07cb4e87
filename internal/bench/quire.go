package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/cache"
	"github.com/quire/quire/gitproto"
	"github.com/quire/quire/gitstore"
	"github.com/quire/quire/internal/server"
	"github.com/quire/quire/llm"
	"github.com/quire/quire/telemetry"
	"golang.org/x/crypto/bcrypt"
)

// Quire is a quire under measurement, wired as quire serve wires it
// (metrics, tracing without an exporter, usage counting, prompt cache,
// git service, JSON logs at info level written in batches to a real
// file, as quire serve writes them), on a temporary data root, with a published prompt, a payload and a read API key.
type Quire struct {
	URL     string
	Store   *gitstore.Store
	Git     *gitproto.Server
	Prompts *cache.Prompts
	Usage   *cache.Usage
	// Handler is the API, for in-process benchmarks without the network.
	Handler http.Handler
	// Admin is an admin session; Key a read API key; ProjectID the
	// project ("bench") holding the prompt PromptID.
	Admin, Key, ProjectID, PromptID string
	// NestedID is a prompt rendering the same text as PromptID through
	// three levels of nested partials ({{> slug}}), all published.
	NestedID string

	close []func()
}

// Options configure Start.
type Options struct {
	// RedisURL is quire's Redis; empty runs an embedded one.
	RedisURL string
	// Git tunes the git service.
	Git gitstore.GitOptions
	// Fsync syncs objects and refs before a write is acknowledged
	// (quire serve --fsync).
	Fsync bool
	// NoProjectRepos keeps no project repositories: a baseline.
	NoProjectRepos bool
	// LLM are the model providers of runs and evaluations.
	LLM llm.Config
}

// AdminEmail and AdminPassword are the seeded admin's credentials.
const (
	AdminEmail    = "bench@example.com"
	AdminPassword = "bench-password"
)

// RenderBody is the render request the benchmarks send.
var RenderBody = []byte(`{"variables":{"name":"Ann","topic":"caching"}}`)

// Start runs a seeded quire on a fresh 127.0.0.1 port.
func Start(ctx context.Context, o Options) (q *Quire, err error) {
	q = &Quire{}
	defer func() {
		if err != nil {
			q.Close()
		}
	}()
	root, err := os.MkdirTemp("", "quire-bench-*")
	if err != nil {
		return nil, err
	}
	q.close = append(q.close, func() { os.RemoveAll(root) })
	// The access log goes where quire serve's goes: through its batching
	// writer to a file (a pipe or a file in production; never discarded,
	// which would leave the line's write out of the figures: issue 30).
	lf, err := os.CreateTemp("", "quire-bench-log-*.jsonl")
	if err != nil {
		return nil, err
	}
	logw := telemetry.NewLogWriter(lf, 0)
	q.close = append(q.close, func() { logw.Close(); lf.Close(); os.Remove(lf.Name()) })
	s, err := server.Build(ctx, server.Config{
		Data: root, Redis: o.RedisURL, RedisPrefix: fmt.Sprintf("quire-bench:%d:", time.Now().UnixNano()), DeleteRedisKeys: true,
		Logger: slog.New(slog.NewJSONHandler(logw, nil)), AccessLog: logw,
		Version:    "bench",
		Tracing:    telemetry.TracingOptions{ServiceName: "quire", Getenv: func(string) string { return "" }},
		BcryptCost: bcrypt.MinCost, UsageKeyResolution: 30 * time.Second,
		Git: o.Git, Fsync: o.Fsync, NoProjectRepos: o.NoProjectRepos, LLM: o.LLM,
	})
	if err != nil {
		return nil, err
	}
	q.close = append(q.close, func() { s.Close() })
	q.Store, q.Git, q.Prompts, q.Usage, q.Handler = s.Store, s.Git, s.Prompts, s.Usage, s.API
	url, stop, err := Serve(q.Handler)
	if err != nil {
		return nil, err
	}
	q.URL = url
	q.close = append(q.close, stop)
	return q, q.seed(ctx)
}

// Close stops the server and removes its data.
func (q *Quire) Close() {
	for i := len(q.close) - 1; i >= 0; i-- {
		q.close[i]()
	}
	q.close = nil
}

// seed creates the admin, a project, the prompt (published, with a
// payload) and a read key.
func (q *Quire) seed(ctx context.Context) error {
	hash, _ := bcrypt.GenerateFromPassword([]byte(AdminPassword), bcrypt.MinCost)
	if err := q.Store.CreateUser(ctx, quire.Actor{Name: "bench"}, &quire.User{Email: AdminEmail, Name: "Bench", Role: quire.RoleAdmin, PasswordHash: string(hash)}); err != nil {
		return err
	}
	var login struct{ Token string }
	if err := q.Call("POST", "/v1/auth/login", "", map[string]string{"email": AdminEmail, "password": AdminPassword}, &login); err != nil {
		return err
	}
	q.Admin = login.Token
	var proj struct{ Project struct{ ID string } }
	if err := q.Call("POST", "/v1/projects", q.Admin, map[string]string{"name": "Bench", "slug": "bench"}, &proj); err != nil {
		return err
	}
	q.ProjectID = proj.Project.ID
	var prompt struct{ Prompt struct{ ID string } }
	if err := q.Call("POST", "/v1/projects/"+proj.Project.ID+"/prompts", q.Admin, map[string]string{"name": "Greeting"}, &prompt); err != nil {
		return err
	}
	q.PromptID = prompt.Prompt.ID
	body := map[string]any{"template": "Hello {{name}}, here is a short note about {{topic}}.", "model": "gpt-test", "model_params": map[string]any{"temperature": 0.2}}
	if err := q.Call("POST", "/v1/prompts/"+q.PromptID+"/versions", q.Admin, body, nil); err != nil {
		return err
	}
	if err := q.Call("POST", "/v1/prompts/"+q.PromptID+"/versions/1/publish", q.Admin, nil, nil); err != nil {
		return err
	}
	payload := map[string]any{"name": "sample", "variables": map[string]any{"name": "Bo", "topic": "git"}}
	if err := q.Call("POST", "/v1/prompts/"+q.PromptID+"/payloads", q.Admin, payload, nil); err != nil {
		return err
	}
	nested, err := q.seedNested()
	if err != nil {
		return err
	}
	q.NestedID = nested
	var key struct{ Token string }
	if err := q.Call("POST", "/v1/api-keys", q.Admin, map[string]any{"name": "bench", "scope": "read"}, &key); err != nil {
		return err
	}
	q.Key = key.Token
	return nil
}

// seedNested publishes four prompts, each of the first three including
// the next, and returns the first: "Hello {{name}}, {{> bench-l1}}" and so
// on down to "{{topic}}.", the text of the plain prompt.
func (q *Quire) seedNested() (string, error) {
	levels := []struct{ slug, template string }{
		{"bench-l3", "{{topic}}."},
		{"bench-l2", "note about {{> bench-l3}}"},
		{"bench-l1", "here is a short {{> bench-l2}}"},
		{"bench-nested", "Hello {{name}}, {{> bench-l1}}"},
	}
	var id string
	for _, l := range levels {
		var prompt struct{ Prompt struct{ ID string } }
		if err := q.Call("POST", "/v1/projects/"+q.ProjectID+"/prompts", q.Admin, map[string]string{"name": l.slug, "slug": l.slug}, &prompt); err != nil {
			return "", err
		}
		id = prompt.Prompt.ID
		body := map[string]any{"template": l.template, "model": "gpt-test", "model_params": map[string]any{"temperature": 0.2}}
		if err := q.Call("POST", "/v1/prompts/"+id+"/versions", q.Admin, body, nil); err != nil {
			return "", err
		}
		if err := q.Call("POST", "/v1/prompts/"+id+"/versions/1/publish", q.Admin, nil, nil); err != nil {
			return "", err
		}
	}
	return id, nil
}

// Call sends one API request and decodes the answer into out (if not nil).
func (q *Quire) Call(method, path, token string, body, out any) error {
	return CallJSON(http.DefaultClient, method, q.URL+path, token, body, out)
}

// CallJSON sends body as JSON with token to url through c and decodes a
// 2xx answer into out (when not nil); any other status is an error.
func CallJSON(c *http.Client, method, url, token string, body, out any) error {
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	status, resp, err := Request{Method: method, URL: url, Token: token, Body: b}.Do(c)
	if err != nil {
		return err
	}
	if status >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, url, status, resp)
	}
	if out != nil {
		return json.Unmarshal(resp, out)
	}
	return nil
}
