package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire/quire/client"
	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/skillpack"
)

// counting is a transport that counts requests and remembers statuses.
type counting struct {
	n        atomic.Int64
	mu       sync.Mutex
	statuses []int
	inm      []string // If-None-Match of each request
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	res, err := http.DefaultTransport.RoundTrip(r)
	c.mu.Lock()
	c.inm = append(c.inm, r.Header.Get("If-None-Match"))
	if err == nil {
		c.statuses = append(c.statuses, res.StatusCode)
	}
	c.mu.Unlock()
	return res, err
}

func newClient(t testing.TB, e *testenv.Env, token string) (*client.Client, *counting) {
	t.Helper()
	tr := &counting{}
	c, err := client.New(e.URL, client.WithToken(token), client.WithHTTPClient(&http.Client{Transport: tr, Timeout: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	return c, tr
}

// cur is the running test, for must and ok (the tests here are not
// parallel): Go cannot pass a call's two results beside another argument.
var cur testing.TB

func begin(t testing.TB) { cur = t }

func must[T any](v T, err error) T {
	cur.Helper()
	if err != nil {
		cur.Fatal(err)
	}
	return v
}

func ok(err error) {
	cur.Helper()
	if err != nil {
		cur.Fatal(err)
	}
}

func apiError(t testing.TB, err error, status int, code string) *client.APIError {
	t.Helper()
	var e *client.APIError
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *client.APIError", err, err)
	}
	if e.Status != status || e.Code != code || e.Message == "" || e.RequestID == "" {
		t.Fatalf("APIError %+v, want status %d code %s with a message and request id", e, status, code)
	}
	return e
}

func TestNewBadURL(t *testing.T) {
	for _, u := range []string{"", "localhost:8080", "ftp://x", "http://", "://"} {
		if _, err := client.New(u); err == nil {
			t.Errorf("New(%q) succeeded", u)
		}
	}
}

// TestSkillJourney drives the skill operations against a real server.
func TestSkillJourney(t *testing.T) {
	begin(t)
	e := testenv.New(t)
	ctx := context.Background()
	anon, _ := newClient(t, e, "")
	login := must(anon.Login(ctx, testenv.AdminEmail, testenv.AdminPassword))
	c, _ := newClient(t, e, login.Token)
	me := must(c.Me(ctx))
	if me.User.Email != testenv.AdminEmail || me.Kind != "session" {
		t.Fatalf("me %+v", me)
	}

	pr := must(c.CreateProject(ctx, client.MetaInput{Name: client.String("Demo")}))
	if pr.Slug != "demo" || string(pr.Visibility) != "" && pr.Visibility != "private" {
		t.Fatalf("project %+v", pr)
	}
	sk := must(c.CreateSkill(ctx, "demo", client.MetaInput{Name: client.String("PDF tools"), Description: client.String("Fill PDFs")}))
	v := must(c.CreateSkillVersion(ctx, sk.Slug, client.Base{}))
	if v.Number != 1 || v.State != "draft" {
		t.Fatalf("draft %+v", v)
	}
	must(c.PutFile(ctx, sk.ID, 1, "SKILL.md", []byte(testenv.SkillManifest("pdf-tools")), client.FileOptions{Message: "manifest"}))
	w := must(c.PutFile(ctx, sk.ID, 1, "scripts/a b.py", []byte("print(1)\n"), client.FileOptions{}))
	if w.File.Path != "scripts/a b.py" || w.Version.SkillID != sk.ID {
		t.Fatalf("file written %+v", w)
	}
	// If-Match with a stale commit is refused.
	_, err := c.PutFile(ctx, sk.ID, 1, "x.txt", []byte("x"), client.FileOptions{IfMatch: v.Commit})
	apiError(t, err, 412, "precondition")

	files := must(c.Files(ctx, sk.ID, 1, client.ListOptions{}))
	if len(files.Items) != 2 {
		t.Fatalf("files %+v", files)
	}
	b := must(c.ReadFile(ctx, sk.ID, 1, "scripts/a b.py"))
	if string(b) != "print(1)\n" {
		t.Fatalf("read %q", b)
	}
	pub := must(c.PublishSkillVersion(ctx, sk.ID, 1))
	if pub.State != "published" || !pub.Live {
		t.Fatalf("published %+v", pub)
	}
	ar := must(c.SkillArchive(ctx, sk.ID, "live", skillpack.TarGz))
	if ar.Version != 1 || ar.Commit != pub.Commit {
		t.Fatalf("archive %d %s", ar.Version, ar.Commit)
	}
	idx := must(c.Discovery(ctx, ""))
	if len(idx.Skills) != 1 || idx.Skills[0].Type != "archive" || idx.Skills[0].Digest != ar.Digest ||
		idx.Skills[0].URL != "/v1/skills/"+sk.ID+"/versions/1/archive.tar.gz" {
		t.Fatalf("index %+v, archive %s", idx, ar.Digest)
	}
	skillMD := must(c.DiscoveryFile(ctx, "demo", "pdf-tools", "SKILL.md"))
	if !strings.HasPrefix(string(skillMD), "---\n") {
		t.Fatalf("discovery file %q", skillMD)
	}
	zip := must(c.DownloadSkillVersion(ctx, sk.ID, 1))
	v2 := must(c.UploadSkillVersion(ctx, sk.ID, zip))
	if v2.Number != 2 {
		t.Fatalf("upload %+v", v2)
	}
	must(c.DeleteFile(ctx, sk.ID, 2, "scripts/a b.py", ""))
	d := must(c.SkillDiff(ctx, sk.ID, 1, 2))
	if len(d.Files) != 1 || d.Files[0].Status != "deleted" {
		t.Fatalf("diff %+v", d)
	}
	vs := must(c.SkillVersions(ctx, sk.ID, "draft", client.ListOptions{}))
	if len(vs.Items) != 1 || vs.Items[0].Number != 2 {
		t.Fatalf("drafts %+v", vs)
	}
	h := must(c.SkillHistory(ctx, sk.ID, client.ListOptions{Limit: 2}))
	if len(h.Items) != 2 || h.NextCursor == "" {
		t.Fatalf("history page %+v", h)
	}
	must(c.ArchiveSkillVersion(ctx, sk.ID, 2))
	must(c.UpdateSkill(ctx, sk.ID, client.MetaInput{Description: client.String("More")}))

	// Typed errors: a slug in two projects is a conflict with the ids.
	must(c.CreateProject(ctx, client.MetaInput{Name: client.String("Other")}))
	must(c.CreateSkill(ctx, "other", client.MetaInput{Name: client.String("PDF tools")}))
	_, err = c.Skill(ctx, "pdf-tools")
	ae := apiError(t, err, 409, "conflict")
	if ids, _ := ae.Details["ids"].([]any); len(ids) != 2 {
		t.Fatalf("conflict details %+v", ae.Details)
	}
	_, err = c.SkillVersion(ctx, sk.ID, 99)
	apiError(t, err, 404, "not_found")
	if !client.IsNotFound(err) {
		t.Fatal("IsNotFound is false for a 404")
	}
	_, err = anon.Me(ctx)
	apiError(t, err, 401, "unauthorized")

	// Public projects: anonymous reads of published versions.
	must(c.UpdateProject(ctx, "demo", client.MetaInput{Visibility: client.String("public")}))
	got := must(anon.ReadFile(ctx, sk.ID, 1, "SKILL.md"))
	if !bytes.Equal(got, skillMD) {
		t.Fatal("anonymous read of a public skill differs")
	}
	_, err = anon.Files(ctx, sk.ID, 2, client.ListOptions{})
	apiError(t, err, 404, "not_found")

	ok(c.DeleteSkill(ctx, sk.ID))
	ok(c.Logout(ctx))
	_, err = c.Me(ctx)
	apiError(t, err, 401, "unauthorized")
}

// TestAccountJourney drives users, keys, members, sessions and activity.
func TestAccountJourney(t *testing.T) {
	begin(t)
	e := testenv.New(t)
	ctx := context.Background()
	c, _ := newClient(t, e, e.Admin)
	ok(c.Health(ctx))
	ok(c.Ready(ctx))
	doc := must(c.OpenAPI(ctx))
	if !json.Valid(doc) {
		t.Fatal("openapi is not JSON")
	}
	u := must(c.CreateUser(ctx, client.UserInput{Email: client.String("ann@example.com"), Password: client.String("password-ann")}))
	if len(must(c.Users(ctx))) != 2 {
		t.Fatal("users")
	}
	must(c.User(ctx, u.ID))
	up := must(c.UpdateUser(ctx, u.ID, client.UserInput{Name: client.String("Ann")}))
	if up.User.Name != "Ann" {
		t.Fatalf("update %+v", up)
	}
	_, err := c.CreateUser(ctx, client.UserInput{Email: client.String("ann@example.com"), Password: client.String("password-ann")})
	apiError(t, err, 409, "conflict")

	pr := must(c.CreateProject(ctx, client.MetaInput{Name: client.String("Team")}))
	mc := must(c.AddMember(ctx, pr.ID, client.MemberInput{UserID: u.ID, Role: "viewer"}))
	if mc.Member.Role != "viewer" || len(mc.Members) != 2 {
		t.Fatalf("member %+v", mc)
	}
	must(c.SetMemberRole(ctx, pr.ID, u.ID, "editor"))
	if len(must(c.Members(ctx, pr.ID))) != 2 {
		t.Fatal("members")
	}
	ok(c.RemoveMember(ctx, pr.ID, u.ID))
	act := must(c.Activity(ctx, pr.ID, client.ListOptions{}))
	if len(act.Items) == 0 {
		t.Fatal("no activity")
	}
	if pg := must(c.Projects(ctx, client.ListOptions{Limit: 1})); len(pg.Items) != 1 {
		t.Fatalf("projects page %+v", pg)
	}
	must(c.Project(ctx, "team"))

	k := must(c.CreateAPIKey(ctx, client.KeyInput{Name: "ci", Scope: "read"}))
	if !strings.HasPrefix(k.Token, "ak_") || k.APIKey.Scope != "read" {
		t.Fatalf("key %+v", k)
	}
	kc, _ := newClient(t, e, k.Token)
	_, err = kc.CreateProject(ctx, client.MetaInput{Name: client.String("No")})
	apiError(t, err, 403, "forbidden")
	rk := must(c.RotateAPIKey(ctx, k.APIKey.ID))
	if rk.Token == k.Token {
		t.Fatal("rotate kept the token")
	}
	must(c.APIKey(ctx, k.APIKey.ID))
	if len(must(c.APIKeys(ctx, true))) != 1 {
		t.Fatal("keys")
	}
	ok(c.DeleteAPIKey(ctx, k.APIKey.ID))
	ss := must(c.Sessions(ctx, ""))
	if len(ss) == 0 {
		t.Fatal("sessions")
	}
	must(c.UpdateProject(ctx, pr.ID, client.MetaInput{Description: client.String("d")}))
	ok(c.DeleteProject(ctx, pr.ID))
	ok(c.DeleteUser(ctx, u.ID))
	other := must(client.New(e.URL, client.WithToken(e.Login(testenv.AdminEmail, testenv.AdminPassword))))
	me := must(other.Me(ctx))
	ok(c.RevokeSession(ctx, me.SessionID))
	_, err = other.Me(ctx)
	apiError(t, err, 401, "unauthorized")
}

// TestPromptJourney drives the prompt operations.
func TestPromptJourney(t *testing.T) {
	begin(t)
	e := testenv.New(t)
	ctx := context.Background()
	c, _ := newClient(t, e, e.Admin)
	must(c.CreateProject(ctx, client.MetaInput{Name: client.String("Support")}))
	pr := must(c.CreatePrompt(ctx, "support", client.MetaInput{Name: client.String("Greeting")}))
	v := must(c.CreatePromptVersion(ctx, pr.ID, client.PromptVersionInput{Template: client.String("Hello {{name}}")}))
	v = must(c.UpdatePromptVersion(ctx, pr.ID, 1, client.PromptVersionInput{Template: client.String("Hello {{name}}!")}, v.Commit))
	if *v.Template != "Hello {{name}}!" {
		t.Fatalf("version %+v", v)
	}
	vars := must(c.PromptVariables(ctx, pr.ID, 1))
	if len(vars.Required) != 1 || vars.Required[0] != "name" {
		t.Fatalf("variables %+v", vars)
	}
	pl := must(c.CreatePayload(ctx, pr.ID, client.PayloadInput{Name: client.String("ann"), Variables: map[string]any{"name": "Ann"}}))
	must(c.UpdatePayload(ctx, pr.ID, pl.ID, client.PayloadInput{Variables: map[string]any{"name": "Bea"}}))
	must(c.Payload(ctx, pr.ID, pl.ID))
	if pg := must(c.Payloads(ctx, pr.ID, client.ListOptions{})); len(pg.Items) != 1 {
		t.Fatal("payloads")
	}
	chk := must(c.CheckPromptVersion(ctx, pr.ID, 1))
	if !chk.OK {
		t.Fatalf("check %+v", chk)
	}
	must(c.PublishPromptVersion(ctx, pr.ID, 1))
	live := must(c.LivePrompt(ctx, pr.ID, ""))
	if live.Number != 1 {
		t.Fatalf("live %+v", live)
	}
	if again := must(c.LivePrompt(ctx, pr.ID, live.Commit)); again != nil {
		t.Fatal("If-None-Match with the live commit was not a 304")
	}
	r := must(c.RenderPrompt(ctx, pr.ID, client.RenderInput{PayloadID: pl.ID}))
	if *r.Text != "Hello Bea!" {
		t.Fatalf("render %q", *r.Text)
	}
	r = must(c.RenderProjectPrompt(ctx, "support", "greeting", client.RenderInput{Variables: map[string]any{"name": "Cy"}}))
	if *r.Text != "Hello Cy!" {
		t.Fatalf("render %q", *r.Text)
	}
	// This server has no model provider: a run is 409 no_provider.
	_, err := c.RunPrompt(ctx, pr.ID, "live", client.RunInput{Variables: map[string]any{"name": "Cy"}})
	apiError(t, err, 409, "no_provider")
	_, err = c.RunProjectPrompt(ctx, "support", "greeting", "1", client.RunInput{Variables: map[string]any{"name": "Cy"}})
	apiError(t, err, 409, "no_provider")
	_, err = c.RenderPrompt(ctx, pr.ID, client.RenderInput{})
	ae := apiError(t, err, 422, "unprocessable")
	if m, _ := ae.Details["missing"].([]any); len(m) != 1 || m[0] != "name" {
		t.Fatalf("missing details %+v", ae.Details)
	}
	must(c.CreatePromptVersion(ctx, pr.ID, client.PromptVersionInput{Template: client.String("Hi {{name}}")}))
	must(c.PublishPromptVersion(ctx, pr.ID, 2))
	must(c.PromotePromptVersion(ctx, pr.ID, 1))
	must(c.ArchivePromptVersion(ctx, pr.ID, 2))
	must(c.PromptDiff(ctx, pr.ID, 1, 2))
	must(c.PromptHistory(ctx, pr.ID, client.ListOptions{}))
	if pg := must(c.PromptVersions(ctx, pr.ID, "", client.ListOptions{})); len(pg.Items) != 2 {
		t.Fatalf("versions %+v", pg)
	}
	must(c.PromptVersion(ctx, pr.ID, 2))
	must(c.PromptDependents(ctx, pr.ID))
	must(c.PromptUsage(ctx, pr.ID))
	ok(c.PurgePromptCache(ctx, pr.ID))
	ok(c.PurgeAllCache(ctx))
	must(c.ProjectPrompts(ctx, "support", client.ListOptions{}))
	must(c.Prompt(ctx, "greeting"))
	must(c.UpdatePrompt(ctx, pr.ID, client.MetaInput{Description: client.String("d")}))
	must(c.CreatePromptVersion(ctx, pr.ID, client.PromptVersionInput{}))
	ok(c.DeletePromptVersion(ctx, pr.ID, 3))
	ok(c.DeletePayload(ctx, pr.ID, pl.ID))
	ok(c.DeletePrompt(ctx, pr.ID))
}

// sdkMethods maps every operation of /openapi.json to the SDK method
// that calls it, so a new route without a method fails the test.
var sdkMethods = map[string]string{
	"GET /healthz": "Health", "GET /readyz": "Ready", "GET /openapi.json": "OpenAPI",
	"POST /v1/auth/login": "Login", "DELETE /v1/auth/session": "Logout", "GET /v1/auth/me": "Me",
	"GET /v1/auth/sessions": "Sessions", "DELETE /v1/auth/sessions/{sessionID}": "RevokeSession",
	"POST /v1/users": "CreateUser", "GET /v1/users": "Users", "GET /v1/users/{userID}": "User",
	"PATCH /v1/users/{userID}": "UpdateUser", "DELETE /v1/users/{userID}": "DeleteUser",
	"POST /v1/api-keys": "CreateAPIKey", "GET /v1/api-keys": "APIKeys", "GET /v1/api-keys/{keyID}": "APIKey",
	"DELETE /v1/api-keys/{keyID}": "DeleteAPIKey", "POST /v1/api-keys/{keyID}/rotate": "RotateAPIKey",
	"POST /v1/projects": "CreateProject", "GET /v1/projects": "Projects", "GET /v1/projects/{project}": "Project",
	"PATCH /v1/projects/{project}": "UpdateProject", "DELETE /v1/projects/{project}": "DeleteProject",
	"GET /v1/projects/{project}/members": "Members", "POST /v1/projects/{project}/members": "AddMember",
	"POST /v1/projects/{project}/webhooks": "CreateWebhook", "GET /v1/projects/{project}/webhooks": "Webhooks",
	"GET /v1/projects/{project}/webhooks/{webhookID}": "Webhook", "PATCH /v1/projects/{project}/webhooks/{webhookID}": "UpdateWebhook",
	"DELETE /v1/projects/{project}/webhooks/{webhookID}":                                 "DeleteWebhook",
	"POST /v1/projects/{project}/webhooks/{webhookID}/rotate-secret":                     "RotateWebhookSecret",
	"POST /v1/projects/{project}/webhooks/{webhookID}/ping":                              "PingWebhook",
	"GET /v1/projects/{project}/webhooks/{webhookID}/deliveries":                         "Deliveries",
	"POST /v1/projects/{project}/webhooks/{webhookID}/deliveries/{deliveryID}/redeliver": "Redeliver",
	"GET /v1/projects/{project}/events":                                                  "Events",
	"PUT /v1/projects/{project}/members/{userID}":                                        "SetMemberRole", "DELETE /v1/projects/{project}/members/{userID}": "RemoveMember",
	"GET /v1/projects/{project}/activity": "Activity",
	"POST /v1/projects/{project}/skills":  "CreateSkill", "GET /v1/projects/{project}/skills": "ProjectSkills",
	"GET /v1/skills/{id}": "Skill", "PATCH /v1/skills/{id}": "UpdateSkill", "DELETE /v1/skills/{id}": "DeleteSkill",
	"POST /v1/skills/{id}/versions": "CreateSkillVersion", "POST /v1/skills/{id}/versions/upload": "UploadSkillVersion",
	"GET /v1/skills/{id}/versions": "SkillVersions", "GET /v1/skills/{id}/versions/{version}": "SkillVersion",
	"DELETE /v1/skills/{id}/versions/{version}": "DeleteSkillVersion", "POST /v1/skills/{id}/versions/{version}/publish": "PublishSkillVersion",
	"POST /v1/skills/{id}/versions/{version}/promote": "PromoteSkillVersion", "POST /v1/skills/{id}/versions/{version}/archive": "ArchiveSkillVersion",
	"GET /v1/skills/{id}/diff": "SkillDiff", "GET /v1/skills/{id}/history": "SkillHistory",
	"POST /v1/skills/{id}/versions/{version}/files": "PutFile", "PUT /v1/skills/{id}/versions/{version}/files": "ReplaceFiles", "GET /v1/skills/{id}/versions/{version}/files": "Files",
	"GET /v1/skills/{id}/versions/{version}/files/{file_path}": "ReadFile", "DELETE /v1/skills/{id}/versions/{version}/files/{file_path}": "DeleteFile",
	"GET /v1/skills/{id}/versions/{version}/download":       "DownloadSkillVersion",
	"GET /v1/skills/{id}/versions/{version}/archive.zip":    "SkillArchive",
	"GET /v1/skills/{id}/versions/{version}/archive.tar.gz": "SkillArchive",
	"GET /.well-known/agent-skills/index.json":              "Discovery", "GET /v1/projects/{project}/agent-skills/index.json": "Discovery",
	"GET /.well-known/agent-skills/{name}/{path}": "DiscoveryFile", "GET /v1/projects/{project}/agent-skills/{name}/{path}": "DiscoveryFile",
	// The v0.1 form is for installers of that era; Go programs read the
	// published form (Discovery, DiscoveryFile).
	"GET /.well-known/skills/index.json": "-", "GET /.well-known/skills/{name}/{path}": "-",
	// OAuth protected resource metadata is for OAuth clients of /mcp.
	"GET /.well-known/oauth-protected-resource": "-", "GET /.well-known/oauth-protected-resource/mcp": "-",
	// The authorization server's endpoints are an OAuth library's to call
	// (an MCP host's), not the SDK's: it authenticates with API keys.
	"GET /.well-known/oauth-authorization-server": "-",
	"POST /oauth/token":                           "-", "OPTIONS /oauth/token": "-",
	"POST /oauth/register": "-", "OPTIONS /oauth/register": "-",
	"POST /oauth/revoke": "-", "OPTIONS /oauth/revoke": "-",
	"GET /v1/projects/{project}/.well-known/skills/index.json": "-", "GET /v1/projects/{project}/.well-known/skills/{name}/{path}": "-",
	// Where installers given a project's URL look; the SDK reads the
	// same index at /v1/projects/{p}/agent-skills.
	"GET /v1/projects/{project}/.well-known/agent-skills/index.json": "-", "GET /v1/projects/{project}/.well-known/agent-skills/{name}/{path}": "-",
	"POST /v1/projects/{project}/prompts": "CreatePrompt", "GET /v1/projects/{project}/prompts": "ProjectPrompts",
	"GET /v1/prompts/{id}": "Prompt", "PATCH /v1/prompts/{id}": "UpdatePrompt", "DELETE /v1/prompts/{id}": "DeletePrompt",
	"GET /v1/prompts/{id}/versions": "PromptVersions", "GET /v1/prompts/{id}/versions/{version}": "PromptVersion",
	"DELETE /v1/prompts/{id}/versions/{version}": "DeletePromptVersion", "POST /v1/prompts/{id}/versions/{version}/publish": "PublishPromptVersion",
	"POST /v1/prompts/{id}/versions/{version}/promote": "PromotePromptVersion", "POST /v1/prompts/{id}/versions/{version}/archive": "ArchivePromptVersion",
	"GET /v1/prompts/{id}/diff": "PromptDiff", "GET /v1/prompts/{id}/history": "PromptHistory",
	"POST /v1/prompts/{id}/versions": "CreatePromptVersion", "PATCH /v1/prompts/{id}/versions/{version}": "UpdatePromptVersion",
	"GET /v1/prompts/{id}/versions/{version}/variables": "PromptVariables", "POST /v1/prompts/{id}/versions/{version}/check": "CheckPromptVersion",
	"GET /v1/prompts/{id}/dependents": "PromptDependents", "GET /v1/prompts/{id}/live": "LivePrompt",
	"POST /v1/prompts/{id}/render": "RenderPrompt", "POST /v1/projects/{project}/prompts/{slug}/render": "RenderProjectPrompt",
	"POST /v1/prompts/{id}/versions/{version}/run": "RunPrompt", "POST /v1/projects/{project}/prompts/{slug}/versions/{version}/run": "RunProjectPrompt",
	"POST /v1/prompts/{id}/versions/{version}/evaluations": "StartEvaluation", "POST /v1/projects/{project}/prompts/{slug}/versions/{version}/evaluations": "StartProjectEvaluation",
	"GET /v1/prompts/{id}/versions/{version}/evaluations": "Evaluations", "GET /v1/projects/{project}/prompts/{slug}/versions/{version}/evaluations": "ProjectEvaluations",
	"GET /v1/prompts/{id}/versions/{version}/evaluations/{evaluationID}": "Evaluation", "GET /v1/projects/{project}/prompts/{slug}/versions/{version}/evaluations/{evaluationID}": "ProjectEvaluation",
	"POST /v1/prompts/{id}/versions/{version}/evaluations/{evaluationID}/cancel": "CancelEvaluation", "POST /v1/projects/{project}/prompts/{slug}/versions/{version}/evaluations/{evaluationID}/cancel": "CancelProjectEvaluation",
	"POST /v1/prompts/{id}/payloads": "CreatePayload", "GET /v1/prompts/{id}/payloads": "Payloads",
	"GET /v1/prompts/{id}/payloads/{payloadID}": "Payload", "PUT /v1/prompts/{id}/payloads/{payloadID}": "UpdatePayload",
	"DELETE /v1/prompts/{id}/payloads/{payloadID}": "DeletePayload",
	"POST /v1/prompts/{id}/cache/purge":            "PurgePromptCache", "POST /v1/cache/purge": "PurgeAllCache",
	"GET /v1/prompts/{id}/usage": "PromptUsage",
	"GET /v1/skills/{id}/live":   "LiveSkill",
}

func init() {
	// Reviews and labels take the kind: one method serves both.
	for _, kind := range []string{"skills", "prompts"} {
		a := "/v1/" + kind + "/{id}"
		for op, name := range map[string]string{
			"POST " + a + "/versions/{version}/reviews":             "OpenReview",
			"GET " + a + "/reviews":                                 "Reviews",
			"GET " + a + "/reviews/{number}":                        "Review",
			"POST " + a + "/reviews/{number}/comments":              "CommentReview",
			"PATCH " + a + "/reviews/{number}/comments/{commentID}": "UpdateComment",
			"POST " + a + "/reviews/{number}/approve":               "ApproveReview",
			"POST " + a + "/reviews/{number}/request-changes":       "RequestChanges",
			"POST " + a + "/reviews/{number}/close":                 "CloseReview",
			"POST " + a + "/reviews/{number}/reopen":                "ReopenReview",
			"GET " + a + "/labels":                                  "Labels",
			"PUT " + a + "/labels/{name}":                           "SetLabel",
			"DELETE " + a + "/labels/{name}":                        "DeleteLabel",
			"GET " + a + "/labels/{name}/history":                   "LabelHistory",
		} {
			sdkMethods[op] = name
		}
	}
}

// sdkOperation is the sdkMethods key of an operation of the document:
// the project-scoped twin of an asset route,
// /v1/projects/{project}/skills/{slug}/..., is the same SDK method as
// /v1/skills/{id}/... (a "project/slug" ref addresses the twin).
func sdkOperation(method, path string) string {
	if _, ok := sdkMethods[method+" "+path]; ok {
		return method + " " + path
	}
	for _, kind := range []string{"skills", "prompts"} {
		twin := "/v1/projects/{project}/" + kind + "/{slug}"
		if path == twin || strings.HasPrefix(path, twin+"/") {
			path = "/v1/" + kind + "/{id}" + strings.TrimPrefix(path, twin)
		}
	}
	return method + " " + path
}

// TestEveryOperationHasAMethod checks sdkMethods against the server's
// OpenAPI document. Git smart HTTP is git's protocol (use git), and HEAD
// is GET without a body.
func TestEveryOperationHasAMethod(t *testing.T) {
	e := testenv.New(t)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	e.Must(200, "GET", "/openapi.json", "", nil).Decode(t, &doc)
	typ := reflect.TypeOf(&client.Client{})
	for path, ops := range doc.Paths {
		for m := range ops {
			m = strings.ToUpper(m)
			// MCP is not REST: MCP clients use an MCP SDK (docs/mcp.md).
			if m == "HEAD" || strings.HasPrefix(path, "/git/") || m == "PARAMETERS" || path == "/mcp" {
				continue
			}
			name, ok := sdkMethods[sdkOperation(m, path)]
			if !ok {
				t.Errorf("%s %s has no SDK method (client/api.go, and sdkMethods here)", m, path)
				continue
			}
			if name == "-" {
				continue // deliberately without a method: said where it is mapped
			}
			if _, ok := typ.MethodByName(name); !ok {
				t.Errorf("%s %s: client.Client has no method %s", m, path, name)
			}
		}
	}
}
