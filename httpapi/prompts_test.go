package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// obj is a JSON object in a test.
type obj = map[string]any

// field walks a decoded JSON body: field(t, m, "version", "commit").
func field(t testing.TB, m map[string]any, path ...string) any {
	t.Helper()
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("no object at %q in %v", p, m)
		}
		cur = mm[p]
	}
	return cur
}

// newPrompt creates project "p" and a prompt with slug, and returns the
// prompt id.
func newPrompt(e *testenv.Env, slug string) string {
	e.T.Helper()
	pid := e.CreateProject(e.Admin, "p-"+slug)
	return e.CreatePrompt(e.Admin, pid, slug)
}

// publishTemplate opens a draft with template, publishes it and returns
// its version number and commit.
func publishTemplate(e *testenv.Env, id, template string) (int, string) {
	e.T.Helper()
	r := e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"template": template, "model": "gpt-test"}).JSON(e.T)
	n := int(field(e.T, r, "version", "version").(float64))
	p := e.Must(200, "POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", id, n), e.Admin, nil).JSON(e.T)
	return n, str(e.T, p, "version", "commit")
}

func renderText(e *testenv.Env, id, token string, body any) (int, map[string]any) {
	e.T.Helper()
	r := e.Do("POST", "/v1/prompts/"+id+"/render", token, body)
	var m map[string]any
	json.Unmarshal(r.Body, &m)
	return r.Status, m
}

func TestPromptSmoke(t *testing.T) {
	e := testenv.New(t)
	id := newPrompt(e, "greet")
	publishTemplate(e, id, "Hello {{name}}!")
	st, m := renderText(e, id, e.Admin, obj{"variables": obj{"name": "<Ann & Bob>"}})
	if st != 200 || m["rendered"] != "Hello <Ann & Bob>!" {
		t.Fatalf("render: %d %v", st, m)
	}
	if !strings.Contains(e.Log.String(), "request") {
		t.Fatal("no log")
	}
}

func TestPromptCreateShape(t *testing.T) {
	e := testenv.New(t)
	pid := e.CreateProject(e.Admin, "shape")
	r := e.Must(201, "POST", "/v1/projects/"+pid+"/prompts", e.Admin, obj{"name": "Support Reply", "description": "d"}).JSON(t)
	p := r["prompt"].(map[string]any)
	for _, k := range []string{"id", "project_id", "name", "slug", "description", "created_at", "updated_at"} {
		if _, ok := p[k]; !ok {
			t.Fatalf("prompt lacks %s: %v", k, p)
		}
	}
	if p["slug"] != "support-reply" || p["project_id"] != pid {
		t.Fatalf("got %v", p)
	}
	id := p["id"].(string)
	e.Must(200, "GET", "/v1/prompts/support-reply", e.Admin, nil)
	e.Must(200, "PATCH", "/v1/prompts/"+id, e.Admin, obj{"description": "new"})
	list := e.Must(200, "GET", "/v1/projects/"+pid+"/prompts", e.Admin, nil).JSON(t)
	if n := len(list["prompts"].([]any)); n != 1 {
		t.Fatalf("list has %d prompts", n)
	}
	e.Must(409, "POST", "/v1/projects/"+pid+"/prompts", e.Admin, obj{"name": "Support Reply"})
	e.Must(204, "DELETE", "/v1/prompts/"+id, e.Admin, nil)
	e.Must(404, "GET", "/v1/prompts/"+id, e.Admin, nil)
}

func TestPromptVersions(t *testing.T) {
	e := testenv.New(t)
	id := newPrompt(e, "ver")
	repo := e.RepoPath("prompt", id)

	r := e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{
		"template": "Line one {{a}}\nLine two\n", "model": "gpt-x", "model_params": obj{"temperature": 0.2, "max_tokens": 100},
	}).JSON(t)
	v := r["version"].(map[string]any)
	if v["prompt_id"] != id || v["version"] != 1.0 || v["state"] != "draft" || v["template"] != "Line one {{a}}\nLine two\n" ||
		v["model"] != "gpt-x" || field(t, v, "model_params", "max_tokens") != 100.0 || v["commit"] == "" {
		t.Fatalf("created version: %v", v)
	}
	if got := testenv.Git(t, repo, "show", "draft/1:prompt.txt"); got != "Line one {{a}}\nLine two" {
		t.Fatalf("prompt.txt = %q", got)
	}
	if got := testenv.Git(t, repo, "show", "draft/1:config.json"); !strings.Contains(got, `"model": "gpt-x"`) {
		t.Fatalf("config.json = %s", got)
	}

	// PATCH edits the draft: only the fields given.
	r = e.Must(200, "PATCH", "/v1/prompts/"+id+"/versions/1", e.Admin, obj{"template": "Line one {{a}}\nLine 2\n"}).JSON(t)
	if str(t, r, "version", "model") != "gpt-x" || str(t, r, "version", "template") != "Line one {{a}}\nLine 2\n" {
		t.Fatalf("patched: %v", r)
	}
	commit := str(t, r, "version", "commit")
	e.Must(412, "PATCH", "/v1/prompts/"+id+"/versions/1", e.Admin, obj{"model": "m"}, `If-Match: "0000000000000000000000000000000000000000"`)
	e.Must(200, "PATCH", "/v1/prompts/"+id+"/versions/1", e.Admin, obj{"model": "m"}, `If-Match: "`+commit+`"`)
	e.Must(400, "PATCH", "/v1/prompts/"+id+"/versions/1", e.Admin, obj{"template": "x", "messages": []obj{{"role": "user", "content": "y"}}})
	e.Must(400, "PATCH", "/v1/prompts/"+id+"/versions/1", e.Admin, obj{"model_params": []int{1}})
	e.Must(400, "PATCH", "/v1/prompts/"+id+"/versions/1", e.Admin, obj{"messages": []obj{{"role": "Bad Role", "content": "y"}}})
	e.Must(400, "PATCH", "/v1/prompts/"+id+"/versions/1", e.Admin, obj{"template": 5})

	e.Must(200, "POST", "/v1/prompts/"+id+"/versions/1/publish", e.Admin, nil)
	e.Must(409, "PATCH", "/v1/prompts/"+id+"/versions/1", e.Admin, obj{"template": "x"})

	// A second version starts from live and switches to a chat prompt in
	// one commit on top of the "open draft" commit.
	r = e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{
		"messages": []obj{{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi {{a}}"}},
	}).JSON(t)
	v = r["version"].(map[string]any)
	if v["base_version"] != 1.0 || v["model"] != "m" || v["template"] != nil || len(v["messages"].([]any)) != 2 {
		t.Fatalf("chat version: %v", v)
	}
	files := testenv.Git(t, repo, "ls-tree", "-r", "--name-only", "draft/2")
	if files != "config.json\nmessages/001-system.txt\nmessages/002-user.txt" {
		t.Fatalf("files of draft 2:\n%s", files)
	}
	if got := testenv.Git(t, repo, "rev-parse", "draft/2~2"); got != testenv.Git(t, repo, "rev-parse", "v1^{commit}") {
		t.Fatal("draft 2 does not descend from v1")
	}

	// Diff and history come from the generic routes.
	d := e.Must(200, "GET", "/v1/prompts/"+id+"/diff?from=1&to=2", e.Admin, nil).JSON(t)
	if len(d["files"].([]any)) != 3 {
		t.Fatalf("diff: %v", d)
	}
	patch := string(e.Must(200, "GET", "/v1/prompts/"+id+"/diff?from=1&to=2&format=patch", e.Admin, nil).Body)
	if !strings.Contains(patch, "-Line 2") || !strings.Contains(patch, "+Hi {{a}}") {
		t.Fatalf("patch:\n%s", patch)
	}
	e.Must(200, "GET", "/v1/prompts/"+id+"/history", e.Admin, nil)
	list := e.Must(200, "GET", "/v1/prompts/"+id+"/versions", e.Admin, nil).JSON(t)
	vs := list["versions"].([]any)
	if len(vs) != 2 || vs[0].(map[string]any)["template"] == nil || vs[1].(map[string]any)["messages"] == nil {
		t.Fatalf("versions: %v", list)
	}

	// A version from an empty tree, and the publish check.
	e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"from": "empty"})
	r = e.Must(422, "POST", "/v1/prompts/"+id+"/versions/3/publish", e.Admin, nil).JSON(t)
	if !strings.Contains(r["error"].(string), "no template") {
		t.Fatalf("publish empty: %v", r)
	}
	e.Must(200, "PATCH", "/v1/prompts/"+id+"/versions/3", e.Admin, obj{"template": "{{#open}} never closed"})
	r = e.Must(422, "POST", "/v1/prompts/"+id+"/versions/3/publish", e.Admin, nil).JSON(t)
	if !strings.Contains(r["error"].(string), "Mustache") {
		t.Fatalf("publish bad: %v", r)
	}
	// A partial is a prompt of the project (issue 16): one that does not
	// exist is missing, as a variable would be.
	e.Must(200, "PATCH", "/v1/prompts/"+id+"/versions/3", e.Admin, obj{"messages": []obj{{"role": "user", "content": "{{> partial}}"}}})
	r = e.Must(422, "POST", "/v1/prompts/"+id+"/versions/3/publish", e.Admin, nil).JSON(t)
	if m := fmt.Sprint(get(t, r, "details", "missing")); m != "[>partial]" {
		t.Fatalf("publish with a missing partial: %v", r)
	}
	e.Must(200, "PATCH", "/v1/prompts/"+id+"/versions/3", e.Admin, obj{"messages": []obj{{"role": "user", "content": "ok {{x}}"}}})
	e.Must(200, "POST", "/v1/prompts/"+id+"/versions/3/publish", e.Admin, nil)
	e.Must(200, "POST", "/v1/prompts/"+id+"/versions/2/archive", e.Admin, nil)
	e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, nil)
	e.Must(204, "DELETE", "/v1/prompts/"+id+"/versions/4", e.Admin, nil)
	e.Must(400, "POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"from": -1})
	e.Must(404, "POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"from": 99})
	testenv.Git(t, repo, "fsck", "--strict")
}

// renderCases are run against one text prompt each.
var renderCases = []struct {
	name     string
	template string
	vars     any
	want     string
	missing  []string
}{
	{"plain", "Hello {{name}}!", obj{"name": "Ann"}, "Hello Ann!", nil},
	{"no escaping", "{{html}} {{{html}}} {{&html}}", obj{"html": `<b>"x" & 'y'</b>`}, `<b>"x" & 'y'</b> <b>"x" & 'y'</b> <b>"x" & 'y'</b>`, nil},
	{"unicode", "{{greeting}}, {{名前}} 👋", obj{"greeting": "Grüß dich", "名前": "太郎"}, "Grüß dich, 太郎 👋", nil},
	{"dotted", "{{user.name.first}} from {{user.city}}", obj{"user": obj{"name": obj{"first": "Zoë"}, "city": "Kraków"}}, "Zoë from Kraków", nil},
	{"section list", "{{#items}}- {{title}} ({{qty}})\n{{/items}}", obj{"items": []obj{{"title": "a", "qty": 1}, {"title": "b", "qty": 2.5}}}, "- a (1)\n- b (2.5)\n", nil},
	{"section scalar list", "{{#tags}}[{{.}}]{{/tags}}", obj{"tags": []string{"x", "y"}}, "[x][y]", nil},
	{"section object", "{{#user}}{{name}} uses {{tool}}{{/user}}", obj{"user": obj{"name": "Ann"}, "tool": "quire"}, "Ann uses quire", nil},
	{"section true", "{{#vip}}VIP {{/vip}}done", obj{"vip": true}, "VIP done", nil},
	{"section false", "{{#vip}}VIP {{/vip}}done", obj{"vip": false}, "done", nil},
	{"section absent is false", "{{#vip}}VIP {{name}}{{/vip}}done", obj{}, "done", nil},
	{"inverted absent", "{{^items}}none{{/items}}", obj{}, "none", nil},
	{"inverted empty list", "{{^items}}none{{/items}}", obj{"items": []any{}}, "none", nil},
	{"inverted present", "{{^items}}none{{/items}}ok", obj{"items": []int{1}}, "ok", nil},
	{"numbers keep their text", "{{big}} {{small}} {{neg}}", obj{"big": 1000000, "small": 0.000001, "neg": -3}, "1000000 0.000001 -3", nil},
	{"null renders empty", "[{{x}}]", obj{"x": nil}, "[]", nil},
	{"missing", "Hi {{name}}, {{user.email}} {{#s}}{{inner}}{{/s}}", obj{"user": obj{}}, "", []string{"name", "user.email"}},
	{"missing in list item", "{{#items}}{{title}}{{/items}}", obj{"items": []obj{{}}}, "", []string{"title"}},
	{"outer context from section", "{{#items}}{{title}}/{{sep}}{{/items}}", obj{"items": []obj{{"title": "a"}}, "sep": ";"}, "a/;", nil},
	{"no variables body", "static text", nil, "static text", nil},
	{"comments and delimiters", "{{! note }}{{=<% %>=}}<% a %>", obj{"a": "b"}, "b", nil},
}

func TestRender(t *testing.T) {
	e := testenv.New(t)
	pid := e.CreateProject(e.Admin, "render")
	for i, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			id := e.CreatePrompt(e.Admin, pid, fmt.Sprintf("r%d", i))
			publishTemplate(e, id, tc.template)
			body := obj{}
			if tc.vars != nil {
				body["variables"] = tc.vars
			}
			st, m := renderText(e, id, e.Admin, body)
			if tc.missing != nil {
				if st != 422 {
					t.Fatalf("status %d, want 422: %v", st, m)
				}
				got := fmt.Sprint(field(t, m, "details", "missing"))
				if got != fmt.Sprint(tc.missing) {
					t.Fatalf("missing = %s, want %v", got, tc.missing)
				}
				return
			}
			if st != 200 || m["rendered"] != tc.want {
				t.Fatalf("status %d, rendered %q, want %q\n%v", st, m["rendered"], tc.want, m)
			}
			if m["version"] != 1.0 || m["model"] != "gpt-test" || m["commit"] == "" || m["prompt_id"] != id {
				t.Fatalf("render record: %v", m)
			}
		})
	}
}

func TestRenderOptions(t *testing.T) {
	e := testenv.New(t)
	pid := e.CreateProject(e.Admin, "ro")
	id := e.CreatePrompt(e.Admin, pid, "opts")
	e.Must(404, "POST", "/v1/prompts/"+id+"/render", e.Admin, obj{}) // nothing live yet
	publishTemplate(e, id, "v1 {{a}}")
	e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"template": "v2 {{a}} {{b}}"})

	// Default live; a given version, draft included.
	if _, m := renderText(e, id, e.Admin, obj{"variables": obj{"a": 1}}); m["rendered"] != "v1 1" {
		t.Fatalf("live: %v", m)
	}
	if _, m := renderText(e, id, e.Admin, obj{"version": 2, "variables": obj{"a": 1, "b": 2}}); m["rendered"] != "v2 1 2" || m["version"] != 2.0 {
		t.Fatalf("draft: %v", m)
	}
	e.Must(404, "POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"version": 9})
	e.Must(400, "POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"version": "two"})
	e.Must(400, "POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"variables": []int{1}})
	e.Must(400, "POST", "/v1/prompts/"+id+"/render", e.Admin, `{"variables": `)
	e.Must(404, "POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"payload_id": "nope"})

	// By project and slug, and with a read-only key.
	reader := e.CreateKey(e.Admin, "read", pid)
	r := e.Must(200, "POST", "/v1/projects/ro/prompts/opts/render", reader, obj{"variables": obj{"a": "x"}}).JSON(t)
	if r["rendered"] != "v1 x" {
		t.Fatalf("by slug: %v", r)
	}
	e.Must(200, "POST", "/v1/projects/"+pid+"/prompts/"+id+"/render", reader, obj{"variables": obj{"a": "x"}})
	e.Must(404, "POST", "/v1/projects/ro/prompts/nope/render", reader, obj{})
	other := e.CreateProject(e.Admin, "other")
	e.Must(404, "POST", "/v1/projects/"+other+"/prompts/opts/render", e.Admin, obj{})
	e.Must(401, "POST", "/v1/prompts/"+id+"/render", "", obj{})

	// Variables of a version.
	vr := e.Must(200, "GET", "/v1/prompts/"+id+"/versions/2/variables", reader, nil).JSON(t)
	if fmt.Sprint(vr["required"]) != "[a b]" || len(vr["variables"].([]any)) != 2 {
		t.Fatalf("variables: %v", vr)
	}
	e.Must(200, "PATCH", "/v1/prompts/"+id+"/versions/2", e.Admin, obj{"template": "{{#items}}{{name}}{{/items}}{{^none}}{{x.y}}{{/none}}"})
	vr = e.Must(200, "GET", "/v1/prompts/"+id+"/versions/2/variables", reader, nil).JSON(t)
	want := `[map[name:items type:section] map[name:name section:items type:variable] map[name:none type:inverted] map[name:x.y section:none type:variable]]`
	if fmt.Sprint(vr["variables"]) != want || fmt.Sprint(vr["required"]) != "[]" {
		t.Fatalf("variables: %v", vr)
	}
	e.Must(400, "GET", "/v1/prompts/"+id+"/versions/x/variables", reader, nil)
}

func TestRenderChat(t *testing.T) {
	e := testenv.New(t)
	id := newPrompt(e, "chat")
	e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{
		"messages":     []obj{{"role": "system", "content": "You help {{company}}."}, {"role": "user", "content": "{{question}}"}},
		"model":        "chat-model",
		"model_params": obj{"temperature": 0},
	})
	e.Must(200, "POST", "/v1/prompts/"+id+"/versions/1/publish", e.Admin, nil)
	st, m := renderText(e, id, e.Admin, obj{"variables": obj{"company": "ACME & Co", "question": "Why <b>?"}})
	if st != 200 {
		t.Fatalf("status %d %v", st, m)
	}
	want := `[map[content:You help ACME & Co. role:system] map[content:Why <b>? role:user]]`
	if fmt.Sprint(m["messages"]) != want || m["model"] != "chat-model" || field(t, m, "model_params", "temperature") != 0.0 || m["rendered"] != nil {
		t.Fatalf("chat render: %v", m)
	}
	st, m = renderText(e, id, e.Admin, obj{})
	if st != 422 || fmt.Sprint(field(t, m, "details", "missing")) != "[company question]" {
		t.Fatalf("chat missing: %d %v", st, m)
	}
}

// TestAnswersCarryContentLength: a render and a live read answer with
// Content-Length, not chunked, whatever their size: net/http gives an
// answer that fits its buffer (2048 bytes) its length, and quire gives a
// larger one its own (writeEncoded).
func TestAnswersCarryContentLength(t *testing.T) {
	e := testenv.New(t)
	id := newPrompt(e, "length")
	publishTemplate(e, id, "{{text}}")
	base := len(renderOf(e, id, "").Body)
	for _, size := range []int{0, 1, 2047 - base, 2048 - base, 2049 - base, 5000, 60000} {
		r := renderOf(e, id, strings.Repeat("a", size))
		if r.Status != 200 {
			t.Fatalf("text of %d bytes: %d %s", size, r.Status, r.Body)
		}
		if got := r.Header.Get("Content-Length"); got != strconv.Itoa(len(r.Body)) {
			t.Errorf("text of %d bytes: Content-Length %q, body of %d bytes", size, got, len(r.Body))
		}
	}
	live := e.Must(200, "GET", "/v1/prompts/"+id+"/live", e.Admin, nil)
	if got := live.Header.Get("Content-Length"); got != strconv.Itoa(len(live.Body)) {
		t.Errorf("live read: Content-Length %q, body of %d bytes", got, len(live.Body))
	}
}

func renderOf(e *testenv.Env, id, text string) *testenv.Response {
	e.T.Helper()
	return e.Do("POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"variables": obj{"text": text}})
}
