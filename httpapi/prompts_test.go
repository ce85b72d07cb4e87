package httpapi_test

import (
	"encoding/json"
	"fmt"
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

func str(t testing.TB, m map[string]any, path ...string) string {
	t.Helper()
	s, _ := field(t, m, path...).(string)
	return s
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
