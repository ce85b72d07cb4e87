package httpapi_test

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// gitClient runs the real git binary against an Env, isolated from the
// machine's configuration: a temporary HOME, no prompts.
type gitClient struct {
	t    testing.TB
	e    *testenv.Env
	home string
	env  []string
}

func newGitClient(t testing.TB, e *testenv.Env) *gitClient {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git binary not found")
	}
	home := t.TempDir()
	g := &gitClient{t: t, e: e, home: home}
	g.env = append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=",
		"SSH_ASKPASS=",
		"GIT_AUTHOR_NAME=Git Tester", "GIT_AUTHOR_EMAIL=tester@example.com",
		"GIT_COMMITTER_NAME=Git Tester", "GIT_COMMITTER_EMAIL=tester@example.com",
		"LC_ALL=C",
	)
	return g
}

// url is the smart-HTTP URL of path ("demo/skills/pdf.git") with token as
// the Basic password ("" for none).
func (g *gitClient) url(token, path string) string {
	u, err := url.Parse(g.e.URL + "/git/" + path)
	if err != nil {
		g.t.Fatal(err)
	}
	if token != "" {
		u.User = url.UserPassword("git", token)
	}
	return u.String()
}

// run runs git in dir and returns its combined output and error.
func (g *gitClient) run(dir string, args ...string) (string, error) {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = g.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// must runs git and fails the test unless it succeeds.
func (g *gitClient) must(dir string, args ...string) string {
	g.t.Helper()
	out, err := g.run(dir, args...)
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

// fails runs git, which must fail, and returns its output.
func (g *gitClient) fails(dir string, args ...string) string {
	g.t.Helper()
	out, err := g.run(dir, args...)
	if err == nil {
		g.t.Fatalf("git %s succeeded, want failure\n%s", strings.Join(args, " "), out)
	}
	return out
}

// fsck runs git fsck --strict on a server repository.
func fsck(t testing.TB, e *testenv.Env, kind quire.Kind, id string) {
	t.Helper()
	testenv.Git(t, e.RepoPath(kind, id), "fsck", "--strict", "--no-dangling")
}

func TestGitCloneSmoke(t *testing.T) {
	e := testenv.New(t)
	g := newGitClient(t, e)
	pid := e.CreateProject(e.Admin, "demo")
	sid := e.CreateSkill(e.Admin, pid, "pdf")
	e.Must(201, "POST", "/v1/skills/pdf/versions", e.Admin, nil)
	e.Must(200, "POST", "/v1/skills/pdf/versions/1/files", e.Admin, map[string]string{"file_path": "SKILL.md", "content": testenv.SkillManifest("pdf")})
	e.Must(200, "POST", "/v1/skills/pdf/versions/1/files", e.Admin, map[string]string{"file_path": "scripts/run.py", "content": "print(1)\n"})
	e.Must(200, "POST", "/v1/skills/pdf/versions/1/publish", e.Admin, nil)

	dir := t.TempDir()
	out := g.must(dir, "clone", g.url(e.Admin, "demo/skills/pdf.git"), "pdf")
	t.Log(out)
	t.Log(g.must(filepath.Join(dir, "pdf"), "log", "--oneline", "--decorate", "--all"))
	if b, err := os.ReadFile(filepath.Join(dir, "pdf", "scripts", "run.py")); err != nil || string(b) != "print(1)\n" {
		t.Fatalf("run.py = %q, %v", b, err)
	}
	fsck(t, e, quire.KindSkill, sid)
}
