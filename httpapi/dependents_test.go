package httpapi_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// wideTemplate names n distinct partials, none of them a prompt, in
// short tags so 95,000 of them fit under the 1 MiB file limit.
func wideTemplate(n int, also ...string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("{{>")
		b.WriteString(strconv.FormatInt(int64(i), 36))
		b.WriteString("}}")
	}
	for _, a := range also {
		b.WriteString("{{> " + a + "}}")
	}
	return b.String()
}

// TestPartialCap: one prompt's templates may name at most 1,000 distinct
// partials; more is 422 with details.limit, and nothing is written.
// Naming one partial many times counts once.
func TestPartialCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := newPrompt(e, "capped")
	e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"template": wideTemplate(1000) + strings.Repeat("{{>0}}", 5000)})
	for _, body := range []obj{
		{"template": wideTemplate(1001)},
		{"messages": []obj{{"role": "system", "content": wideTemplate(600)}, {"role": "user", "content": strings.ReplaceAll(wideTemplate(401), "{{>", "{{>m")}}},
	} {
		m := wantError(t, e.Do("POST", "/v1/prompts/"+id+"/versions", e.Admin, body), 422, "partials", "1000")
		if get(t, m, "details", "limit") != float64(1000) {
			t.Errorf("details %v", m["details"])
		}
		wantError(t, e.Do("PATCH", "/v1/prompts/"+id+"/versions/1", e.Admin, body), 422, "partials")
	}
	if n := len(arr(t, e.Must(200, "GET", "/v1/prompts/"+id+"/versions", e.Admin, nil).JSON(t), "versions")); n != 1 {
		t.Errorf("%d versions after refusals, want 1", n)
	}
}

// TestDependentsWide: a draft naming 95,000 distinct partials (pushed
// with git, which the write-time cap does not parse) does not make
// dependents or publish slow or wrong: the walk is linear (a set of
// names, maps to resolve them), the answer right, and publishing it is
// refused by the cap. BenchmarkDependentsWide measures the time.
func TestDependentsWide(t *testing.T) {
	t.Parallel()
	sequentialHeavy(t)
	e, _, wide, n := wideProject(t)
	m := wantError(t, e.Do("POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", wide, n), e.Admin, nil), 422, "95001 distinct partials")
	if get(t, m, "details", "limit") != float64(1000) {
		t.Errorf("details %v", m["details"])
	}
}

// BenchmarkDependentsWide measures GET …/dependents of a partial in a
// project whose one draft names 95,000 distinct partials (42.8 s of CPU
// before the walk was made linear):
//
//	go test ./httpapi -run xxx -bench DependentsWide -benchtime 5x
func BenchmarkDependentsWide(b *testing.B) {
	e, style, _, _ := wideProject(b)
	for b.Loop() {
		e.Must(200, "GET", "/v1/prompts/"+style+"/dependents", e.Admin, nil)
	}
}

// wideProject makes a project with a published prompt style and a prompt
// wide whose draft n (pushed with git, which the write-time cap does not
// parse) names 95,000 partials and style, and checks style's dependents.
func wideProject(t testing.TB) (e *testenv.Env, style, wide string, n int) {
	e = testenv.New(t)
	g := newGitClient(t, e)
	pid := e.CreateProject(e.Admin, "wide")
	style = e.CreatePrompt(e.Admin, pid, "style")
	publishTemplate(e, style, "Be brief.")
	wide = e.CreatePrompt(e.Admin, pid, "wide")
	n = draftPrompt(e, wide, obj{"template": "first"})
	dir := filepath.Join(t.TempDir(), "wide")
	g.must("", "clone", "-q", "-b", fmt.Sprintf("draft/%d", n), g.url(e.Admin, "wide/prompts/wide.git"), dir)
	g.commitFile(dir, "prompt.txt", wideTemplate(95000, "style"))
	g.must(dir, "push", "-q", "origin", fmt.Sprintf("draft/%d", n))

	deps := arr(t, e.Must(200, "GET", "/v1/prompts/"+style+"/dependents", e.Admin, nil).JSON(t), "dependents")
	if len(deps) != 1 || str(t, deps[0], "slug") != "wide" || get(t, deps[0], "direct") != true {
		t.Fatalf("dependents of style: %v", deps)
	}
	return e, style, wide, n
}

// TestDependentsLabels: a version a label points at is a dependent like
// the live one and the drafts: a render by that label includes what it
// includes.
func TestDependentsLabels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pid := e.CreateProject(e.Admin, "labelled")
	style := e.CreatePrompt(e.Admin, pid, "style")
	publishTemplate(e, style, "Be brief.")
	greeting := e.CreatePrompt(e.Admin, pid, "greeting")
	v1, _ := publishTemplate(e, greeting, "Hello. {{> style}}")
	publishTemplate(e, greeting, "Hello.") // v2 is live and includes nothing
	e.Must(200, "PUT", "/v1/prompts/"+greeting+"/labels/staging", e.Admin, obj{"version": v1})

	deps := arr(t, e.Must(200, "GET", "/v1/prompts/"+style+"/dependents", e.Admin, nil).JSON(t), "dependents")
	if len(deps) != 1 || str(t, deps[0], "slug") != "greeting" || get(t, deps[0], "direct") != true {
		t.Fatalf("dependents of style: %v", deps)
	}
	vs := arr(t, deps[0], "versions")
	if len(vs) != 1 || num(t, vs[0], "version") != v1 || get(t, vs[0], "live") != false ||
		fmt.Sprint(get(t, vs[0], "labels"), get(t, vs[0], "includes")) != "[staging] [style]" {
		t.Fatalf("versions: %v", vs)
	}
	// Moved off v1, the label no longer makes greeting a dependent.
	e.Must(200, "PUT", "/v1/prompts/"+greeting+"/labels/staging", e.Admin, obj{"version": v1 + 1})
	if deps := arr(t, e.Must(200, "GET", "/v1/prompts/"+style+"/dependents", e.Admin, nil).JSON(t), "dependents"); len(deps) != 0 {
		t.Fatalf("dependents after the label moved: %v", deps)
	}
}

// BenchmarkRenderWide measures a render of the 95,000-partial draft: 422
// naming the missing partials, each looked up once.
//
//	go test ./httpapi -run xxx -bench RenderWide -benchtime 3x
func BenchmarkRenderWide(b *testing.B) {
	e, _, wide, n := wideProject(b)
	for b.Loop() {
		e.Must(422, "POST", "/v1/prompts/"+wide+"/render", e.Admin, obj{"version": n})
	}
}
