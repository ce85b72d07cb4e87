package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// fuzzRoute is a write endpoint taking a body. {p}, {s}, {u} stand for a
// project, a skill with an open draft 1, and a member user; {q} for a
// prompt with version 1 live and draft 2 open, {y} for its payload.
// New routes go at the end: the committed corpus names routes by index.
type fuzzRoute struct {
	method, path, contentType string
	seed                      string // a body the endpoint accepts
}

var fuzzRoutes = []fuzzRoute{
	{"POST", "/v1/auth/login", "application/json", `{"email":"admin@example.com","password":"admin-password"}`},
	{"POST", "/v1/users", "application/json", `{"email":"new@example.com","password":"password-123","name":"New","role":"member"}`},
	{"PATCH", "/v1/users/{u}", "application/json", `{"name":"Renamed","disabled":false}`},
	{"POST", "/v1/api-keys", "application/json", `{"name":"ci","scope":"write","project_ids":["{p}"],"expires_at":"2099-01-01T00:00:00Z"}`},
	{"POST", "/v1/projects", "application/json", `{"name":"Fuzz project","slug":"fuzz-project","description":"d"}`},
	{"PATCH", "/v1/projects/{p}", "application/json", `{"description":"changed"}`},
	{"POST", "/v1/projects/{p}/members", "application/json", `{"email":"victim@example.com","role":"editor"}`},
	{"PUT", "/v1/projects/{p}/members/{u}", "application/json", `{"role":"viewer"}`},
	{"POST", "/v1/projects/{p}/skills", "application/json", `{"name":"Another skill","description":"d"}`},
	{"POST", "/v1/projects/{p}/prompts", "application/json", `{"name":"A prompt","slug":"a-prompt"}`},
	{"PATCH", "/v1/skills/{s}", "application/json", `{"description":"new description"}`},
	{"POST", "/v1/skills/{s}/versions", "application/json", `{"from":"empty"}`},
	{"POST", "/v1/skills/{s}/versions/1/files", "application/json", `{"file_path":"scripts/run.py","content":"print(1)\n","message":"m"}`},
	{"POST", "/v1/skills/{s}/versions/upload", "application/zip", "PK\x05\x06" + strings.Repeat("\x00", 18)},
	{"PUT", "/v1/skills/{s}/versions/1/files", "application/zip", "PK\x05\x06" + strings.Repeat("\x00", 18)},
	{"PATCH", "/v1/prompts/{q}", "application/json", `{"name":"Renamed prompt","description":"d"}`},
	{"POST", "/v1/prompts/{q}/versions", "application/json", `{"from":"empty","template":"Hi {{name}}","model":"gpt-x","model_params":{"temperature":0.2}}`},
	{"PATCH", "/v1/prompts/{q}/versions/2", "application/json", `{"messages":[{"role":"system","content":"{{#items}}- {{.}}\n{{/items}}"}],"model":"m"}`},
	{"POST", "/v1/prompts/{q}/payloads", "application/json", `{"name":"p","variables":{"name":"Ada","items":[1,2]}}`},
	{"PUT", "/v1/prompts/{q}/payloads/{y}", "application/json", `{"variables":{"name":"Bob"}}`},
	{"POST", "/v1/prompts/{q}/render", "application/json", `{"variables":{"name":"Ada"},"payload_id":"{y}","version":1}`},
	{"POST", "/v1/projects/{p}/prompts/fz-prompt/render", "application/json", `{"variables":{"name":"` + strings.Repeat("x", 100) + `"}}`},
	// The fuzz server has no model provider: a run that decodes answers 409 no_provider, never 500.
	{"POST", "/v1/prompts/{q}/versions/1/run", "application/json", `{"variables":{"name":"Ada"},"payload_id":"{y}","model":"m","provider":"p"}`},
	// As for runs: an evaluation request that decodes answers 409 no_provider.
	{"POST", "/v1/prompts/{q}/versions/1/evaluations", "application/json", `{"against":"live","payloads":["{y}"],"repeat":2,"fresh":true}`},
	// Reviews and labels (reviews.go, labels.go): review 1 is open on
	// skill draft 1 and on prompt draft 2.
	{"POST", "/v1/skills/{s}/versions/1/reviews", "application/json", `{"title":"t","description":"d"}`},
	{"POST", "/v1/prompts/{q}/versions/2/reviews", "application/json", `{"title":"t"}`},
	{"POST", "/v1/skills/{s}/reviews/1/comments", "application/json", `{"body":"b","path":"SKILL.md","line":1,"side":"head","in_reply_to":""}`},
	{"POST", "/v1/prompts/{q}/reviews/1/comments", "application/json", `{"body":"b"}`},
	{"PATCH", "/v1/skills/{s}/reviews/1/comments/c1", "application/json", `{"resolved":true}`},
	{"PATCH", "/v1/prompts/{q}/reviews/1/comments/c1", "application/json", `{"body":"b"}`},
	{"POST", "/v1/skills/{s}/reviews/1/approve", "application/json", `{"body":"ok"}`},
	{"POST", "/v1/prompts/{q}/reviews/1/approve", "application/json", `{}`},
	{"POST", "/v1/skills/{s}/reviews/1/request-changes", "application/json", `{"body":"no"}`},
	{"POST", "/v1/prompts/{q}/reviews/1/request-changes", "application/json", `{"body":"no"}`},
	{"POST", "/v1/skills/{s}/reviews/1/close", "application/json", `{}`},
	{"POST", "/v1/prompts/{q}/reviews/1/close", "application/json", `{}`},
	{"POST", "/v1/skills/{s}/reviews/1/reopen", "application/json", `{}`},
	{"POST", "/v1/prompts/{q}/reviews/1/reopen", "application/json", `{}`},
	{"PUT", "/v1/skills/{s}/labels/staging", "application/json", `{"version":1,"override":false,"reason":""}`},
	{"PUT", "/v1/prompts/{q}/labels/staging", "application/json", `{"version":1}`},
	{"DELETE", "/v1/skills/{s}/labels/staging", "application/json", ``},
	{"DELETE", "/v1/prompts/{q}/labels/staging", "application/json", ``},
	{"POST", "/v1/projects/{p}/webhooks", "application/json", `{"url":"http://192.0.2.1/hook","events":["version.published"],"assets":["fz-skill"],"description":"d","active":false}`},
	{"PATCH", "/v1/projects/{p}/webhooks/{w}", "application/json", `{"events":["*"],"description":"changed"}`},
}

// bodylessWrites are the write routes whose handlers read no body, so
// there is nothing to fuzz: actions named by their path alone. The git
// routes have their own target, FuzzGitEndpoints.
var bodylessWrites = map[string]bool{
	"DELETE /v1/api-keys/:keyID":                                              true,
	"POST /v1/api-keys/:keyID/rotate":                                         true,
	"DELETE /v1/auth/session":                                                 true,
	"DELETE /v1/auth/sessions/:sessionID":                                     true,
	"POST /v1/cache/purge":                                                    true,
	"POST /v1/prompts/:id/versions/:version/check":                            true,
	"POST /v1/prompts/:id/versions/:version/evaluations/:evaluationID/cancel": true,
	"DELETE /v1/projects/:projectID":                                          true,
	"DELETE /v1/projects/:projectID/members/:userID":                          true,
	"DELETE /v1/users/:userID":                                                true,
	"DELETE /v1/skills/:id":                                                   true,
	"DELETE /v1/skills/:id/versions/:version":                                 true,
	"DELETE /v1/skills/:id/versions/:version/files/*file_path":                true,
	"POST /v1/skills/:id/versions/:version/archive":                           true,
	"POST /v1/skills/:id/versions/:version/promote":                           true,
	"POST /v1/skills/:id/versions/:version/publish":                           true,
	"DELETE /v1/prompts/:id":                                                  true,
	"DELETE /v1/prompts/:id/payloads/:payloadID":                              true,
	"DELETE /v1/prompts/:id/versions/:version":                                true,
	"POST /v1/prompts/:id/cache/purge":                                        true,
	"POST /v1/prompts/:id/versions/:version/archive":                          true,
	"POST /v1/prompts/:id/versions/:version/promote":                          true,
	"POST /v1/prompts/:id/versions/:version/publish":                          true,
	"POST /v1/skills/:id/reviews/:number/close":                               true,
	"DELETE /v1/skills/:id/labels/:name":                                      true,
	"DELETE /v1/prompts/:id/labels/:name":                                     true,
	"POST /v1/skills/:id/reviews/:number/reopen":                              true,
	"POST /v1/prompts/:id/reviews/:number/close":                              true,
	"POST /v1/prompts/:id/reviews/:number/reopen":                             true,
	"* /git/*path": true,
	"DELETE /v1/projects/:projectID/webhooks/:webhookID":                                true,
	"POST /v1/projects/:projectID/webhooks/:webhookID/rotate-secret":                    true,
	"POST /v1/projects/:projectID/webhooks/:webhookID/ping":                             true,
	"POST /v1/projects/:projectID/webhooks/:webhookID/deliveries/:deliveryID/redeliver": true,
}

// TestFuzzRoutesCoverEveryWrite fails when a route that changes state is
// neither fuzzed by FuzzWriteEndpoints nor listed as reading no body, so
// a new write endpoint cannot miss the fuzzer by being forgotten here.
func TestFuzzRoutesCoverEveryWrite(t *testing.T) {
	e := testenv.New(t)
	fuzzed := map[string]bool{}
	for _, r := range fuzzRoutes {
		fuzzed[r.method+" "+r.path] = true
	}
	// The fuzz list names concrete paths; gin names parameters.
	concrete := strings.NewReplacer(
		":projectID/prompts/:slug", "{p}/prompts/fz-prompt",
		":projectID", "{p}", ":userID", "{u}", ":payloadID", "{y}", ":version", "{n}",
		":number", "1", ":commentID", "c1", ":name", "staging", ":webhookID", "{w}")
	for _, r := range e.Server.Routes() {
		if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
			continue
		}
		// A project-scoped route runs the handlers of the global one
		// (Server.mountAsset): fuzzing one fuzzes both.
		route := r.Path
		for _, kind := range []string{"skills", "prompts"} {
			if rest, ok := strings.CutPrefix(route, "/v1/projects/:projectID/"+kind+"/:slug"); ok {
				route = "/v1/" + kind + "/:id" + rest
			}
		}
		key := r.Method + " " + route
		if r.Path == "/mcp" {
			continue // JSON-RPC, decoded by the MCP SDK: mcp's tests send it bad input
		}
		if strings.HasPrefix(r.Path, "/oauth/") {
			// OAuth's endpoints answer OAuth error objects, not APIError;
			// the oauth package's refusal tables send them bad input.
			continue
		}
		if bodylessWrites[key] || (strings.HasPrefix(r.Path, "/git/") && bodylessWrites["* "+r.Path]) {
			continue
		}
		path := concrete.Replace(route)
		kind := "{s}"
		if strings.HasPrefix(path, "/v1/prompts/") {
			kind = "{q}"
		}
		path = strings.Replace(path, ":id", kind, 1)
		found := false
		for f := range fuzzed {
			m, p, _ := strings.Cut(f, " ")
			if m == r.Method && (p == path || strings.Replace(path, "{n}", "1", 1) == p || strings.Replace(path, "{n}", "2", 1) == p) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s is a write route missing from fuzzRoutes (or, if it reads no body, from bodylessWrites)", key)
		}
	}
}

// hostileBodies are tried against every route.
var hostileBodies = []string{
	``, `null`, `[]`, `"str"`, `0`, `{}`, `{"a":1}{"b":2}`, `{`, `{"email":`, `{"file_path":1,"content":[]}`,
	`{"name":{"x":1}}`, `{"from":-1}`, `{"from":1e309}`, `{"from":"2"}`, `{"scope":"root"}`, `{"role":"owner","email":null}`,
	`{"file_path":"../../etc/passwd","content":"x"}`, `{"file_path":".git/config","content":"x"}`, `{"file_path":"git~1/x","content":"x"}`,
	`{"file_path":"a\u0000b","content":"x"}`, "{\"name\":\"\xff\xfe\"}", `{"name":"` + strings.Repeat("n", 300) + `"}`,
	strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000), strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat(`}`, 5000),
	`{"expires_at":"yesterday"}`, `{"project_ids":"p"}`, `{"project_ids":[1,2]}`, `{"disabled":"yes"}`, `{"slug":"UPPER"}`,
	`{"name":"x","name":"y"}`, `{"password":""}`, `{"email":"a@b","password":"` + strings.Repeat("p", 100) + `"}`,
}

func FuzzWriteEndpoints(f *testing.F) {
	sequentialHeavy(f)
	e := testenv.New(f)
	ctx := context.Background()
	pid := e.CreateProject(e.Admin, "fz")
	sid := e.CreateSkill(e.Admin, pid, "fz-skill")
	e.Must(201, "POST", "/v1/skills/fz-skill/versions", e.Admin, nil)
	uid, _ := e.CreateUser("victim@example.com")
	skill, err := e.Store.Asset(ctx, quire.KindSkill, sid)
	if err != nil {
		f.Fatal(err)
	}
	qid := e.CreatePrompt(e.Admin, pid, "fz-prompt")
	e.Must(201, "POST", "/v1/prompts/"+qid+"/versions", e.Admin, map[string]any{"template": "Hello {{name}}"})
	e.Must(200, "POST", "/v1/prompts/"+qid+"/versions/1/publish", e.Admin, nil)
	e.Must(201, "POST", "/v1/prompts/"+qid+"/versions", e.Admin, nil)
	e.Must(201, "POST", "/v1/skills/fz-skill/versions/1/reviews", e.Admin, map[string]string{"title": "fuzzed"})
	e.Must(201, "POST", "/v1/prompts/"+qid+"/versions/2/reviews", e.Admin, map[string]string{"title": "fuzzed"})
	yid := e.Must(201, "POST", "/v1/prompts/"+qid+"/payloads", e.Admin, map[string]any{"variables": map[string]any{"name": "Ada"}}).JSON(f)["payload"].(map[string]any)["id"].(string)
	prompt, err := e.Store.Asset(ctx, quire.KindPrompt, qid)
	if err != nil {
		f.Fatal(err)
	}
	wid := e.Must(201, "POST", "/v1/projects/"+pid+"/webhooks", e.Admin, map[string]any{"url": "http://192.0.2.1/hook", "events": []string{"ping"}}).JSON(f)["webhook"].(map[string]any)["id"].(string)
	expand := strings.NewReplacer("{p}", pid, "{s}", sid, "{u}", uid, "{q}", qid, "{y}", yid, "{w}", wid)
	_, adminSecret, _ := strings.Cut(strings.TrimPrefix(e.Admin, "sess_"), "_")

	for i, r := range fuzzRoutes {
		f.Add(uint8(i), []byte(expand.Replace(r.seed)))
		for _, b := range hostileBodies {
			f.Add(uint8(i), []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		path := expand.Replace(r.path)
		draft, err := e.Store.Version(ctx, skill, 1)
		if err != nil {
			t.Fatal(err)
		}
		promptDraft, err := e.Store.Version(ctx, prompt, 2)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(r.method, e.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", r.contentType)
		req.Header.Set("Authorization", "Bearer "+e.Admin)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		what := r.method + " " + r.path
		if res.StatusCode >= 500 {
			t.Fatalf("%s: status %d for body %.200q: %s", what, res.StatusCode, body, b)
		}
		if res.StatusCode == http.StatusNoContent {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %d answer is not a JSON object: %v: %.300s", what, res.StatusCode, err, b)
		}
		if strings.Contains(string(b), adminSecret) || strings.Contains(string(b), "goroutine ") || strings.Contains(string(b), ".go:") {
			t.Fatalf("%s: answer leaks a secret or a stack: %.300s", what, b)
		}
		if res.StatusCode < 400 {
			return
		}
		if msg, _ := m["error"].(string); msg == "" {
			t.Fatalf("%s: %d answer has no error message: %s", what, res.StatusCode, b)
		}
		if code, _ := m["code"].(string); code == "" {
			t.Fatalf("%s: %d answer has no error code: %s", what, res.StatusCode, b)
		}
		if after, err := e.Store.Version(ctx, skill, 1); err != nil || after.Commit != draft.Commit {
			t.Fatalf("%s: answered %d, yet draft 1 moved from %s to %v (%v)", what, res.StatusCode, draft.Commit, after, err)
		}
		if after, err := e.Store.Version(ctx, prompt, 2); err != nil || after.Commit != promptDraft.Commit {
			t.Fatalf("%s: answered %d, yet prompt draft 2 moved from %s to %v (%v)", what, res.StatusCode, promptDraft.Commit, after, err)
		}
	})
}
