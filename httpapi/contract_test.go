package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// TestErrorShape checks that every failure, the router's included, is one
// APIError: error (the message), code, request_id equal to X-Request-ID,
// and details where the client can act on them.
func TestErrorShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "shape")
	promptID := e.CreatePrompt(e.Admin, s.projectID, "shape-prompt")
	cases := []struct {
		name, method, path string
		body               any
		headers            []string
		status             int
		code               string
		field              string // details.field, when set
		allow              string // the Allow header, when set
	}{
		{name: "unknown route", method: "GET", path: "/v1/nothing", status: 404, code: "not_found"},
		{name: "trailing slash", method: "GET", path: "/v1/projects/", status: 404, code: "not_found"},
		{name: "trailing slash on a resource", method: "GET", path: s.url("/"), status: 404, code: "not_found"},
		{name: "trailing slash outside v1", method: "GET", path: "/healthz/", status: 404, code: "not_found"},
		{name: "method not allowed", method: "PUT", path: "/v1/projects", status: 405, code: "method_not_allowed", allow: "GET, POST"},
		{name: "unknown field", method: "POST", path: "/v1/projects", body: map[string]string{"name": "P", "descripton": "typo"}, status: 400, code: "invalid", field: "descripton"},
		{name: "unknown nested field", method: "POST", path: "/v1/projects/" + s.projectID + "/prompts", body: `{"name":"p","slug":"p","extra":{"a":1}}`, status: 400, code: "invalid", field: "extra"},
		{name: "unknown field in an object field", method: "PATCH", path: "/v1/projects/" + s.projectID, body: `{"review_policy":{"required_aprovals":1}}`, status: 400, code: "invalid", field: "review_policy.required_aprovals"},
		{name: "unknown field in an array's object", method: "POST", path: "/v1/prompts/" + promptID + "/versions", body: `{"messages":[{"role":"user","content":"x"},{"role":"user","contnet":"y"}]}`, status: 400, code: "invalid", field: "messages.contnet"},
		{name: "wrong type", method: "PATCH", path: s.url(), body: map[string]any{"name": 5}, status: 400, code: "invalid", field: "name"},
		{name: "unknown field on publish", method: "POST", path: s.url("/versions/1/publish"), body: map[string]any{"force": true}, status: 400, code: "invalid", field: "force"},
		{name: "text/plain body", method: "POST", path: "/v1/projects", body: `{"name":"P"}`, headers: []string{"Content-Type: text/plain"}, status: 415, code: "unsupported_media_type"},
		{name: "form body", method: "PATCH", path: s.url(), body: `name=x`, headers: []string{"Content-Type: application/x-www-form-urlencoded"}, status: 415, code: "unsupported_media_type"},
		{name: "empty body where one is required", method: "POST", path: "/v1/projects", body: "", status: 400, code: "invalid"},
		{name: "no credential", method: "GET", path: "/v1/projects", status: 401, code: "unauthorized"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			token := e.Admin
			if tc.code == "unauthorized" {
				token = ""
			}
			r := e.Do(tc.method, tc.path, token, tc.body, tc.headers...)
			m := wantError(t, r, tc.status)
			if got := m["code"]; got != tc.code {
				t.Errorf("code %v, want %s", got, tc.code)
			}
			if id := r.Header.Get("X-Request-ID"); id == "" || m["request_id"] != id {
				t.Errorf("request_id %v, X-Request-ID %q", m["request_id"], id)
			}
			if tc.field != "" {
				if f := get(t, m, "details", "field"); f != tc.field {
					t.Errorf("details.field %v, want %s", f, tc.field)
				}
			}
			if tc.allow != "" {
				if a := r.Header.Get("Allow"); a != tc.allow {
					t.Errorf("Allow %q, want %q", a, tc.allow)
				}
			}
		})
	}
}

// TestBodylessActions checks that publish takes an empty body with no
// Content-Type at all (as curl -X POST sends it), and any Content-Type
// with an empty body.
func TestBodylessActions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "bodyless")
	for i, ct := range []string{"", "text/plain"} {
		n := s.draft(t, nil)
		if n != i+1 {
			t.Fatalf("draft %d, want %d", n, i+1)
		}
		s.put(t, n, "SKILL.md", testenv.SkillManifest(s.slug))
		req, err := http.NewRequest("POST", e.URL+s.vurl(n, "/publish"), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+e.Admin)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(b), `"published"`) {
			t.Fatalf("publish with Content-Type %q: %d %s", ct, res.StatusCode, b)
		}
	}
}

// TestProjectScopedRoutes checks that a slug two projects share is
// ambiguous globally (409 naming both ids) but addresses each asset, with
// every sub-resource, under its project, by project id or slug.
func TestProjectScopedRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := newSkill(t, e, "shared")
	bp := e.CreateProject(e.Admin, "other")
	bid := e.CreateSkill(e.Admin, bp, "shared")

	m := wantError(t, e.Do("GET", "/v1/skills/shared", e.Admin, nil), 409, "several projects")
	if ids := arr(t, m, "details", "ids"); len(ids) != 2 {
		t.Fatalf("details.ids %v", ids)
	}
	// The global route still takes ids.
	e.Must(200, "GET", "/v1/skills/"+bid, e.Admin, nil)

	for _, base := range []string{"/v1/projects/" + a.projectID + "/skills/shared", "/v1/projects/proj-shared/skills/shared", "/v1/projects/proj-shared/skills/" + a.id} {
		if got := str(t, e.Must(200, "GET", base, e.Admin, nil).JSON(t), "skill", "id"); got != a.id {
			t.Fatalf("GET %s: skill %s, want %s", base, got, a.id)
		}
	}
	// A life cycle through the scoped address only.
	base := "/v1/projects/other/skills/shared"
	e.Must(201, "POST", base+"/versions", e.Admin, nil)
	e.Must(200, "POST", base+"/versions/1/files", e.Admin, map[string]string{"file_path": "SKILL.md", "content": testenv.SkillManifest("shared")})
	e.Must(200, "POST", base+"/versions/1/publish", e.Admin, nil)
	if n := len(arr(t, e.Must(200, "GET", base+"/versions/1/files", e.Admin, nil).JSON(t), "files")); n != 1 {
		t.Fatalf("%d files", n)
	}
	e.Must(200, "GET", base+"/versions/1/files/SKILL.md", e.Admin, nil)
	e.Must(200, "GET", base+"/history", e.Admin, nil)
	e.Must(200, "GET", base+"/versions/1/download", e.Admin, nil)
	live := e.Must(200, "GET", base+"/live", e.Admin, nil).JSON(t)
	if str(t, live, "version", "skill_id") != bid {
		t.Fatalf("live of the wrong skill: %v", live)
	}
	// The other project's skill is untouched.
	wantError(t, e.Do("GET", "/v1/projects/proj-shared/skills/shared/live", e.Admin, nil), 404)
	e.Must(200, "PATCH", base, e.Admin, map[string]string{"description": "scoped"})

	// Unknown project or asset, and a project the caller cannot see: 404.
	wantError(t, e.Do("GET", "/v1/projects/nope/skills/shared", e.Admin, nil), 404)
	wantError(t, e.Do("GET", "/v1/projects/other/skills/nope/versions", e.Admin, nil), 404)
	_, member := e.CreateUser("outsider@example.com")
	wantError(t, e.Do("GET", base, member, nil), 404)
	wantError(t, e.Do("GET", base+"/live", member, nil), 404)

	// Prompts alike: render, payloads and live by project and slug.
	pp := "/v1/projects/other/prompts/greet"
	e.CreatePrompt(e.Admin, bp, "greet")
	e.Must(201, "POST", pp+"/versions", e.Admin, map[string]any{"template": "Hello {{name}}"})
	e.Must(200, "POST", pp+"/versions/1/publish", e.Admin, nil)
	e.Must(201, "POST", pp+"/payloads", e.Admin, map[string]any{"name": "p", "variables": map[string]any{"name": "Ada"}})
	r := e.Must(200, "POST", pp+"/render", e.Admin, map[string]any{"variables": map[string]any{"name": "Ada"}}).JSON(t)
	if str(t, r, "rendered") != "Hello Ada" {
		t.Fatalf("rendered %v", r)
	}
	e.Must(200, "GET", pp+"/versions/1/variables", e.Admin, nil)
	e.Must(200, "GET", pp+"/live", e.Admin, nil)
	e.Must(200, "GET", pp+"/usage", e.Admin, nil)
	e.Must(200, "POST", pp+"/cache/purge", e.Admin, nil)
}

// TestLiveRead checks GET .../live for both kinds: one shape (version
// and files with path, size and sha256), the commit as ETag, 304 on
// If-None-Match, and 404 while nothing is live.
func TestLiveRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "livecheck")
	wantError(t, e.Do("GET", s.url("/live"), e.Admin, nil), 404, "no live version")
	s.draft(t, nil)
	s.put(t, 1, "a.txt", "hello\n")
	s.publish(t, 1)

	pid := e.CreatePrompt(e.Admin, s.projectID, "livep")
	purl := "/v1/prompts/" + pid
	wantError(t, e.Do("GET", purl+"/live", e.Admin, nil), 404, "no live version")
	e.Must(201, "POST", purl+"/versions", e.Admin, map[string]any{"template": "Hi"})
	e.Must(200, "POST", purl+"/versions/1/publish", e.Admin, nil)

	for _, u := range []string{s.url("/live"), purl + "/live"} {
		r := e.Must(200, "GET", u, e.Admin, nil)
		m := r.JSON(t)
		commit := str(t, m, "version", "commit")
		if num(t, m, "version", "version") != 1 || r.Header.Get("ETag") != `"`+commit+`"` {
			t.Fatalf("%s: version %v, ETag %q", u, m["version"], r.Header.Get("ETag"))
		}
		files := arr(t, m, "files")
		if len(files) == 0 {
			t.Fatalf("%s: no files", u)
		}
		for _, f := range files {
			if str(t, f, "path") == "" || len(str(t, f, "sha256")) != 64 {
				t.Fatalf("%s: file %v", u, f)
			}
			num(t, f, "size")
		}
		nm := e.Do("GET", u, e.Admin, nil, "If-None-Match: "+r.Header.Get("ETag"))
		if nm.Status != 304 || len(nm.Body) != 0 {
			t.Fatalf("%s with If-None-Match: %d %s", u, nm.Status, nm.Body)
		}
	}
	// sha256 of "hello\n".
	m := e.Must(200, "GET", s.url("/live"), e.Admin, nil).JSON(t)
	for _, f := range arr(t, m, "files") {
		if str(t, f, "path") == "a.txt" {
			if str(t, f, "sha256") != "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03" || num(t, f, "size") != 6 {
				t.Fatalf("a.txt: %v", f)
			}
			return
		}
	}
	t.Fatal("a.txt not listed")
}

// TestSlugFromName checks that a slug derived from a name transliterates
// it, and that a derived slug already taken is 409, never renamed
// quietly: the caller picks another (docs/api.md, Addressing).
func TestSlugFromName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.Must(201, "POST", "/v1/projects", e.Admin, map[string]string{"name": "Café Über"})
	if got := str(t, r.JSON(t), "project", "slug"); got != "cafe-uber" {
		t.Fatalf("slug %q, want cafe-uber", got)
	}
	m := wantError(t, e.Do("POST", "/v1/projects", e.Admin, map[string]string{"name": "Cafe Uber"}), 409)
	if m["code"] != "conflict" {
		t.Fatalf("code %v", m["code"])
	}
	pid := str(t, r.JSON(t), "project", "id")
	e.Must(201, "POST", "/v1/projects/"+pid+"/skills", e.Admin, map[string]string{"name": "Über Skill"})
	wantError(t, e.Do("POST", "/v1/projects/"+pid+"/skills", e.Admin, map[string]string{"name": "uber skill"}), 409)
	// Another project may reuse it.
	e.Must(201, "POST", "/v1/projects/"+e.CreateProject(e.Admin, "second")+"/skills", e.Admin, map[string]string{"name": "Über Skill"})
}

// TestIdempotencyKey checks that a creating POST retried with the same
// Idempotency-Key creates once and replays the first answer; another body
// with the key is 422; another user or route with the key is a new
// request; a failure is not remembered.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := map[string]string{"name": "Once"}
	first := e.Must(201, "POST", "/v1/projects", e.Admin, body, "Idempotency-Key: k-1")
	again := e.Must(201, "POST", "/v1/projects", e.Admin, body, "Idempotency-Key: k-1")
	if string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry answered\n%s\nnot the first answer\n%s", again.Body, first.Body)
	}
	if n := len(arr(t, e.Must(200, "GET", "/v1/projects", e.Admin, nil).JSON(t), "projects")); n != 1 {
		t.Fatalf("%d projects after a retried create", n)
	}
	m := wantError(t, e.Do("POST", "/v1/projects", e.Admin, map[string]string{"name": "Other"}, "Idempotency-Key: k-1"), 422, "Idempotency-Key")
	if m["code"] != "unprocessable" {
		t.Fatalf("code %v", m["code"])
	}
	// Without the key, or with a new one, the request runs: the slug is taken.
	wantError(t, e.Do("POST", "/v1/projects", e.Admin, body), 409)
	wantError(t, e.Do("POST", "/v1/projects", e.Admin, body, "Idempotency-Key: k-2"), 409)
	// The failure was not kept: once the slug is free, the same key creates.
	pid := str(t, first.JSON(t), "project", "id")
	e.Must(204, "DELETE", "/v1/projects/"+pid, e.Admin, nil)
	e.Must(201, "POST", "/v1/projects", e.Admin, body, "Idempotency-Key: k-2")

	// Another user's key of the same value is theirs.
	_, member := e.CreateUser("idem@example.com")
	r := e.Must(201, "POST", "/v1/projects", member, map[string]string{"name": "Mine"}, "Idempotency-Key: k-1")
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatal("another user's request was answered from the admin's")
	}

	// An API key's token is replayed (it is shown once, so a retry needs it).
	k1 := e.Must(201, "POST", "/v1/api-keys", e.Admin, map[string]string{"name": "ci", "scope": "read"}, "Idempotency-Key: key-1")
	k2 := e.Must(201, "POST", "/v1/api-keys", e.Admin, map[string]string{"name": "ci", "scope": "read"}, "Idempotency-Key: key-1")
	if str(t, k1.JSON(t), "token") != str(t, k2.JSON(t), "token") {
		t.Fatal("replayed key creation has another token")
	}
	if keys := arr(t, e.Must(200, "GET", "/v1/api-keys", e.Admin, nil).JSON(t), "api_keys"); len(keys) != 1 {
		t.Fatalf("%d keys after a retried create", len(keys))
	}
	// A draft, through the project-scoped address too.
	s := newSkill(t, e, "idem")
	d1 := e.Must(201, "POST", "/v1/projects/"+s.projectID+"/skills/idem/versions", e.Admin, nil, "Idempotency-Key: d")
	d2 := e.Must(201, "POST", "/v1/projects/"+s.projectID+"/skills/idem/versions", e.Admin, nil, "Idempotency-Key: d")
	if num(t, d1.JSON(t), "version", "version") != 1 || num(t, d2.JSON(t), "version", "version") != 1 {
		t.Fatalf("retried draft: %s then %s", d1.Body, d2.Body)
	}
	wantError(t, e.Do("POST", "/v1/projects", e.Admin, body, "Idempotency-Key: "+strings.Repeat("k", 300)), 400, "Idempotency-Key")
}
