package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// draftTemplate opens a draft of prompt id with body and returns its
// number.
func draftPrompt(e *testenv.Env, id string, body obj) int {
	e.T.Helper()
	r := e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, body).JSON(e.T)
	return int(field(e.T, r, "version", "version").(float64))
}

func TestPromptComposition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pid := e.CreateProject(e.Admin, "compose")
	safety := e.CreatePrompt(e.Admin, pid, "safety")
	style := e.CreatePrompt(e.Admin, pid, "style")
	main := e.CreatePrompt(e.Admin, pid, "main")

	publishTemplate(e, style, "Be brief, {{name}}.")
	_, safety1 := publishTemplate(e, safety, "Stay safe. {{> style}}")
	_, mainCommit := publishTemplate(e, main, "Sys: {{> safety}}\nQ: {{q}}\nPinned: {{> safety@1}}")

	r := e.Must(200, "POST", "/v1/prompts/"+main+"/render", e.Admin, obj{"variables": obj{"name": "Ann", "q": "why?"}})
	m := r.JSON(t)
	if got := m["rendered"]; got != "Sys: Stay safe. Be brief, Ann.\nQ: why?\nPinned: Stay safe. Be brief, Ann." {
		t.Fatalf("rendered %q", got)
	}
	parts := arr(t, m, "partials")
	if len(parts) != 3 || str(t, parts[0], "slug") != "safety" || str(t, parts[0], "prompt_id") != safety ||
		str(t, parts[0], "commit") != safety1 || num(t, parts[0], "version") != 1 ||
		str(t, parts[1], "slug") != "style" || str(t, parts[2], "slug") != "safety@1" {
		t.Fatalf("partials %v", parts)
	}
	etag := r.Header.Get("ETag")
	if etag == "" || etag == `"`+mainCommit+`"` {
		t.Fatalf("ETag %q of a render with partials", etag)
	}
	// A prompt without partials: [] and its commit as ETag.
	r = e.Must(200, "POST", "/v1/prompts/"+style+"/render", e.Admin, obj{"variables": obj{"name": "x"}})
	if ps := arr(t, r.JSON(t), "partials"); len(ps) != 0 {
		t.Fatalf("partials %v", ps)
	}

	// A new live version of a nested partial shows in the next render and
	// changes the ETag; safety@1 includes style's live version, so it
	// changes too: a pin pins one level.
	publishTemplate(e, style, "Be kind, {{name}}.")
	r = e.Must(200, "POST", "/v1/prompts/"+main+"/render", e.Admin, obj{"variables": obj{"name": "Ann", "q": "why?"}})
	if got := r.JSON(t)["rendered"]; got != "Sys: Stay safe. Be kind, Ann.\nQ: why?\nPinned: Stay safe. Be kind, Ann." {
		t.Fatalf("after publishing style: %q", got)
	}
	if r.Header.Get("ETag") == etag {
		t.Fatal("ETag unchanged after a partial's publish")
	}
	// Promote back (a rollback of the partial) shows too.
	e.Must(200, "POST", "/v1/prompts/"+style+"/versions/1/promote", e.Admin, nil)
	if got := e.Must(200, "POST", "/v1/prompts/"+main+"/render", e.Admin, obj{"variables": obj{"name": "Ann", "q": "?"}}).JSON(t)["rendered"]; !strings.HasPrefix(got.(string), "Sys: Stay safe. Be brief") {
		t.Fatalf("after promoting style v1: %q", got)
	}

	// Missing partial at render and at publish.
	n := draftPrompt(e, main, obj{"template": "{{> nosuch}} {{> safety@9}} {{x}}"})
	m = wantError(t, e.Do("POST", "/v1/prompts/"+main+"/render", e.Admin, obj{"version": n}), 422)
	if got := fmt.Sprint(get(t, m, "details", "missing")); got != "[>nosuch >safety@9 x]" {
		t.Fatalf("missing %v", m)
	}
	m = wantError(t, e.Do("POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", main, n), e.Admin, nil), 422)
	if got := fmt.Sprint(get(t, m, "details", "missing")); got != "[>nosuch >safety@9]" {
		t.Fatalf("publish missing %v", m)
	}

	// Cycles: self, and through another prompt.
	self := draftPrompt(e, main, obj{"template": "again {{> main}}"})
	m = wantError(t, e.Do("POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", main, self), e.Admin, nil), 422)
	if got := fmt.Sprint(get(t, m, "details", "cycle")); got != "[main main]" {
		t.Fatalf("self cycle %v", m)
	}
	styleDraft := draftPrompt(e, style, obj{"template": "style {{> main}}"})
	m = wantError(t, e.Do("POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", style, styleDraft), e.Admin, nil), 422)
	if got := fmt.Sprint(get(t, m, "details", "cycle")); got != "[style main safety style]" {
		t.Fatalf("cycle %v", m)
	}

	// A chat prompt cannot be included.
	chat := e.CreatePrompt(e.Admin, pid, "chatty")
	cn := draftPrompt(e, chat, obj{"messages": []obj{{"role": "user", "content": "hi"}}})
	e.Must(200, "POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", chat, cn), e.Admin, nil)
	n = draftPrompt(e, main, obj{"template": "{{> chatty}}"})
	wantError(t, e.Do("POST", "/v1/prompts/"+main+"/render", e.Admin, obj{"version": n}), 422, "chat prompt")

	// Partials come from the prompt's own project only.
	other := e.CreateProject(e.Admin, "elsewhere")
	ext := e.CreatePrompt(e.Admin, other, "ext")
	en := draftPrompt(e, ext, obj{"template": "{{> style}}"})
	wantError(t, e.Do("POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", ext, en), e.Admin, nil), 422, "missing partials: style")

	// Dependents: main (live and drafts) includes safety; safety includes
	// style, so main's live version reaches style through safety, and
	// the draft "again {{> main}}" reaches both through the live main,
	// as style's draft "style {{> main}}" reaches safety.
	d := e.Must(200, "GET", "/v1/prompts/"+safety+"/dependents", e.Admin, nil).JSON(t)
	deps := arr(t, d, "dependents")
	if len(deps) != 2 || str(t, deps[0], "slug") != "main" || str(t, deps[0], "id") != main || get(t, deps[0], "direct") != true ||
		str(t, deps[1], "slug") != "style" || get(t, deps[1], "direct") != false ||
		fmt.Sprint(get(t, deps[1], "versions")) != fmt.Sprintf("[map[includes:[] live:false state:draft version:%d via:[main]]]", styleDraft) {
		t.Fatalf("dependents of safety: %v", d)
	}
	vs := arr(t, deps[0], "versions")
	if got := fmt.Sprint(vs); len(vs) != 3 || num(t, vs[0], "version") != 1 || get(t, vs[0], "live") != true ||
		fmt.Sprint(get(t, vs[0], "includes"), get(t, vs[0], "via")) != "[safety safety@1] []" ||
		fmt.Sprint(get(t, vs[1], "includes"), get(t, vs[1], "via")) != "[safety@9] []" ||
		num(t, vs[2], "version") != self || fmt.Sprint(get(t, vs[2], "includes"), get(t, vs[2], "via")) != "[] [main]" {
		t.Fatalf("versions %s", got)
	}
	d = e.Must(200, "GET", "/v1/prompts/"+style+"/dependents", e.Admin, nil).JSON(t)
	deps = arr(t, d, "dependents")
	if len(deps) != 2 || str(t, deps[0], "slug") != "safety" || get(t, deps[0], "direct") != true ||
		str(t, deps[1], "slug") != "main" || get(t, deps[1], "direct") != false {
		t.Fatalf("dependents of style: %v", d)
	}
	if vs := arr(t, deps[1], "versions"); len(vs) != 2 || fmt.Sprint(get(t, vs[0], "includes"), get(t, vs[0], "via")) != "[] [safety safety@1]" ||
		fmt.Sprint(get(t, vs[1], "via")) != "[main]" {
		t.Fatalf("main reaches style: %v", vs)
	}
	if deps := arr(t, e.Must(200, "GET", "/v1/prompts/"+main+"/dependents", e.Admin, nil).JSON(t), "dependents"); len(deps) != 1 || str(t, deps[0], "slug") != "style" {
		t.Fatalf("dependents of main: %v", deps) // style's draft includes main
	}
}

func TestChatPlaceholders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := newPrompt(e, "chat")
	n := draftPrompt(e, id, obj{"messages": []obj{
		{"role": "system", "content": "You are {{persona}}."},
		{"type": "placeholder", "name": "history"},
		{"role": "user", "content": "{{question}}"},
	}})
	v := e.Must(200, "GET", fmt.Sprintf("/v1/prompts/%s/versions/%d", id, n), e.Admin, nil).JSON(t)
	msgs := arr(t, v, "version", "messages")
	if len(msgs) != 3 || fmt.Sprint(msgs[1]) != "map[name:history type:placeholder]" || fmt.Sprint(msgs[0]) != "map[content:You are {{persona}}. role:system]" {
		t.Fatalf("messages %v", msgs)
	}
	repo := e.RepoPath("prompt", id)
	if ls := testenv.Git(t, repo, "ls-tree", "-r", "--name-only", fmt.Sprintf("draft/%d", n)); !strings.Contains(ls, "messages/002-placeholder-history.txt") {
		t.Fatalf("files:\n%s", ls)
	}
	// The placeholder is listed among the variables, and required.
	vars := e.Must(200, "GET", fmt.Sprintf("/v1/prompts/%s/versions/%d/variables", id, n), e.Admin, nil).JSON(t)
	if fmt.Sprint(get(t, vars, "variables")) != "[map[name:persona type:variable] map[name:question type:variable] map[name:history type:placeholder]]" ||
		fmt.Sprint(get(t, vars, "required")) != "[persona question history]" {
		t.Fatalf("variables %v", vars)
	}
	e.Must(200, "POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", id, n), e.Admin, nil)

	hist := []obj{{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}}
	r := e.Must(200, "POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"variables": obj{"persona": "terse", "question": "ok?", "history": hist}}).JSON(t)
	got := arr(t, r, "messages")
	if len(got) != 4 || fmt.Sprint(got) != "[map[content:You are terse. role:system] map[content:hi role:user] map[content:hello role:assistant] map[content:ok? role:user]]" {
		t.Fatalf("messages %v", got)
	}
	// An empty history splices nothing.
	r = e.Must(200, "POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"variables": obj{"persona": "p", "question": "q", "history": []obj{}}}).JSON(t)
	if len(arr(t, r, "messages")) != 2 {
		t.Fatalf("messages %v", r)
	}
	m := wantError(t, e.Do("POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"variables": obj{"persona": "p"}}), 422)
	if fmt.Sprint(get(t, m, "details", "missing")) != "[history question]" {
		t.Fatalf("missing %v", m)
	}
	for _, bad := range []any{"text", obj{"role": "user"}, []any{"x"}, []obj{{"role": "user", "content": 3}}, []obj{{"role": "user"}}} {
		wantError(t, e.Do("POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"variables": obj{"persona": "p", "question": "q", "history": bad}}), 422, "history")
	}
	// A placeholder has a name and nothing else.
	wantError(t, e.Do("POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"messages": []obj{{"type": "placeholder", "name": "Bad-Name"}}}), 400)
	wantError(t, e.Do("POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"messages": []obj{{"type": "placeholder", "name": "h", "content": "x"}}}), 400)
	wantError(t, e.Do("POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"messages": []obj{{"type": "other", "role": "user"}}}), 400)
	testenv.Git(t, repo, "fsck", "--strict")
}

func TestTypedVariables(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := newPrompt(e, "typed")
	schema := obj{
		"type":       "object",
		"required":   []string{"name", "age"},
		"properties": obj{"name": obj{"type": "string"}, "age": obj{"type": "integer", "minimum": 0}},
	}
	n := draftPrompt(e, id, obj{"template": "{{name}} is {{age}}", "variables_schema": schema})
	repo := e.RepoPath("prompt", id)
	if s := testenv.Git(t, repo, "show", fmt.Sprintf("draft/%d:variables.schema.json", n)); !strings.Contains(s, `"required"`) {
		t.Fatalf("schema file %q", s)
	}
	vars := e.Must(200, "GET", fmt.Sprintf("/v1/prompts/%s/versions/%d/variables", id, n), e.Admin, nil).JSON(t)
	if get(t, vars, "variables_schema", "type") != "object" || len(arr(t, vars, "variables")) != 2 {
		t.Fatalf("variables %v", vars)
	}

	// Payloads are test cases: one fails the schema, publish names it.
	e.Must(201, "POST", "/v1/prompts/"+id+"/payloads", e.Admin, obj{"name": "good", "variables": obj{"name": "Ann", "age": 30}})
	bad := str(t, e.Must(201, "POST", "/v1/prompts/"+id+"/payloads", e.Admin, obj{"name": "bad", "variables": obj{"name": "Bob", "age": "old"}}).JSON(t), "payload", "id")
	chk := e.Must(200, "POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/check", id, n), e.Admin, nil).JSON(t)
	ps := arr(t, chk, "payloads")
	if get(t, chk, "ok") != false || len(ps) != 2 {
		t.Fatalf("check %v", chk)
	}
	for _, p := range ps {
		switch str(t, p, "name") {
		case "good":
			if get(t, p, "ok") != true || num(t, p, "output_bytes") != len("Ann is 30") {
				t.Fatalf("good %v", p)
			}
		case "bad":
			if get(t, p, "ok") != false || str(t, p, "payload_id") != bad || str(t, arr(t, p, "errors")[0], "path") != "/age" {
				t.Fatalf("bad %v", p)
			}
		}
	}
	m := wantError(t, e.Do("POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", id, n), e.Admin, nil), 422, `"bad"`)
	if fmt.Sprint(get(t, arr(t, m["details"], "payloads")[0], "id")) != bad {
		t.Fatalf("publish %v", m)
	}
	e.Must(204, "DELETE", "/v1/prompts/"+id+"/payloads/"+bad, e.Admin, nil)
	e.Must(200, "POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", id, n), e.Admin, nil)

	// Render validates: JSON pointers in details.errors.
	m = wantError(t, e.Do("POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"variables": obj{"name": "A", "age": -1}}), 422)
	errs := arr(t, m["details"], "errors")
	if len(errs) != 1 || str(t, errs[0], "path") != "/age" || str(t, errs[0], "message") == "" {
		t.Fatalf("errors %v", m)
	}
	m = wantError(t, e.Do("POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"variables": obj{"age": 1.5}}), 422)
	if errs := arr(t, m["details"], "errors"); len(errs) != 2 {
		t.Fatalf("errors %v", m)
	}
	if r := e.Must(200, "POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"variables": obj{"name": "A", "age": 1000000}}).JSON(t); r["rendered"] != "A is 1000000" {
		t.Fatalf("render %v", r)
	}

	// A schema that does not compile, or is not an object, is refused
	// when written; null removes it.
	wantError(t, e.Do("POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"variables_schema": obj{"type": 7}}), 422)
	wantError(t, e.Do("POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"variables_schema": "x"}), 400)
	wantError(t, e.Do("POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"variables_schema": obj{"$ref": "https://example.com/s.json"}}), 422)
	n = draftPrompt(e, id, obj{})
	e.Must(200, "PATCH", fmt.Sprintf("/v1/prompts/%s/versions/%d", id, n), e.Admin, map[string]any{"variables_schema": nil})
	if ls := testenv.Git(t, repo, "ls-tree", "--name-only", fmt.Sprintf("draft/%d", n)); strings.Contains(ls, "schema") {
		t.Fatalf("schema kept: %s", ls)
	}
}

// TestPartialPublishAcrossServers: two servers on one data root and one
// Redis; a partial published through one shows in the next render of
// its includer through the other, whose live read of the includer is
// cached.
func TestPartialPublishAcrossServers(t *testing.T) {
	t.Parallel()
	a, z := twoServers(t)
	pid := a.CreateProject(a.Admin, "shared")
	part := a.CreatePrompt(a.Admin, pid, "part")
	main := a.CreatePrompt(a.Admin, pid, "main")
	publishTemplate(a, part, "one")
	publishTemplate(a, main, "[{{> part}}]")
	render := func(e *testenv.Env) (string, string) {
		t.Helper()
		r := e.Must(200, "POST", "/v1/prompts/"+main+"/render", e.Admin, nil)
		return r.JSON(t)["rendered"].(string), r.Header.Get("ETag")
	}
	for range 3 { // warm both servers' caches
		render(a)
		render(z)
	}
	_, etag := render(z)
	publishTemplate(a, part, "two")
	if got, tag := render(z); got != "[two]" || tag == etag {
		t.Fatalf("Z renders %q (ETag %s, was %s) after A published the partial", got, tag, etag)
	}
	z.Must(200, "POST", "/v1/prompts/"+part+"/versions/1/promote", z.Admin, nil)
	if got, _ := render(a); got != "[one]" {
		t.Fatalf("A renders %q after Z promoted v1 of the partial", got)
	}
	z.Must(200, "POST", "/v1/prompts/"+part+"/versions/2/archive", z.Admin, nil)
	n := draftPrompt(a, main, obj{"template": "[{{> part@2}}]"})
	wantError(t, z.Do("POST", fmt.Sprintf("/v1/prompts/%s/render", main), z.Admin, obj{"version": n}), 422, "part@2")
}
