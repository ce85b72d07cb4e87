package httpapi_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestProjectRepository: /git/{project}.git is one read-only repository
// with the live version of each skill under skills/<slug>/, a README
// index and a Claude Code marketplace; every publish, rollback, archive,
// rename or delete is one commit on it by the actor; it follows access
// as the skills' own repositories do; pushes are refused.
func TestProjectRepository(t *testing.T) {
	f := newGitFixture(t)
	e, g := f.e, f.g
	e.ProjectReposIdle()
	w := filepath.Join(t.TempDir(), "demo")
	g.must(filepath.Dir(w), "clone", "-q", g.url(e.Admin, "demo.git"), w)
	tree := func() string { return g.must(w, "ls-files", "-s") }
	if got := tree(); !strings.Contains(got, "skills/pdf/SKILL.md") || !strings.Contains(got, "skills/pdf/scripts/run.py") ||
		!strings.Contains(got, "README.md") || !strings.Contains(got, ".claude-plugin/marketplace.json") || strings.Contains(got, "notes.md") {
		t.Fatalf("project repository after v1:\n%s", got)
	}
	if got := g.must(w, "log", "--format=%an <%ae>: %s"); got != "Admin <admin@example.com>: Publish pdf v1" {
		t.Errorf("log: %q", got)
	}
	if got := readFile(t, filepath.Join(w, "skills/pdf/SKILL.md")); got != testenv.SkillManifest("pdf") {
		t.Errorf("SKILL.md: %q", got)
	}

	// v2 with an executable script: one commit, the mode kept.
	e.Must(200, "POST", "/v1/skills/pdf/versions/2/files", e.Admin, map[string]string{"file_path": "scripts/run.sh", "content": "#!/bin/sh\n", "mode": "100755"})
	e.Must(200, "POST", "/v1/skills/pdf/versions/2/publish", e.Admin, nil)
	// A second skill, published by an editor.
	uid, editor := e.CreateUser("ed@example.com")
	e.Must(200, "PUT", "/v1/projects/demo/members/"+uid, e.Admin, map[string]string{"role": "editor"})
	publishSkill(t, e, f.pid, "review", "Review code.", nil)
	e.ProjectReposIdle()
	g.must(w, "pull", "-q")
	got := tree()
	if !strings.Contains(got, "100755 ") || !strings.Contains(got, "skills/pdf/scripts/run.sh") || !strings.Contains(got, "skills/pdf/notes.md") || !strings.Contains(got, "skills/review/SKILL.md") {
		t.Fatalf("after v2 and a second skill:\n%s", got)
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasSuffix(line, "skills/pdf/scripts/run.sh") && !strings.HasPrefix(line, "100755 ") {
			t.Errorf("run.sh lost its mode: %s", line)
		}
	}
	readme := readFile(t, filepath.Join(w, "README.md"))
	if !strings.Contains(readme, "| [pdf](skills/pdf/SKILL.md) |") || !strings.Contains(readme, "| [review](skills/review/SKILL.md) | Review code. |") {
		t.Errorf("README.md:\n%s", readme)
	}
	checkMarketplace(t, filepath.Join(w, ".claude-plugin/marketplace.json"), []string{"pdf", "review"})

	// Rollback, rename, delete: a commit each, named.
	e.Must(200, "POST", "/v1/skills/pdf/versions/1/promote", editor, nil)
	e.Must(200, "PATCH", "/v1/skills/review", editor, map[string]string{"slug": "code-review"})
	e.Must(204, "DELETE", "/v1/skills/code-review", e.Admin, nil)
	e.ProjectReposIdle()
	g.must(w, "pull", "-q")
	log := g.must(w, "log", "--format=%ae: %s")
	want := "admin@example.com: Delete skill code-review\ned@example.com: Rename skill review to code-review\ned@example.com: Make pdf v1 live\nadmin@example.com: Publish review v1\nadmin@example.com: Publish pdf v2\nadmin@example.com: Publish pdf v1"
	if log != want {
		t.Errorf("log:\n%s\nwant:\n%s", log, want)
	}
	if got := tree(); strings.Contains(got, "review") || strings.Contains(got, "run.sh") || !strings.Contains(got, "skills/pdf/scripts/run.py") {
		t.Errorf("after rollback and delete:\n%s", got)
	}
	g.must(w, "fsck", "--strict")
	testenv.Git(t, e.Store.RepoPath(quire.ProjectRepo(f.pid)), "fsck", "--strict")

	// Read-only: a push is refused with the reason, by owners too.
	g.commitFile(w, "skills/pdf/hack.md", "no\n")
	if out := g.fails(w, "push", "origin", "HEAD:main"); !strings.Contains(out, "read-only") {
		t.Errorf("push:\n%s", out)
	}

	// Access as the skills' repositories: a viewer clones, a stranger
	// finds nothing, an anonymous caller signs in, until it is public.
	vid, viewer := e.CreateUser("viewer@example.com")
	e.Must(200, "PUT", "/v1/projects/demo/members/"+vid, e.Admin, map[string]string{"role": "viewer"})
	g.must(t.TempDir(), "clone", "-q", g.url(viewer, "demo.git"), "v")
	_, stranger := e.CreateUser("stranger@example.com")
	if out := g.fails(t.TempDir(), "clone", "-q", g.url(stranger, "demo.git"), "s"); !strings.Contains(out, "not found") {
		t.Errorf("stranger:\n%s", out)
	}
	g.fails(t.TempDir(), "clone", "-q", g.url("", "demo.git"), "a")
	e.Must(200, "PATCH", "/v1/projects/demo", e.Admin, map[string]string{"visibility": "public"})
	anon := filepath.Join(t.TempDir(), "a")
	g.must(filepath.Dir(anon), "clone", "-q", g.url("", "demo.git"), anon)
	if _, err := os.Stat(filepath.Join(anon, "skills/pdf/SKILL.md")); err != nil {
		t.Errorf("anonymous clone of the public project: %v", err)
	}
	// The project's id works as its slug does; other paths are 404.
	g.must(t.TempDir(), "clone", "-q", g.url(e.Admin, f.pid+".git"), "byid")
	wantError(t, e.Do("GET", "/git/nope.git/info/refs?service=git-upload-pack", e.Admin, nil), 404)
}

// checkMarketplace validates a marketplace.json against the schema of
// Claude Code's documented marketplace format (testdata, with its
// source) and checks it lists want, each a plugin of its skill's folder.
func checkMarketplace(t *testing.T, path string, want []string) {
	t.Helper()
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("testdata/marketplace.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Errorf("marketplace.json does not follow the schema: %v\n%s", err, b)
	}
	var m struct {
		Name    string
		Plugins []struct {
			Name, Source string
			Skills       []string
		}
	}
	json.Unmarshal(b, &m)
	var got []string
	for _, p := range m.Plugins {
		got = append(got, p.Name)
		if p.Source != "./" || len(p.Skills) != 1 || p.Skills[0] != "./skills/"+p.Name {
			t.Errorf("plugin %+v", p)
		}
	}
	if m.Name != "demo" || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("marketplace %s lists %v, want %v", m.Name, got, want)
	}
}

// TestProjectRepositoryRebuilt: a project's repository that is missing
// (removed, or never made) is made anew from the live versions when the
// server starts, before it answers; one that drifted is mended.
func TestProjectRepositoryRebuilt(t *testing.T) {
	root := t.TempDir()
	e := testenv.NewWith(t, testenv.Options{Root: root})
	pid := e.CreateProject(e.Admin, "demo")
	publishSkill(t, e, pid, "one", "One.", map[string]string{"scripts/run.sh": "#!/bin/sh\n"})
	publishSkill(t, e, pid, "two", "Two.", nil)
	e.ProjectReposIdle()
	path := e.Store.RepoPath(quire.ProjectRepo(pid))
	want := testenv.Git(t, path, "rev-parse", "main^{tree}")
	e.HTTP.Close()
	e.Server.StopStreams()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	testenv.NewWith(t, testenv.Options{Root: root}) // starts, and so mends
	if got := testenv.Git(t, path, "rev-parse", "main^{tree}"); got != want {
		t.Errorf("rebuilt view %s, want %s", got, want)
	}
	if log := testenv.Git(t, path, "log", "--format=%an: %s", "main"); log != "quire: Bring the project repository in line with the live versions" {
		t.Errorf("log of the rebuilt view: %q", log)
	}
	testenv.Git(t, path, "fsck", "--strict")
}
