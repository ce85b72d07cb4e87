package httpapi_test

import (
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

func TestPayloadCreate(t *testing.T) {
	e := testenv.NewWith(t, testenv.Options{Limits: func() quire.Limits { l := quire.DefaultLimits(); l.MaxVariables = 1024; return l }()})
	pid := e.CreateProject(e.Admin, "pay")
	id := e.CreatePrompt(e.Admin, pid, "pp")
	path := "/v1/prompts/" + id + "/payloads"

	r := e.Must(201, "POST", path, e.Admin, obj{"variables": obj{"name": "Ann", "n": 1.50, "nested": obj{"a": []int{1, 2}}}, "name": "sample"}).JSON(t)
	p := r["payload"].(map[string]any)
	for _, k := range []string{"id", "prompt_id", "name", "variables", "created_at", "updated_at"} {
		if _, ok := p[k]; !ok {
			t.Fatalf("payload lacks %s: %v", k, p)
		}
	}
	if p["prompt_id"] != id || p["name"] != "sample" || field(t, p, "variables", "name") != "Ann" {
		t.Fatalf("payload: %v", p)
	}
	// name is optional; the record still has it.
	r = e.Must(201, "POST", "/v1/prompts/pp/payloads", e.Admin, obj{"variables": obj{}}).JSON(t)
	if name, ok := r["payload"].(map[string]any)["name"]; !ok || name != "" {
		t.Fatalf("unnamed payload: %v", r)
	}

	writer := e.CreateKey(e.Admin, "write", pid)
	reader := e.CreateKey(e.Admin, "read", pid)
	otherKey := e.CreateKey(e.Admin, "write", e.CreateProject(e.Admin, "elsewhere"))
	_, member := e.CreateUser("member@example.com")
	e.Must(201, "POST", path, writer, obj{"variables": obj{"k": "v"}})

	bad := []struct {
		name   string
		status int
		token  string
		path   string
		body   any
	}{
		{"no variables", 400, e.Admin, path, obj{"name": "x"}},
		{"variables null", 400, e.Admin, path, obj{"variables": nil}},
		{"variables array", 400, e.Admin, path, obj{"variables": []int{1}}},
		{"variables string", 400, e.Admin, path, obj{"variables": "a=b"}},
		{"variables number", 400, e.Admin, path, obj{"variables": 3}},
		{"name not a string", 400, e.Admin, path, obj{"variables": obj{}, "name": 5}},
		{"malformed JSON", 400, e.Admin, path, `{"variables": {`},
		{"body an array", 400, e.Admin, path, `[1]`},
		{"empty body", 400, e.Admin, path, ""},
		{"too large", 413, e.Admin, path, obj{"variables": obj{"big": strings.Repeat("x", 2000)}}},
		{"unknown prompt id", 404, e.Admin, "/v1/prompts/00000000-0000-4000-8000-000000000000/payloads", obj{"variables": obj{}}},
		{"unknown prompt slug", 404, e.Admin, "/v1/prompts/nope/payloads", obj{"variables": obj{}}},
		{"no credential", 401, "", path, obj{"variables": obj{}}},
		{"bad credential", 401, "ak_nonsense", path, obj{"variables": obj{}}},
		{"read-only key", 403, reader, path, obj{"variables": obj{}}},
		{"key of another project", 404, otherKey, path, obj{"variables": obj{}}},
		{"user outside the project", 404, member, path, obj{"variables": obj{}}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do("POST", tc.path, tc.token, tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			if m := r.JSON(t); m["error"] == nil || m["error"] == "" {
				t.Fatalf("not an APIError: %s", r.Body)
			}
		})
	}
}

func TestPayloadLifecycleInGit(t *testing.T) {
	e := testenv.New(t)
	id := newPrompt(e, "life")
	path := "/v1/prompts/" + id + "/payloads"
	r := e.Must(201, "POST", path, e.Admin, obj{"variables": obj{"name": "Ann", "city": "Oslo"}, "name": "first"}).JSON(t)
	pl := str(t, r, "payload", "id")
	e.Must(201, "POST", path, e.Admin, obj{"variables": obj{"name": "Bo"}, "name": "second"})

	list := e.Must(200, "GET", path, e.Admin, nil).JSON(t)
	if ps := list["payloads"].([]any); len(ps) != 2 || ps[0].(map[string]any)["name"] != "first" {
		t.Fatalf("list: %v", list)
	}
	got := e.Must(200, "GET", path+"/"+pl, e.Admin, nil).JSON(t)
	if field(t, got, "payload", "variables", "city") != "Oslo" {
		t.Fatalf("get: %v", got)
	}
	up := e.Must(200, "PUT", path+"/"+pl, e.Admin, obj{"variables": obj{"name": "Ann", "city": "Bergen"}}).JSON(t)
	if str(t, up, "payload", "name") != "first" || field(t, up, "payload", "variables", "city") != "Bergen" ||
		str(t, up, "payload", "created_at") != str(t, got, "payload", "created_at") {
		t.Fatalf("put: %v", up)
	}
	e.Must(400, "PUT", path+"/"+pl, e.Admin, obj{"name": "x"})
	e.Must(404, "GET", path+"/00000000-0000-4000-8000-000000000000", e.Admin, nil)
	e.Must(404, "GET", path+"/not-a-uuid", e.Admin, nil)
	e.Must(404, "PUT", path+"/00000000-0000-4000-8000-000000000000", e.Admin, obj{"variables": obj{}})

	// Rendering with a payload; request variables override it.
	publishTemplate(e, id, "{{name}} in {{city}}")
	if _, m := renderText(e, id, e.Admin, obj{"payload_id": pl}); m["rendered"] != "Ann in Bergen" {
		t.Fatalf("render with payload: %v", m)
	}
	if _, m := renderText(e, id, e.Admin, obj{"payload_id": pl, "variables": obj{"city": "Tromsø"}}); m["rendered"] != "Ann in Tromsø" {
		t.Fatalf("render with override: %v", m)
	}
	e.Must(404, "POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"payload_id": "00000000-0000-4000-8000-000000000000"})

	e.Must(204, "DELETE", path+"/"+pl, e.Admin, nil)
	e.Must(404, "DELETE", path+"/"+pl, e.Admin, nil)
	e.Must(404, "GET", path+"/"+pl, e.Admin, nil)

	// Every change is a commit on refs/quire/payloads by the admin, and
	// the blobs read in git log -p.
	repo := e.RepoPath("prompt", id)
	log := testenv.Git(t, repo, "log", "-p", "--format=%an <%ae> %s", "refs/quire/payloads")
	for _, want := range []string{
		"Admin <admin@example.com> Create payload " + pl + " (first)",
		"Admin <admin@example.com> Update payload " + pl + " (first)",
		"Admin <admin@example.com> Delete payload " + pl,
		"+++ b/payloads/" + pl + ".json",
		`+    "city": "Bergen"`,
		`-    "city": "Oslo"`,
	} {
		if !strings.Contains(log, want) {
			t.Fatalf("git log -p lacks %q:\n%s", want, log)
		}
	}
	if n := testenv.Git(t, repo, "rev-list", "--count", "refs/quire/payloads"); n != "4" {
		t.Fatalf("%s payload commits, want 4", n)
	}
	testenv.Git(t, repo, "fsck", "--strict")
}
