package httpapi_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// publicFixture: project "pub" (made public) and project "priv", each
// with a skill (v1 published, draft 2 open) and a prompt (v1 published,
// draft 2 open).
func publicFixture(t *testing.T) *testenv.Env {
	t.Helper()
	e := newEnv(t)
	for _, p := range []string{"pub", "priv"} {
		pid := e.CreateProject(e.Admin, p)
		sid := e.CreateSkill(e.Admin, pid, p+"-skill")
		e.Must(201, "POST", "/v1/skills/"+sid+"/versions", e.Admin, nil)
		e.Must(200, "POST", "/v1/skills/"+sid+"/versions/1/files", e.Admin, map[string]string{"file_path": "SKILL.md", "content": testenv.SkillManifest(p + "-skill")})
		e.Must(200, "POST", "/v1/skills/"+sid+"/versions/1/publish", e.Admin, nil)
		e.Must(201, "POST", "/v1/skills/"+sid+"/versions", e.Admin, nil)
		e.Must(200, "POST", "/v1/skills/"+sid+"/versions/2/files", e.Admin, map[string]string{"file_path": "draft.md", "content": "secret draft\n"})
		prid := e.CreatePrompt(e.Admin, pid, p+"-prompt")
		e.Must(201, "POST", "/v1/prompts/"+prid+"/versions", e.Admin, map[string]string{"template": "Hello {{name}}"})
		e.Must(200, "POST", "/v1/prompts/"+prid+"/versions/1/publish", e.Admin, nil)
		e.Must(201, "POST", "/v1/prompts/"+prid+"/versions", e.Admin, map[string]string{"template": "Draft {{name}}"})
	}
	return e
}

func TestProjectVisibility(t *testing.T) {
	e := publicFixture(t)
	if v := get(t, e.Must(200, "GET", "/v1/projects/pub", e.Admin, nil).JSON(t), "project", "visibility"); v != "private" {
		t.Fatalf("default visibility %v", v)
	}
	viewerID, viewer := e.CreateUser("viewer@example.com")
	editorID, editor := e.CreateUser("editor@example.com")
	e.Must(200, "PUT", "/v1/projects/pub/members/"+viewerID, e.Admin, map[string]string{"role": "viewer"})
	e.Must(200, "PUT", "/v1/projects/pub/members/"+editorID, e.Admin, map[string]string{"role": "editor"})
	for _, c := range []struct {
		name, method, path, token string
		body                      any
		status                    int
	}{
		{"viewer", "PATCH", "/v1/projects/pub", viewer, map[string]string{"visibility": "public"}, 403},
		{"editor", "PATCH", "/v1/projects/pub", editor, map[string]string{"visibility": "public"}, 403},
		{"anonymous", "PATCH", "/v1/projects/pub", "", map[string]string{"visibility": "public"}, 401},
		{"unknown value", "PATCH", "/v1/projects/pub", e.Admin, map[string]string{"visibility": "world"}, 400},
		{"empty value", "PATCH", "/v1/projects/pub", e.Admin, map[string]string{"visibility": ""}, 400},
		{"not a string", "PATCH", "/v1/projects/pub", e.Admin, map[string]any{"visibility": true}, 400},
		{"on a skill", "PATCH", "/v1/skills/pub-skill", e.Admin, map[string]string{"visibility": "public"}, 400},
		{"on a new prompt", "POST", "/v1/projects/pub/prompts", e.Admin, map[string]string{"name": "X", "visibility": "public"}, 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.Do(c.method, c.path, c.token, c.body)
			if r.Status != c.status {
				t.Fatalf("status %d, want %d\n%s", r.Status, c.status, r.Body)
			}
		})
	}
	if v := get(t, e.Must(200, "GET", "/v1/projects/pub", e.Admin, nil).JSON(t), "project", "visibility"); v != "private" {
		t.Fatalf("refused changes moved visibility to %v", v)
	}
	r := e.Must(200, "PATCH", "/v1/projects/pub", e.Admin, map[string]string{"visibility": "public"})
	if v := get(t, r.JSON(t), "project", "visibility"); v != "public" {
		t.Fatalf("visibility %v after PATCH", v)
	}
	// A new project may start public.
	r = e.Must(201, "POST", "/v1/projects", e.Admin, map[string]string{"name": "Open", "visibility": "public"})
	if v := get(t, r.JSON(t), "project", "visibility"); v != "public" {
		t.Fatalf("created with visibility %v", v)
	}
}

// TestAnonymousReads is the anonymous caller's table: published versions
// of public projects, nothing else; every write is 401.
func TestAnonymousReads(t *testing.T) {
	e := publicFixture(t)
	e.Must(200, "PATCH", "/v1/projects/pub", e.Admin, map[string]string{"visibility": "public"})
	rows := []struct {
		method, path string
		status       int
	}{
		{"GET", "/v1/projects/pub/skills", 200},
		{"GET", "/v1/projects/pub/prompts", 200},
		{"GET", "/v1/skills/pub-skill", 200},
		{"GET", "/v1/skills/pub-skill/versions/1", 200},
		{"GET", "/v1/skills/pub-skill/versions/2", 404}, // a draft
		{"GET", "/v1/skills/pub-skill/versions/1/files", 200},
		{"GET", "/v1/skills/pub-skill/versions/2/files", 404},
		{"GET", "/v1/skills/pub-skill/versions/1/files/SKILL.md", 200},
		{"GET", "/v1/skills/pub-skill/versions/2/files/draft.md", 404},
		{"GET", "/v1/skills/pub-skill/versions/1/download", 200},
		{"GET", "/v1/skills/pub-skill/versions/2/download", 404},
		{"GET", "/v1/skills/pub-skill/versions/live/archive.zip", 200},
		{"GET", "/v1/skills/pub-skill/versions/1/archive.tar.gz", 200},
		{"GET", "/v1/skills/pub-skill/versions/2/archive.tar.gz", 404},
		{"GET", "/v1/prompts/pub-prompt", 200},
		{"GET", "/v1/prompts/pub-prompt/live", 200},
		{"GET", "/v1/prompts/pub-prompt/versions/1", 200},
		{"GET", "/v1/prompts/pub-prompt/versions/2", 404},
		{"GET", "/v1/projects/pub/agent-skills/index.json", 200},
		{"GET", "/v1/projects/pub/agent-skills/pub-skill/SKILL.md", 200},
		// A render is a read (publicrender_test.go): this one lacks {{name}}.
		{"POST", "/v1/prompts/pub-prompt/render", 422},
		// Beyond published versions: sign in.
		{"GET", "/v1/projects/pub", 401},
		{"GET", "/v1/projects/pub/members", 401},
		{"GET", "/v1/projects/pub/activity", 401},
		{"GET", "/v1/skills/pub-skill/history", 401},
		{"GET", "/v1/skills/pub-skill/diff?from=1&to=2", 401},
		{"GET", "/v1/prompts/pub-prompt/payloads", 401},
		{"GET", "/v1/prompts/pub-prompt/usage", 401},
		{"GET", "/v1/prompts/pub-prompt/versions/2/variables", 401},
		{"GET", "/v1/projects", 401},
		{"GET", "/v1/auth/me", 401},
		// Writes.
		{"POST", "/v1/skills/pub-skill/versions", 401},
		{"POST", "/v1/skills/pub-skill/versions/2/publish", 401},
		{"POST", "/v1/skills/pub-skill/versions/2/files", 401},
		{"DELETE", "/v1/skills/pub-skill", 401},
		{"PATCH", "/v1/projects/pub", 401},
		{"POST", "/v1/projects/pub/skills", 401},
		// A private project, and one that does not exist, answer alike.
		{"GET", "/v1/skills/priv-skill", 401},
		{"GET", "/v1/skills/no-such-skill", 401},
		{"GET", "/v1/skills/priv-skill/versions/1/archive.zip", 401},
		{"GET", "/v1/projects/priv/skills", 401},
		{"GET", "/v1/projects/no-such-project/skills", 401},
		{"GET", "/v1/prompts/priv-prompt/live", 401},
		{"GET", "/v1/projects/priv/agent-skills/index.json", 401},
		{"GET", "/.well-known/agent-skills/priv-skill/SKILL.md", 404},
		{"GET", "/.well-known/agent-skills/pub-skill/SKILL.md", 200},
	}
	for _, c := range rows {
		r := e.Do(c.method, c.path, "", map[string]string{})
		if c.method == "GET" {
			r = e.Do(c.method, c.path, "", nil)
		}
		if r.Status != c.status {
			t.Errorf("anonymous %s %s: %d, want %d\n%s", c.method, c.path, r.Status, c.status, r.Body)
		}
	}

	// Listings show published versions only.
	r := e.Must(200, "GET", "/v1/skills/pub-skill/versions", "", nil)
	if vs := get(t, r.JSON(t), "versions").([]any); len(vs) != 1 || get(t, vs[0], "version") != float64(1) {
		t.Errorf("anonymous versions list %s", r.Body)
	}
	r = e.Must(200, "GET", "/v1/skills/pub-skill/versions?state=draft", "", nil)
	if vs := get(t, r.JSON(t), "versions").([]any); len(vs) != 0 {
		t.Errorf("anonymous draft list %s", r.Body)
	}
	// The server-wide index lists the public project's skill only.
	var idx indexDoc
	e.Must(200, "GET", "/.well-known/agent-skills/index.json", "", nil).Decode(t, &idx)
	if len(idx.Skills) != 1 || idx.Skills[0].Name != "pub-skill" {
		t.Fatalf("anonymous index %+v", idx.Skills)
	}
	checkIndex(t, e, "", "/.well-known/agent-skills", idx)

	// Private again: nothing.
	e.Must(200, "PATCH", "/v1/projects/pub", e.Admin, map[string]string{"visibility": "private"})
	e.Must(401, "GET", "/v1/skills/pub-skill/versions/1/files/SKILL.md", "", nil)
	e.Must(200, "GET", "/.well-known/agent-skills/index.json", "", nil).Decode(t, &idx)
	if len(idx.Skills) != 0 {
		t.Fatalf("index after going private %+v", idx.Skills)
	}
}

// TestAnonymousGit: a public project's skill clones without a credential,
// showing main and published tags only; a draft's commit cannot be
// fetched by id, nothing can be pushed, and a private project asks for a
// credential.
func TestAnonymousGit(t *testing.T) {
	f := newGitFixture(t) // demo/pdf: v1 published, draft 2
	e, g := f.e, f.g
	draft := f.version(2)["commit"].(string)
	// Archive a published version: v1 stays, a second published then
	// archived version must not show.
	e.Must(200, "POST", "/v1/skills/pdf/versions/2/publish", e.Admin, nil)
	e.Must(201, "POST", "/v1/skills/pdf/versions", e.Admin, nil) // draft 3
	f.upsert(3, "three.md", "three\n")
	draft3 := f.version(3)["commit"].(string)
	e.Must(200, "POST", "/v1/skills/pdf/versions/1/promote", e.Admin, nil)
	e.Must(200, "POST", "/v1/skills/pdf/versions/2/archive", e.Admin, nil)

	dir := t.TempDir()
	anon := g.url("", "demo/skills/pdf.git")
	// Private: git is asked for a credential (and, with prompts off, fails).
	out := g.fails(dir, "clone", "-q", anon, "private")
	if !strings.Contains(out, "401") && !strings.Contains(strings.ToLower(out), "authentication") && !strings.Contains(out, "could not read Username") {
		t.Fatalf("private clone: %s", out)
	}

	e.Must(200, "PATCH", "/v1/projects/demo", e.Admin, map[string]string{"visibility": "public"})
	for _, proto := range []string{"0", "2"} {
		refs := g.must(dir, "-c", "protocol.version="+proto, "ls-remote", anon)
		if strings.Contains(refs, "draft/") || strings.Contains(refs, "refs/tags/v2") || strings.Contains(refs, "archive/") || !strings.Contains(refs, "refs/tags/v1") || !strings.Contains(refs, "refs/heads/main") {
			t.Fatalf("protocol %s: anonymous refs:\n%s", proto, refs)
		}
		w := filepath.Join(dir, "w"+proto)
		g.must(dir, "-c", "protocol.version="+proto, "clone", "-q", anon, w)
		if got := readFile(t, filepath.Join(w, "SKILL.md")); got != testenv.SkillManifest("pdf") {
			t.Fatalf("cloned SKILL.md %q", got)
		}
		g.must(w, "fsck", "--strict")
		for _, c := range []string{draft, draft3} {
			out := g.fails(w, "-c", "protocol.version="+proto, "fetch", "-q", "origin", c)
			if !strings.Contains(out, "not our ref") && !strings.Contains(out, "not found") && !strings.Contains(out, "couldn't find remote ref") {
				t.Fatalf("protocol %s: fetch of a hidden commit: %s", proto, out)
			}
		}
		// No push without a credential.
		g.must(w, "checkout", "-q", "-b", "draft/3")
		g.commitFile(w, "x.md", "x\n")
		out := g.fails(w, "push", "-q", "origin", "draft/3")
		if !strings.Contains(out, "401") && !strings.Contains(strings.ToLower(out), "authentication") && !strings.Contains(out, "could not read Username") {
			t.Fatalf("anonymous push: %s", out)
		}
	}
	// git sends a credential only when challenged, and a public project
	// does not challenge a clone: a member who wants the drafts sends the
	// token up front.
	refs := g.must(dir, "ls-remote", g.url(e.Admin, "demo/skills/pdf.git"))
	if strings.Contains(refs, "draft/") {
		t.Fatalf("refs without a challenge:\n%s", refs)
	}
	refs = g.must(dir, "-c", "http.extraHeader=Authorization: Bearer "+e.Admin, "ls-remote", anon)
	if !strings.Contains(refs, "refs/heads/draft/3") || !strings.Contains(refs, "refs/tags/archive/v2") {
		t.Fatalf("member refs:\n%s", refs)
	}
	f.fsck()
}

// TestVisibilityPersists: a second server on the same data root (a
// restart, another process) sees the project public.
func TestVisibilityPersists(t *testing.T) {
	root := t.TempDir()
	e := newEnv(t, testenv.Options{Root: root})
	e.CreateProject(e.Admin, "pub")
	e.Must(200, "PATCH", "/v1/projects/pub", e.Admin, map[string]string{"visibility": "public"})
	e2 := newEnv(t, testenv.Options{Root: root})
	if v := get(t, e2.Must(200, "GET", "/v1/projects/pub", e2.Admin, nil).JSON(t), "project", "visibility"); v != "public" {
		t.Fatalf("visibility %v on the second server", v)
	}
	e2.Must(200, "GET", "/v1/projects/pub/skills", "", nil)
}
