package httpapi_test

import (
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// TestPushRoutes: an upload with ?from=live opens a draft over the live
// version whose one commit holds exactly the zip; PUT …/files replaces a
// draft's content as one commit under If-Match.
func TestPushRoutes(t *testing.T) {
	e := newEnv(t)
	pid := e.CreateProject(e.Admin, "demo")
	sid := e.CreateSkill(e.Admin, pid, "tool")
	e.Must(201, "POST", "/v1/skills/"+sid+"/versions", e.Admin, nil)
	e.Must(200, "POST", "/v1/skills/"+sid+"/versions/1/files", e.Admin, map[string]string{"file_path": "SKILL.md", "content": testenv.SkillManifest("tool")})
	e.Must(200, "POST", "/v1/skills/"+sid+"/versions/1/files", e.Admin, map[string]string{"file_path": "old.txt", "content": "old\n"})
	e.Must(200, "POST", "/v1/skills/"+sid+"/versions/1/publish", e.Admin, nil)
	repo := e.RepoPath(quire.KindSkill, sid)
	zct := "Content-Type: application/zip"

	body := zipOf(t, "SKILL.md", testenv.SkillManifest("tool")+"more\n", "new/a.txt", "a\n")
	r := e.Must(201, "POST", "/v1/projects/demo/skills/tool/versions/upload?from=live&message=Push+it", e.Admin, body, zct)
	if get(t, r.JSON(t), "version", "version") != float64(2) || get(t, r.JSON(t), "files") != float64(2) {
		t.Fatalf("push: %s", r.Body)
	}
	if got := testenv.Git(t, repo, "rev-list", "--count", "main..refs/heads/draft/2"); got != "1" {
		t.Fatalf("commits over main: %s", got)
	}
	if got := testenv.Git(t, repo, "log", "-1", "--format=%s%n%P", "refs/heads/draft/2"); got != "Push it\n"+testenv.Git(t, repo, "rev-parse", "main") {
		t.Fatalf("commit and parent: %q", got)
	}
	if got := testenv.Git(t, repo, "ls-tree", "-r", "--name-only", "refs/heads/draft/2"); got != "SKILL.md\nnew/a.txt" {
		t.Fatalf("tree: %q", got)
	}
	head := testenv.Git(t, repo, "rev-parse", "refs/heads/draft/2")

	path := "/v1/skills/" + sid + "/versions/2/files"
	for _, c := range []struct {
		name   string
		token  string
		body   []byte
		header []string
		status int
		code   string
	}{
		{"stale If-Match", e.Admin, zipOf(t, "SKILL.md", "x"), []string{zct, "If-Match: \"" + strings.Repeat("0", 40) + "\""}, 412, "precondition"},
		{"anonymous", "", zipOf(t, "SKILL.md", "x"), []string{zct}, 401, "unauthorized"},
		{"not a zip", e.Admin, []byte("not a zip"), []string{zct}, 400, "invalid"},
		{"no files", e.Admin, zipOf(t), []string{zct}, 400, "invalid"},
		{"bad path", e.Admin, zipOf(t, "SKILL.md", "x", ".git/config", "x"), []string{zct}, 400, "invalid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.Do("PUT", path, c.token, c.body, c.header...)
			if r.Status != c.status || r.JSON(t)["code"] != c.code {
				t.Fatalf("%d %s, want %d %s", r.Status, r.Body, c.status, c.code)
			}
		})
	}
	if got := testenv.Git(t, repo, "rev-parse", "refs/heads/draft/2"); got != head {
		t.Fatal("a refused PUT moved the draft")
	}
	e.Must(409, "PUT", "/v1/skills/"+sid+"/versions/1/files", e.Admin, zipOf(t, "SKILL.md", "x"), zct)
	if got := testenv.Git(t, repo, "rev-parse", "refs/tags/v1^{commit}"); got != testenv.Git(t, repo, "rev-parse", "main") {
		t.Fatal("a PUT on a published version moved it")
	}

	// Adds, changes and deletions as one commit, If-Match the draft's head.
	body = zipOf(t, "SKILL.md", testenv.SkillManifest("tool")+"more\n", "b.txt", "b\n")
	r = e.Must(200, "PUT", path+"?message=Second", e.Admin, body, zct, "If-Match: \""+head+"\"")
	if get(t, r.JSON(t), "version", "commit") == head {
		t.Fatalf("no commit: %s", r.Body)
	}
	if got := testenv.Git(t, repo, "rev-list", "--count", head+"..refs/heads/draft/2"); got != "1" {
		t.Fatalf("commits: %s", got)
	}
	if got := testenv.Git(t, repo, "diff", "--name-status", head, "refs/heads/draft/2"); got != "A\tb.txt\nD\tnew/a.txt" {
		t.Fatalf("the commit's changes: %q", got)
	}
	// A rename to a look-alike path is a deletion and an add, not a
	// collision with the path it replaces.
	body = zipOf(t, "SKILL.md", testenv.SkillManifest("tool")+"more\n", "B.txt", "b\n")
	e.Must(200, "PUT", path, e.Admin, body, zct)
	if got := testenv.Git(t, repo, "ls-tree", "-r", "--name-only", "refs/heads/draft/2"); got != "B.txt\nSKILL.md" {
		t.Fatalf("tree after a case rename: %q", got)
	}
	// The same content again: no commit.
	head = testenv.Git(t, repo, "rev-parse", "refs/heads/draft/2")
	e.Must(200, "PUT", path, e.Admin, body, zct)
	if got := testenv.Git(t, repo, "rev-parse", "refs/heads/draft/2"); got != head {
		t.Fatal("an unchanged PUT made a commit")
	}
	testenv.Git(t, repo, "fsck", "--strict")
}
