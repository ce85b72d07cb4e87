package httpapi_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/quire/quire/internal/testenv"
)

func TestProjects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.Must(201, "POST", "/v1/projects", e.Admin, map[string]string{"name": "My First Project!", "description": "d"})
	p := r.JSON(t)
	id := str(t, p, "project", "id")
	if uuid.Validate(id) != nil || str(t, p, "project", "slug") != "my-first-project" || str(t, p, "project", "description") != "d" {
		t.Fatalf("created project: %s", r.Body)
	}
	adminID := str(t, e.Must(200, "GET", "/v1/auth/me", e.Admin, nil).JSON(t), "user", "id")
	if ms := arr(t, p, "project", "members"); len(ms) != 1 || str(t, ms[0], "user_id") != adminID || str(t, ms[0], "role") != "owner" {
		t.Fatalf("creator is not the owner: %v", ms)
	}
	wantError(t, e.Do("POST", "/v1/projects", e.Admin, map[string]string{"name": "Again", "slug": "my-first-project"}), 409, "slug")

	// By id and by slug.
	e.Must(200, "GET", "/v1/projects/"+id, e.Admin, nil)
	if got := str(t, e.Must(200, "GET", "/v1/projects/my-first-project", e.Admin, nil).JSON(t), "project", "id"); got != id {
		t.Fatalf("by slug: %s", got)
	}
	wantError(t, e.Do("GET", "/v1/projects/"+uuid.NewString(), e.Admin, nil), 404)
	wantError(t, e.Do("GET", "/v1/projects/no-such", e.Admin, nil), 404)

	// Paging.
	e.CreateProject(e.Admin, "b-project")
	e.CreateProject(e.Admin, "c-project")
	pg := e.Must(200, "GET", "/v1/projects?limit=2", e.Admin, nil).JSON(t)
	if len(arr(t, pg, "projects")) != 2 || str(t, pg, "next_cursor") == "" {
		t.Fatalf("page 1: %v", pg)
	}
	pg2 := e.Must(200, "GET", "/v1/projects?limit=2&cursor="+str(t, pg, "next_cursor"), e.Admin, nil).JSON(t)
	if len(arr(t, pg2, "projects")) != 1 || str(t, pg2, "next_cursor") != "" {
		t.Fatalf("page 2: %v", pg2)
	}
	seen := map[string]bool{}
	for _, x := range append(arr(t, pg, "projects"), arr(t, pg2, "projects")...) {
		seen[str(t, x, "slug")] = true
	}
	if len(seen) != 3 {
		t.Fatalf("pages overlap: %v", seen)
	}
	for _, q := range []string{"limit=0", "limit=501", "limit=x", "cursor=-1", "cursor=abc"} {
		wantError(t, e.Do("GET", "/v1/projects?"+q, e.Admin, nil), 400)
	}

	// Update.
	m := e.Must(200, "PATCH", "/v1/projects/"+id, e.Admin, map[string]string{"name": "Renamed", "slug": "renamed"}).JSON(t)
	if str(t, m, "project", "name") != "Renamed" || str(t, m, "project", "slug") != "renamed" || str(t, m, "project", "description") != "d" {
		t.Fatalf("patched: %v", m)
	}
	e.Must(200, "GET", "/v1/projects/renamed", e.Admin, nil)
	wantError(t, e.Do("GET", "/v1/projects/my-first-project", e.Admin, nil), 404)
	wantError(t, e.Do("PATCH", "/v1/projects/"+id, e.Admin, map[string]string{"slug": "b-project"}), 409)
	wantError(t, e.Do("PATCH", "/v1/projects/"+id, e.Admin, map[string]string{"slug": "Bad Slug"}), 400, "slug")
	wantError(t, e.Do("PATCH", "/v1/projects/"+id, e.Admin, map[string]string{"name": ""}), 400, "name")

	// Members by email; unknown users and roles are refused.
	_, _ = e.CreateUser("member@example.com")
	m = e.Must(200, "POST", "/v1/projects/"+id+"/members", e.Admin, map[string]string{"email": "member@example.com", "role": "viewer"}).JSON(t)
	if str(t, m, "member", "role") != "viewer" || len(arr(t, m, "members")) != 2 {
		t.Fatalf("add member: %v", m)
	}
	wantError(t, e.Do("POST", "/v1/projects/"+id+"/members", e.Admin, map[string]string{"email": "ghost@example.com", "role": "viewer"}), 422)
	wantError(t, e.Do("POST", "/v1/projects/"+id+"/members", e.Admin, map[string]string{"email": "member@example.com", "role": "king"}), 400, "role")
	wantError(t, e.Do("POST", "/v1/projects/"+id+"/members", e.Admin, map[string]string{"role": "viewer"}), 400)
	wantError(t, e.Do("DELETE", "/v1/projects/"+id+"/members/"+uuid.NewString(), e.Admin, nil), 404)

	// Delete takes the project's skills and their repositories with it.
	sid := e.CreateSkill(e.Admin, id, "doomed")
	repo := e.RepoPath("skill", sid)
	if _, err := os.Stat(repo); err != nil {
		t.Fatal(err)
	}
	e.Must(204, "DELETE", "/v1/projects/"+id, e.Admin, nil)
	wantError(t, e.Do("GET", "/v1/projects/"+id, e.Admin, nil), 404)
	wantError(t, e.Do("GET", "/v1/skills/"+sid, e.Admin, nil), 404)
	if _, err := os.Stat(repo); !os.IsNotExist(err) {
		t.Fatalf("skill repository survived its project: %v", err)
	}
	wantError(t, e.Do("DELETE", "/v1/projects/"+id, e.Admin, nil), 404)
	sys := filepath.Join(e.Store.Root(), "_system.git")
	testenv.Git(t, sys, "fsck", "--strict", "--no-dangling")
	if log := testenv.Git(t, sys, "log", "--format=%s"); !strings.Contains(log, "Delete project "+id) {
		t.Fatalf("no delete commit:\n%s", log)
	}
}

func TestSkills(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pid := e.CreateProject(e.Admin, "tools")
	r := e.Must(201, "POST", "/v1/projects/"+pid+"/skills", e.Admin, map[string]string{"name": "PDF Tools", "description": "Fill PDFs"})
	m := r.JSON(t)
	if len(m) != 1 {
		t.Fatalf("create answer has keys besides skill: %s", r.Body)
	}
	sk := get(t, m, "skill").(map[string]any)
	// SPEC endpoint 3: exactly these fields, with ISO 8601 times.
	for _, k := range []string{"id", "project_id", "name", "slug", "description", "created_at", "updated_at"} {
		if _, ok := sk[k]; !ok {
			t.Fatalf("skill lacks %s: %s", k, r.Body)
		}
	}
	id := str(t, sk, "id")
	if uuid.Validate(id) != nil || str(t, sk, "project_id") != pid || str(t, sk, "name") != "PDF Tools" || str(t, sk, "slug") != "pdf-tools" || str(t, sk, "description") != "Fill PDFs" {
		t.Fatalf("skill: %s", r.Body)
	}
	for _, k := range []string{"created_at", "updated_at"} {
		if _, err := time.Parse(time.RFC3339Nano, str(t, sk, k)); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	// A bare repository, HEAD on main, fsck-clean, and the metadata commit.
	repo := e.RepoPath("skill", id)
	if testenv.Git(t, repo, "rev-parse", "--is-bare-repository") != "true" || testenv.Git(t, repo, "symbolic-ref", "HEAD") != "refs/heads/main" {
		t.Fatal("skill repository is not a bare repository on main")
	}
	testenv.Git(t, repo, "fsck", "--strict")
	sys := filepath.Join(e.Store.Root(), "_system.git")
	if !strings.Contains(testenv.Git(t, sys, "log", "-1", "--format=%an|%s"), "Admin|Create skill pdf-tools") {
		t.Fatal("no commit for the new skill")
	}

	// Slugs: unique in a project (409), free across projects, where a slug
	// the caller sees twice is a 409 asking for the id.
	wantError(t, e.Do("POST", "/v1/projects/"+pid+"/skills", e.Admin, map[string]string{"name": "PDF tools"}), 409, "slug")
	other := e.CreateProject(e.Admin, "other")
	otherID := e.CreateSkill(e.Admin, other, "pdf-tools")
	amb := wantError(t, e.Do("GET", "/v1/skills/pdf-tools", e.Admin, nil), 409, "id")
	if ids := arr(t, amb, "details", "ids"); len(ids) != 2 {
		t.Fatalf("ambiguity lists %v", ids)
	}
	e.Must(200, "GET", "/v1/skills/"+otherID, e.Admin, nil)
	// Someone who sees one of the two gets it by slug.
	uid, user := e.CreateUser("u@example.com")
	e.Must(200, "POST", "/v1/projects/"+other+"/members", e.Admin, map[string]string{"user_id": uid, "role": "viewer"})
	if got := str(t, e.Must(200, "GET", "/v1/skills/pdf-tools", user, nil).JSON(t), "skill", "id"); got != otherID {
		t.Fatalf("slug resolved to %s, want %s", got, otherID)
	}

	// List and page.
	e.CreateSkill(e.Admin, pid, "alpha")
	e.CreateSkill(e.Admin, pid, "zeta")
	l := e.Must(200, "GET", "/v1/projects/"+pid+"/skills?limit=2", e.Admin, nil).JSON(t)
	var slugs []string
	for _, s := range arr(t, l, "skills") {
		slugs = append(slugs, str(t, s, "slug"))
	}
	l2 := e.Must(200, "GET", "/v1/projects/tools/skills?cursor="+str(t, l, "next_cursor"), e.Admin, nil).JSON(t)
	for _, s := range arr(t, l2, "skills") {
		slugs = append(slugs, str(t, s, "slug"))
	}
	if !sort.StringsAreSorted(slugs) || strings.Join(slugs, ",") != "alpha,pdf-tools,zeta" {
		t.Fatalf("listed %v", slugs)
	}
	wantError(t, e.Do("GET", "/v1/projects/"+uuid.NewString()+"/skills", e.Admin, nil), 404)
	wantError(t, e.Do("POST", "/v1/projects/"+uuid.NewString()+"/skills", e.Admin, map[string]string{"name": "x"}), 404)

	// Update.
	m = e.Must(200, "PATCH", "/v1/skills/"+id, e.Admin, map[string]string{"description": "Fill and read PDFs"}).JSON(t)
	if str(t, m, "skill", "description") != "Fill and read PDFs" || str(t, m, "skill", "name") != "PDF Tools" {
		t.Fatalf("patched: %v", m)
	}
	wantError(t, e.Do("PATCH", "/v1/skills/"+id, e.Admin, map[string]string{"slug": "alpha"}), 409)
	e.Must(200, "PATCH", "/v1/skills/"+id, e.Admin, map[string]string{"slug": "pdf"})
	if got := str(t, e.Must(200, "GET", "/v1/skills/"+id, e.Admin, nil).JSON(t), "skill", "slug"); got != "pdf" {
		t.Fatalf("slug after patch: %s", got)
	}

	// Delete.
	e.Must(204, "DELETE", "/v1/skills/"+id, e.Admin, nil)
	wantError(t, e.Do("GET", "/v1/skills/"+id, e.Admin, nil), 404)
	wantError(t, e.Do("DELETE", "/v1/skills/"+id, e.Admin, nil), 404)
	if _, err := os.Stat(repo); !os.IsNotExist(err) {
		t.Fatalf("repository survived its skill: %v", err)
	}
	// The slug is free again.
	e.Must(201, "POST", "/v1/projects/"+pid+"/skills", e.Admin, map[string]string{"name": "PDF", "slug": "pdf"})
	testenv.Git(t, sys, "fsck", "--strict", "--no-dangling")
}

func TestOperations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.Must(200, "GET", "/healthz", "", nil)
	e.Must(200, "GET", "/readyz", "", nil)
	wantError(t, e.Do("GET", "/v1/nope", e.Admin, nil), 404)
	wantError(t, e.Do("PUT", "/v1/projects", e.Admin, nil), 405)
	// A sane request id is echoed, a bad one replaced.
	if got := e.Do("GET", "/healthz", "", nil, "X-Request-ID: abc-123").Header.Get("X-Request-ID"); got != "abc-123" {
		t.Fatalf("request id %q", got)
	}
	if got := e.Do("GET", "/healthz", "", nil, "X-Request-ID: a b").Header.Get("X-Request-ID"); got == "" || got == "a b" {
		t.Fatalf("request id %q", got)
	}
	// Tokens never reach the log.
	if strings.Contains(e.Log.String(), e.Admin[len(e.Admin)-64:]) {
		t.Fatal("a session secret is in the log")
	}
}
