package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/gitstore"
	"github.com/quire/quire/internal/testenv"
)

// These tests drive the real git binary (protocol v2 by default in git
// 2.39, which quire speaks; gitpartial_test.go runs v0 and v2 side by
// side) against quire on a real listener on 127.0.0.1.

// gitClient runs git against an Env, isolated from the machine's
// configuration: a temporary HOME, no prompts, no credential helpers.
type gitClient struct {
	t   testing.TB
	e   *testenv.Env
	env []string
}

func newGitClient(t testing.TB, e *testenv.Env) *gitClient {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git binary not found")
	}
	home := t.TempDir()
	return &gitClient{t: t, e: e, env: append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=", "SSH_ASKPASS=",
		"GIT_AUTHOR_NAME=Git Tester", "GIT_AUTHOR_EMAIL=tester@example.com",
		"GIT_COMMITTER_NAME=Git Tester", "GIT_COMMITTER_EMAIL=tester@example.com",
		"LC_ALL=C",
	)}
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
		g.t.Fatalf("git %s succeeded, want a failure\n%s", strings.Join(args, " "), out)
	}
	return out
}

// commitFile writes a file in a work tree and commits it.
func (g *gitClient) commitFile(dir, path, content string) string {
	g.t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
	g.must(dir, "add", "--", path)
	g.must(dir, "commit", "-q", "-m", "Edit "+path)
	return g.must(dir, "rev-parse", "HEAD")
}

// gitFixture is project demo with skill pdf: v1 published (live) and
// draft 2 open with one more file.
type gitFixture struct {
	t        testing.TB
	e        *testenv.Env
	g        *gitClient
	pid, sid string
}

func newGitFixture(t testing.TB, opts ...testenv.Options) *gitFixture {
	t.Helper()
	var o testenv.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	e := testenv.NewWith(t, o)
	f := &gitFixture{t: t, e: e, g: newGitClient(t, e)}
	f.pid = e.CreateProject(e.Admin, "demo")
	f.sid = e.CreateSkill(e.Admin, f.pid, "pdf")
	e.Must(201, "POST", "/v1/skills/pdf/versions", e.Admin, nil)
	f.upsert(1, "SKILL.md", testenv.SkillManifest("pdf"))
	f.upsert(1, "scripts/run.py", "print(1)\n")
	e.Must(200, "POST", "/v1/skills/pdf/versions/1/publish", e.Admin, nil)
	e.Must(201, "POST", "/v1/skills/pdf/versions", e.Admin, nil)
	f.upsert(2, "notes.md", "draft two\n")
	return f
}

// upsert writes a file into version n through the API and returns the commit.
func (f *gitFixture) upsert(n int, path, content string) string {
	f.t.Helper()
	r := f.e.Must(200, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/files", n), f.e.Admin, map[string]string{"file_path": path, "content": content})
	return r.JSON(f.t)["version"].(map[string]any)["commit"].(string)
}

// version returns the API's record of version n.
func (f *gitFixture) version(n int) map[string]any {
	f.t.Helper()
	return f.e.Must(200, "GET", fmt.Sprintf("/v1/skills/pdf/versions/%d", n), f.e.Admin, nil).JSON(f.t)["version"].(map[string]any)
}

func (f *gitFixture) repo() string { return f.e.RepoPath(quire.KindSkill, f.sid) }

// serverRefs lists the server repository's refs, hidden ones included.
func (f *gitFixture) serverRefs() string {
	f.t.Helper()
	return testenv.Git(f.t, f.repo(), "for-each-ref", "--format=%(objectname) %(refname)")
}

// fsck checks the server repository strictly and that no quarantine is left.
func (f *gitFixture) fsck() {
	f.t.Helper()
	testenv.Git(f.t, f.repo(), "fsck", "--strict", "--no-dangling")
	// incoming-repack-* is a background repack still writing its pack,
	// not a push's quarantine.
	m, _ := filepath.Glob(filepath.Join(f.repo(), "incoming-*"))
	m = slices.DeleteFunc(m, func(p string) bool { return strings.HasPrefix(filepath.Base(p), "incoming-repack-") })
	if len(m) > 0 {
		f.t.Errorf("quarantine left behind: %v", m)
	}
}

// clone clones the skill with token into a new directory and returns it.
func (f *gitFixture) clone(token string, args ...string) string {
	f.t.Helper()
	dir := f.t.TempDir()
	f.g.must(dir, append(append([]string{"clone", "-q"}, args...), f.g.url(token, "demo/skills/pdf.git"), "w")...)
	return filepath.Join(dir, "w")
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGitClone(t *testing.T) {
	f := newGitFixture(t)
	e, g := f.e, f.g
	live := f.version(1)["commit"].(string)
	draft := f.version(2)["commit"].(string)

	t.Run("basic auth and slugs", func(t *testing.T) {
		w := f.clone(e.Admin)
		if got := g.must(w, "rev-parse", "HEAD"); got != live {
			t.Errorf("HEAD = %s, want the live version %s", got, live)
		}
		if got := g.must(w, "symbolic-ref", "HEAD"); got != "refs/heads/main" {
			t.Errorf("default branch %s, want main", got)
		}
		if got := readFile(t, filepath.Join(w, "scripts", "run.py")); got != "print(1)\n" {
			t.Errorf("run.py = %q", got)
		}
		if got := g.must(w, "rev-parse", "origin/draft/2"); got != draft {
			t.Errorf("origin/draft/2 = %s, want %s", got, draft)
		}
		if got := g.must(w, "rev-parse", "v1^{commit}"); got != live {
			t.Errorf("v1 = %s, want %s", got, live)
		}
		if got := g.must(w, "cat-file", "-t", "v1"); got != "tag" {
			t.Errorf("v1 is a %s, want an annotated tag", got)
		}
		g.must(w, "fsck", "--strict")
	})

	t.Run("bearer header and ids", func(t *testing.T) {
		key := e.CreateKey(e.Admin, "read")
		dir := t.TempDir()
		g.must(dir, "-c", "http.extraHeader=Authorization: Bearer "+key, "clone", "-q", g.url("", f.pid+"/skills/"+f.sid+".git"), "w")
		if got := readFile(t, filepath.Join(dir, "w", "SKILL.md")); got != testenv.SkillManifest("pdf") {
			t.Errorf("SKILL.md = %q", got)
		}
	})

	t.Run("token as user name, no .git suffix", func(t *testing.T) {
		u, _ := url.Parse(e.URL + "/git/demo/skills/pdf")
		u.User = url.User(e.Admin)
		g.must(t.TempDir(), "clone", "-q", u.String(), "w")
	})

	t.Run("ls-remote hides internal refs and peels tags", func(t *testing.T) {
		out := g.must(t.TempDir(), "ls-remote", g.url(e.Admin, "demo/skills/pdf.git"))
		for _, want := range []string{
			live + "\tHEAD", live + "\trefs/heads/main", draft + "\trefs/heads/draft/2",
			"\trefs/tags/v1\n", live + "\trefs/tags/v1^{}",
		} {
			if !strings.Contains(out+"\n", want) {
				t.Errorf("ls-remote lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "refs/quire") {
			t.Errorf("ls-remote shows internal refs:\n%s", out)
		}
		if !strings.Contains(f.serverRefs(), "refs/quire/versions") {
			t.Fatal("the server repository should have refs/quire/versions")
		}
	})

	t.Run("every protocol version", func(t *testing.T) {
		for _, v := range []string{"0", "1", "2"} {
			out := g.must(t.TempDir(), "-c", "protocol.version="+v, "ls-remote", g.url(e.Admin, "demo/skills/pdf.git"), "refs/heads/main")
			if !strings.HasPrefix(out, live) {
				t.Errorf("protocol.version=%s: ls-remote = %q", v, out)
			}
			g.must(t.TempDir(), "-c", "protocol.version="+v, "clone", "-q", g.url(e.Admin, "demo/skills/pdf.git"), "w")
		}
	})

	t.Run("prompt repository", func(t *testing.T) {
		r := e.Must(201, "POST", "/v1/projects/"+f.pid+"/prompts", e.Admin, map[string]string{"name": "Greeting", "slug": "greet"})
		id := r.JSON(t)["prompt"].(map[string]any)["id"].(string)
		ctx := context.Background()
		a, err := e.Store.Asset(ctx, quire.KindPrompt, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.CreateVersion(ctx, quire.Actor{Name: "t"}, a, quire.Base{Empty: true}, []quire.FileContent{{Path: "template.md", Content: []byte("Hello {{name}}\n")}}); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		g.must(dir, "clone", "-q", "-b", "draft/1", g.url(e.Admin, "demo/prompts/greet.git"), "w")
		if got := readFile(t, filepath.Join(dir, "w", "template.md")); got != "Hello {{name}}\n" {
			t.Errorf("template.md = %q", got)
		}
		testenv.Git(t, e.RepoPath(quire.KindPrompt, id), "fsck", "--strict")
	})
	f.fsck()
}

func TestGitAuth(t *testing.T) {
	f := newGitFixture(t)
	defer f.fsck()
	e, g := f.e, f.g
	path := "/git/demo/skills/pdf.git/info/refs?service=git-upload-pack"

	t.Run("no credential is 401 with a Basic challenge", func(t *testing.T) {
		r := e.Do("GET", path, "", nil)
		if r.Status != 401 || r.Header.Get("WWW-Authenticate") != `Basic realm="quire"` {
			t.Fatalf("status %d, WWW-Authenticate %q", r.Status, r.Header.Get("WWW-Authenticate"))
		}
		out := g.fails(t.TempDir(), "clone", g.url("", "demo/skills/pdf.git"), "w")
		if !strings.Contains(out, "terminal prompts disabled") {
			t.Errorf("git did not ask for credentials:\n%s", out)
		}
	})

	t.Run("unknown or revoked token is 401", func(t *testing.T) {
		bad := "sess_" + strings.Repeat("a", 32) + "_" + strings.Repeat("b", 64)
		if r := e.Do("GET", path, bad, nil); r.Status != 401 || r.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("status %d", r.Status)
		}
		out := g.fails(t.TempDir(), "clone", g.url(bad, "demo/skills/pdf.git"), "w")
		if !strings.Contains(out, "Authentication failed") {
			t.Errorf("unexpected output:\n%s", out)
		}
		_, tok := e.CreateUser("gone@example.com")
		e.Must(204, "DELETE", "/v1/auth/session", tok, nil)
		if r := e.Do("GET", path, tok, nil); r.Status != 401 {
			t.Fatalf("revoked session: status %d", r.Status)
		}
	})

	t.Run("invisible project is 404", func(t *testing.T) {
		_, outsider := e.CreateUser("outsider@example.com")
		if r := e.Do("GET", path, outsider, nil); r.Status != 404 {
			t.Fatalf("status %d, want 404", r.Status)
		}
		out := g.fails(t.TempDir(), "clone", g.url(outsider, "demo/skills/pdf.git"), "w")
		if !strings.Contains(out, "not found") {
			t.Errorf("unexpected output:\n%s", out)
		}
		other := e.CreateProject(e.Admin, "other")
		key := e.CreateKey(e.Admin, "read", other)
		if r := e.Do("GET", path, key, nil); r.Status != 404 {
			t.Fatalf("key for another project: status %d, want 404", r.Status)
		}
	})

	t.Run("unknown repository is 404", func(t *testing.T) {
		for _, p := range []string{
			"/git/demo/skills/nope.git/info/refs?service=git-upload-pack",
			"/git/demo/prompts/pdf.git/info/refs?service=git-upload-pack",
			"/git/nope/skills/pdf.git/info/refs?service=git-upload-pack",
			"/git/demo/skills/pdf.git/objects/info/packs",
		} {
			if r := e.Do("GET", p, e.Admin, nil); r.Status != 404 {
				t.Errorf("%s: status %d, want 404", p, r.Status)
			}
		}
	})

	t.Run("protocol details", func(t *testing.T) {
		r := e.Do("GET", path, e.Admin, nil)
		if r.Status != 200 || r.Header.Get("Content-Type") != "application/x-git-upload-pack-advertisement" ||
			!strings.Contains(r.Header.Get("Cache-Control"), "no-cache") {
			t.Fatalf("status %d, headers %v", r.Status, r.Header)
		}
		if !strings.HasPrefix(string(r.Body), "001e# service=git-upload-pack\n0000") {
			t.Errorf("body starts %q", r.Body[:40])
		}
		if r := e.Do("GET", "/git/demo/skills/pdf.git/info/refs", e.Admin, nil); r.Status != 403 {
			t.Errorf("dumb HTTP: status %d, want 403", r.Status)
		}
		if r := e.Do("POST", "/git/demo/skills/pdf.git/git-upload-pack", e.Admin, "0000", "Content-Type: text/plain"); r.Status != 400 {
			t.Errorf("wrong content type: status %d, want 400", r.Status)
		}
		if r := e.Do("GET", "/git/demo/skills/pdf.git/git-upload-pack", e.Admin, nil); r.Status != 405 {
			t.Errorf("GET git-upload-pack: status %d, want 405", r.Status)
		}
		if r := e.Do("POST", "/git/demo/skills/pdf.git/git-upload-pack", e.Admin, "zz", "Content-Type: application/x-git-upload-pack-request"); r.Status != 400 {
			t.Errorf("garbage request: status %d, want 400", r.Status)
		}
	})
}

// uploadRequest is a clone request for want, as git sends it.
func uploadRequest(want string) string {
	pkt := func(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }
	return pkt("want "+want+" multi_ack_detailed side-band-64k ofs-delta agent=test\n") + "0000" + pkt("done\n")
}

func TestGitGzipRequest(t *testing.T) {
	f := newGitFixture(t)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, uploadRequest(f.version(1)["commit"].(string)))
	zw.Close()
	req, _ := http.NewRequest("POST", f.e.URL+"/git/demo/skills/pdf.git/git-upload-pack", &buf)
	req.Header.Set("Content-Type", "application/x-git-upload-pack-request")
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("Authorization", "Bearer "+f.e.Admin)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/x-git-upload-pack-result" {
		t.Fatalf("status %d, content type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if !bytes.HasPrefix(body, []byte("0008NAK\n")) || !bytes.Contains(body, []byte("PACK")) {
		t.Fatalf("response %q", body[:min(len(body), 64)])
	}
	r := f.e.Do("POST", "/git/demo/skills/pdf.git/git-upload-pack", f.e.Admin, "not gzip",
		"Content-Type: application/x-git-upload-pack-request", "Content-Encoding: gzip")
	if r.Status != 400 {
		t.Fatalf("bad gzip: status %d, want 400", r.Status)
	}
	f.fsck()
}

var objectsSent = regexp.MustCompile(`remote: quire: (\d+) objects`)

// sent returns the object count quire reported for a fetch run with --progress.
func sent(t *testing.T, out string) int {
	t.Helper()
	m := objectsSent.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no object count in:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestGitFetch(t *testing.T) {
	f := newGitFixture(t)
	g := f.g
	w := f.clone(f.e.Admin)

	t.Run("incremental after API upserts", func(t *testing.T) {
		f.upsert(2, "a.md", "a\n")
		f.upsert(2, "b.md", "b\n")
		tip := f.upsert(2, "deep/c.md", "c\n")
		out := g.must(w, "fetch", "--progress")
		if got := g.must(w, "rev-parse", "origin/draft/2"); got != tip {
			t.Fatalf("origin/draft/2 = %s, want %s", got, tip)
		}
		// Three commits, three root trees, one subtree, three blobs.
		if n := sent(t, out); n != 10 {
			t.Errorf("fetch sent %d objects, want 10 (only what is new)", n)
		}
		if got := g.must(w, "show", "origin/draft/2:deep/c.md"); got != "c" {
			t.Errorf("deep/c.md = %q", got)
		}
	})

	t.Run("many local commits: several negotiation rounds, gzip", func(t *testing.T) {
		g.must(w, "checkout", "-q", "-b", "local", "origin/draft/2")
		for i := range 70 {
			g.commitFile(w, fmt.Sprintf("local/%d.txt", i), strconv.Itoa(i))
		}
		tip := f.upsert(2, "after.md", "after\n")
		out := g.must(w, "fetch", "--progress")
		if got := g.must(w, "rev-parse", "origin/draft/2"); got != tip {
			t.Fatalf("origin/draft/2 = %s, want %s", got, tip)
		}
		if n := sent(t, out); n != 3 {
			t.Errorf("fetch sent %d objects, want 3", n)
		}
		g.must(w, "fsck", "--strict")
	})

	t.Run("annotated tags follow a plain fetch", func(t *testing.T) {
		f.upsert(2, "SKILL.md", testenv.SkillManifest("pdf"))
		f.e.Must(200, "POST", "/v1/skills/pdf/versions/2/publish", f.e.Admin, nil)
		g.must(w, "fetch", "-q")
		if got, want := g.must(w, "rev-parse", "v2^{commit}"), f.version(2)["commit"].(string); got != want {
			t.Errorf("v2 = %s, want %s", got, want)
		}
		if got := g.must(w, "rev-parse", "origin/main"); got != f.version(2)["commit"].(string) {
			t.Errorf("origin/main = %s, want v2", got)
		}
	})
	f.fsck()
}

func TestGitCheckoutDraft(t *testing.T) {
	f := newGitFixture(t)
	g := f.g
	w := f.clone(f.e.Admin, "-b", "draft/2")
	if got := g.must(w, "symbolic-ref", "HEAD"); got != "refs/heads/draft/2" {
		t.Fatalf("HEAD is %s", got)
	}
	if got := readFile(t, filepath.Join(w, "notes.md")); got != "draft two\n" {
		t.Errorf("notes.md = %q", got)
	}
	w2 := f.clone(f.e.Admin)
	g.must(w2, "checkout", "-q", "draft/2")
	if got := g.must(w2, "rev-parse", "HEAD"); got != f.version(2)["commit"] {
		t.Errorf("draft/2 checkout at %s", got)
	}
	if _, err := os.Stat(filepath.Join(w2, "notes.md")); err != nil {
		t.Error(err)
	}
	f.fsck()
}

func TestGitShallow(t *testing.T) {
	f := newGitFixture(t)
	g := f.g
	for i := range 4 {
		f.upsert(2, fmt.Sprintf("h%d.md", i), "x\n")
	}
	w := f.clone(f.e.Admin, "--depth", "1", "-b", "draft/2")
	if n := g.must(w, "rev-list", "--count", "HEAD"); n != "1" {
		t.Fatalf("depth 1 clone has %s commits", n)
	}
	if _, err := os.Stat(filepath.Join(w, ".git", "shallow")); err != nil {
		t.Fatal("no shallow file:", err)
	}
	g.must(w, "fetch", "-q", "--deepen", "2")
	if n := g.must(w, "rev-list", "--count", "HEAD"); n != "3" {
		t.Fatalf("after --deepen 2: %s commits, want 3", n)
	}
	g.must(w, "fetch", "-q", "--unshallow")
	full := testenv.Git(t, f.repo(), "rev-list", "--count", "refs/heads/draft/2")
	if n := g.must(w, "rev-list", "--count", "HEAD"); n != full {
		t.Fatalf("after --unshallow: %s commits, want %s", n, full)
	}
	g.must(w, "fsck", "--strict")

	// A push from a shallow clone works.
	s := f.clone(f.e.Admin, "--depth", "1", "-b", "draft/2")
	tip := g.commitFile(s, "from-shallow.md", "s\n")
	g.must(s, "push", "-q", "origin", "draft/2")
	if got := f.version(2)["commit"]; got != tip {
		t.Errorf("draft 2 at %s, want %s", got, tip)
	}
	f.fsck()
}

func TestGitPush(t *testing.T) {
	f := newGitFixture(t)
	e, g := f.e, f.g
	w := f.clone(e.Admin, "-b", "draft/2")
	g.commitFile(w, "docs/guide.md", "# Guide\n")
	if err := os.WriteFile(filepath.Join(w, "scripts", "tool.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	g.must(w, "add", "scripts/tool.sh")
	g.must(w, "commit", "-q", "-m", "Add a tool")
	tip := g.commitFile(w, "notes.md", "draft two, edited over git\n")
	out := g.must(w, "push", "origin", "draft/2")
	if !strings.Contains(out, "draft/2 -> draft/2") {
		t.Errorf("push output:\n%s", out)
	}

	// The API shows the new state at once.
	if got := f.version(2)["commit"]; got != tip {
		t.Fatalf("API: draft 2 at %v, want %s", got, tip)
	}
	files := e.Must(200, "GET", "/v1/skills/pdf/versions/2/files", e.Admin, nil).JSON(t)["files"].([]any)
	var paths []string
	for _, x := range files {
		paths = append(paths, x.(map[string]any)["file_path"].(string))
	}
	if strings.Join(paths, ",") != "SKILL.md,docs/guide.md,notes.md,scripts/run.py,scripts/tool.sh" {
		t.Errorf("files: %v", paths)
	}
	r := e.Must(200, "GET", "/v1/skills/pdf/versions/2/files/notes.md", e.Admin, nil)
	if string(r.Body) != "draft two, edited over git\n" {
		t.Errorf("notes.md over the API: %q", r.Body)
	}
	// The API keeps working on top of the pushed commits.
	after := f.upsert(2, "api.md", "api\n")
	if parent := testenv.Git(t, f.repo(), "rev-parse", after+"^"); parent != tip {
		t.Errorf("API commit's parent %s, want the pushed %s", parent, tip)
	}
	g.must(w, "pull", "-q", "--ff-only")
	if got := g.must(w, "rev-parse", "HEAD"); got != after {
		t.Errorf("pull: HEAD %s, want %s", got, after)
	}

	// Over git's 1 MiB post buffer the pack goes chunked, after a probe.
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 3 {
		b := make([]byte, 700<<10)
		for j := range b {
			b[j] = byte(rnd.Uint32())
		}
		if err := os.WriteFile(filepath.Join(w, fmt.Sprintf("blob%d.bin", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g.must(w, "add", ".")
	g.must(w, "commit", "-q", "-m", "Large files")
	big := g.must(w, "rev-parse", "HEAD")
	g.must(w, "push", "-q", "origin", "draft/2")
	if got := f.version(2)["commit"]; got != big {
		t.Errorf("after a large push draft 2 is at %v, want %s", got, big)
	}
	f.fsck()
}

// pushRefusal is a push that must be refused, and the reason git prints.
type pushRefusal struct {
	name   string
	token  func(f *gitFixture) string
	setup  func(f *gitFixture, w string) // prepares the commit(s) in w
	args   []string
	reason string
}

var pushRefusals = []pushRefusal{
	{name: "main", args: []string{"HEAD:main"}, reason: "main is the live version; it moves only when a version is published or promoted through the API"},
	{name: "tag", setup: func(f *gitFixture, w string) { f.g.must(w, "tag", "mine") }, args: []string{"mine"},
		reason: "tags are made by publishing a version through the API"},
	{name: "published version", args: []string{"HEAD:refs/heads/draft/1"}, reason: "version 1 is published; only a draft accepts pushes"},
	{name: "archived version", setup: func(f *gitFixture, w string) {
		f.e.Must(201, "POST", "/v1/skills/pdf/versions", f.e.Admin, nil)
		f.e.Must(200, "POST", "/v1/skills/pdf/versions/3/archive", f.e.Admin, nil)
	}, args: []string{"HEAD:refs/heads/draft/3"}, reason: "version 3 is archived; only a draft accepts pushes"},
	{name: "draft that does not exist", args: []string{"HEAD:refs/heads/draft/9"}, reason: "draft 9 does not exist; create it through the API"},
	{name: "other branch", args: []string{"HEAD:refs/heads/feature"}, reason: "only refs/heads/draft/<N> of an existing draft can be pushed"},
	{name: "delete", args: []string{":draft/2"}, reason: "deleting refs is not allowed; delete or archive a draft through the API"},
	{name: "non-fast-forward", setup: func(f *gitFixture, w string) {
		f.g.must(w, "push", "-q", "origin", "draft/2")
		f.g.must(w, "reset", "-q", "--hard", "HEAD~1")
		f.g.commitFile(w, "other.md", "diverged\n")
	}, args: []string{"-f", "draft/2"}, reason: "non-fast-forward: fetch, then merge or rebase before pushing"},
	{name: "read-only key", token: func(f *gitFixture) string { return f.e.CreateKey(f.e.Admin, "read") },
		args: []string{"draft/2"}, reason: "this credential may read but not push to project demo"},
	{name: "viewer", token: func(f *gitFixture) string {
		id, tok := f.e.CreateUser("viewer@example.com")
		f.e.Must(200, "POST", "/v1/projects/"+f.pid+"/members", f.e.Admin, map[string]string{"user_id": id, "role": "viewer"})
		return tok
	}, args: []string{"draft/2"}, reason: "this credential may read but not push to project demo"},
	{name: "dot-git path", setup: func(f *gitFixture, w string) {
		commitTree(f, w, "040000 tree %s\t.GIT", "100644 blob %s\tconfig")
	}, args: []string{"draft/2"}, reason: `hasDotgit: contains '.git' (entry ".GIT")`}, // git fsck's rule comes first
	{name: "dot-git path in a directory", setup: func(f *gitFixture, w string) {
		commitTree(f, w, "040000 tree %s\tsub", "100644 blob %s\tgit~1")
	}, args: []string{"draft/2"}, reason: `hasDotgit: contains '.git' (entry "git~1")`},
	{name: "backslash path", setup: func(f *gitFixture, w string) {
		commitTree(f, w, "", `100644 blob %s`+"\t"+`a\b.md`)
	}, args: []string{"draft/2"}, reason: `a\b.md: invalid file_path: must not contain a backslash`},
	{name: "file too large", setup: func(f *gitFixture, w string) {
		f.g.commitFile(w, "big.bin", strings.Repeat("x", 1<<20+1))
	}, args: []string{"draft/2"}, reason: "file big.bin is 1048577 bytes; the limit is 1048576"},
	{name: "gitattributes line git refuses", setup: func(f *gitFixture, w string) {
		f.g.commitFile(w, ".gitattributes", "*.md "+strings.Repeat("x", 3000)+"\n")
	}, args: []string{"draft/2"}, reason: ".gitattributes: a line is longer than 2047 bytes, which git refuses"},
	{name: "symlink", setup: func(f *gitFixture, w string) {
		if err := os.Symlink("/etc/passwd", filepath.Join(w, "link")); err != nil {
			f.t.Fatal(err)
		}
		f.g.must(w, "add", "link")
		f.g.must(w, "commit", "-q", "-m", "link")
	}, args: []string{"draft/2"}, reason: "link: symbolic links are not allowed"},
	{name: "submodule", setup: func(f *gitFixture, w string) {
		f.g.must(w, "update-index", "--add", "--cacheinfo", "160000,"+f.version(1)["commit"].(string)+",sub")
		f.g.must(w, "commit", "-q", "-m", "submodule")
	}, args: []string{"draft/2"}, reason: "sub: submodules are not allowed"},
}

// commitTree commits a tree made with git mktree, which accepts paths git
// add would refuse: dir (if not "") holds one file, entry is the root
// entry; both take the id of a blob or tree in %s.
func commitTree(f *gitFixture, w, dir, entry string) {
	blob := f.g.must(w, "hash-object", "-w", "--stdin", "--path", "x")
	// hash-object with --stdin and no input hashes the empty blob
	var root string
	if dir != "" {
		sub := mktree(f, w, fmt.Sprintf(entry, blob))
		root = mktree(f, w, fmt.Sprintf(dir, sub))
	} else {
		root = mktree(f, w, fmt.Sprintf(entry, blob))
	}
	c := f.g.must(w, "commit-tree", root, "-p", "HEAD", "-m", "odd paths")
	f.g.must(w, "update-ref", "refs/heads/draft/2", c) // no checkout: git refuses these paths
}

func mktree(f *gitFixture, w, line string) string {
	cmd := exec.Command("git", "mktree")
	cmd.Dir = w
	cmd.Env = f.g.env
	cmd.Stdin = strings.NewReader(line + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("mktree %q: %v\n%s", line, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestGitPushRefusals(t *testing.T) {
	sequentialHeavy(t)
	for _, tc := range pushRefusals {
		t.Run(tc.name, func(t *testing.T) {
			f := newGitFixture(t)
			token := f.e.Admin
			if tc.token != nil {
				token = tc.token(f)
			}
			w := f.clone(token, "-b", "draft/2")
			f.g.commitFile(w, "pushed.md", "pushed\n")
			if tc.setup != nil {
				tc.setup(f, w)
			}
			before := f.serverRefs()
			packs, _ := filepath.Glob(filepath.Join(f.repo(), "objects", "pack", "*.pack"))
			out := f.g.fails(w, append([]string{"push", "origin"}, tc.args...)...)
			if !strings.Contains(out, "[remote rejected]") || !strings.Contains(out, tc.reason+")") {
				t.Fatalf("want remote rejected (%s); git said:\n%s", tc.reason, out)
			}
			if after := f.serverRefs(); after != before {
				t.Errorf("refs changed:\n%s\nwant\n%s", after, before)
			}
			if now, _ := filepath.Glob(filepath.Join(f.repo(), "objects", "pack", "*.pack")); len(now) != len(packs) {
				t.Errorf("a refused push left a pack: %v", now)
			}
			f.fsck()
		})
	}
}

func TestGitPushLimitsPerVersion(t *testing.T) {
	l := quire.DefaultLimits()
	l.MaxVersionFiles = 5
	f := newGitFixture(t, testenv.Options{Limits: l})
	w := f.clone(f.e.Admin, "-b", "draft/2")
	for i := range 3 {
		f.g.commitFile(w, fmt.Sprintf("n%d.md", i), "n\n")
	}
	out := f.g.fails(w, "push", "origin", "draft/2")
	if !strings.Contains(out, "a version may hold at most 5 files)") {
		t.Fatalf("git said:\n%s", out)
	}
	f.fsck()
}

func TestGitAtomicPush(t *testing.T) {
	f := newGitFixture(t)
	w := f.clone(f.e.Admin, "-b", "draft/2")
	f.g.commitFile(w, "x.md", "x\n")
	before := f.serverRefs()
	out := f.g.fails(w, "push", "--atomic", "origin", "draft/2", "HEAD:main")
	if !strings.Contains(out, "(main is the live version") {
		t.Fatalf("git said:\n%s", out)
	}
	if after := f.serverRefs(); after != before {
		t.Errorf("an atomic push moved refs:\n%s", after)
	}
	f.fsck()
}

// TestGitPushRacesAPI runs git pushes and API upserts on one draft at the
// same time: each is serialized by the repository lock, a push that lost
// the race is refused cleanly, and no commit of either side is lost.
func TestGitPushRacesAPI(t *testing.T) {
	f := newGitFixture(t)
	g := f.g
	w := f.clone(f.e.Admin, "-b", "draft/2")
	const rounds = 8
	var wg sync.WaitGroup
	var apiCommits []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range rounds {
			r := f.e.Do("POST", "/v1/skills/pdf/versions/2/files", f.e.Admin, map[string]string{"file_path": fmt.Sprintf("api-%d.md", i), "content": "api\n"})
			if r.Status != 200 {
				t.Errorf("API upsert %d: %d %s", i, r.Status, r.Body)
				return
			}
			apiCommits = append(apiCommits, r.JSON(t)["version"].(map[string]any)["commit"].(string))
			time.Sleep(5 * time.Millisecond) // pacing: interleave with the pushes (the behavior under test)
		}
	}()
	var pushed []string
	refused := 0
	for i := range rounds {
		g.commitFile(w, fmt.Sprintf("git-%d.md", i), "git\n")
		for attempt := 0; ; attempt++ {
			out, err := g.run(w, "push", "origin", "draft/2")
			if err == nil {
				pushed = append(pushed, g.must(w, "rev-parse", "HEAD"))
				break
			}
			if !strings.Contains(out, "rejected") || attempt > 20 {
				t.Fatalf("push %d: %v\n%s", i, err, out)
			}
			refused++
			g.must(w, "pull", "-q", "--rebase", "origin", "draft/2")
		}
	}
	wg.Wait()
	tip := f.version(2)["commit"].(string)
	for _, c := range append(apiCommits, pushed...) {
		if _, err := exec.Command("git", "-C", f.repo(), "merge-base", "--is-ancestor", c, tip).CombinedOutput(); err != nil {
			t.Errorf("commit %s was lost (draft 2 is at %s)", c, tip)
		}
	}
	files := testenv.Git(t, f.repo(), "ls-tree", "--name-only", tip)
	for i := range rounds {
		for _, name := range []string{fmt.Sprintf("api-%d.md", i), fmt.Sprintf("git-%d.md", i)} {
			if !strings.Contains(files, name) {
				t.Errorf("%s missing from draft 2", name)
			}
		}
	}
	t.Logf("%d pushes, %d API upserts, %d pushes refused and retried", len(pushed), len(apiCommits), refused)
	f.fsck()
}

func TestGitPackCache(t *testing.T) {
	f := newGitFixture(t)
	clone := func() string {
		dir := t.TempDir()
		return f.g.must(dir, "clone", "--progress", f.g.url(f.e.Admin, "demo/skills/pdf.git"), "w")
	}
	if out := clone(); strings.Contains(out, "from cache") {
		t.Fatalf("first clone came from the cache:\n%s", out)
	}
	if out := clone(); !strings.Contains(out, "pack reused from cache") {
		t.Fatalf("second clone did not reuse the pack:\n%s", out)
	}
	f.upsert(2, "new.md", "new\n")
	if out := clone(); strings.Contains(out, "from cache") {
		t.Fatalf("clone after a change came from the cache:\n%s", out)
	}
	dir := t.TempDir()
	f.g.must(dir, "clone", "-q", "-b", "draft/2", f.g.url(f.e.Admin, "demo/skills/pdf.git"), "w")
	if got := readFile(t, filepath.Join(dir, "w", "new.md")); got != "new\n" {
		t.Errorf("new.md = %q", got)
	}
	f.fsck()
}

func TestGitRepack(t *testing.T) {
	f := newGitFixture(t, testenv.Options{Git: gitstore.GitOptions{RepackPacks: 1, RepackLoose: 1, RepackDelay: 10 * time.Millisecond}})
	w := f.clone(f.e.Admin, "-b", "draft/2")
	for i := range 4 {
		f.g.commitFile(w, fmt.Sprintf("p%d.md", i), strings.Repeat("text\n", 50+i))
		f.g.must(w, "push", "-q", "origin", "draft/2")
		f.upsert(2, fmt.Sprintf("api%d.md", i), "api\n")
		f.g.must(w, "pull", "-q", "--ff-only")
	}
	// Wait for the background repack to fold the pushes' packs into one,
	// leaving loose at most the few objects under its threshold (an
	// eighth of those packed).
	deadline := time.Now().Add(20 * time.Second)
	for {
		counts := map[string]int{}
		for _, line := range strings.Split(testenv.Git(t, f.repo(), "count-objects", "-v"), "\n") {
			k, v, _ := strings.Cut(line, ": ")
			counts[k], _ = strconv.Atoi(v)
		}
		if counts["packs"] == 1 && counts["count"] < max(1, counts["in-pack"]/8) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not repacked: %v", counts)
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.fsck()
	dir := t.TempDir()
	f.g.must(dir, "clone", "-q", "-b", "draft/2", f.g.url(f.e.Admin, "demo/skills/pdf.git"), "w")
	if got := readFile(t, filepath.Join(dir, "w", "p3.md")); got != strings.Repeat("text\n", 53) {
		t.Errorf("p3.md after repack: %q", got)
	}
	// The API reads from the new pack too.
	r := f.e.Must(200, "GET", "/v1/skills/pdf/versions/2/files/api3.md", f.e.Admin, nil)
	if string(r.Body) != "api\n" {
		t.Errorf("api3.md = %q", r.Body)
	}
}

// TestSystemRepack: metadata and usage commits fill the system repository
// with loose objects like any write; it is repacked in the background too,
// and everything in it reads the same afterwards, in this process and in
// a new one.
func TestSystemRepack(t *testing.T) {
	root := t.TempDir()
	e := testenv.NewWith(t, testenv.Options{Root: root, Git: gitstore.GitOptions{RepackPacks: 1, RepackLoose: 20, RepackDelay: 10 * time.Millisecond}})
	sys := filepath.Join(root, "_system.git")
	var projects []string
	for i := range 8 {
		projects = append(projects, e.CreateProject(e.Admin, fmt.Sprintf("repack-%d", i)))
	}
	key := e.CreateKey(e.Admin, "read")
	deadline := time.Now().Add(20 * time.Second)
	for {
		packs, _ := filepath.Glob(filepath.Join(sys, "objects", "pack", "*.pack"))
		loose, _ := filepath.Glob(filepath.Join(sys, "objects", "??", "*"))
		if len(packs) == 1 && len(loose) < 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("system repository not repacked: %d packs, %d loose objects", len(packs), len(loose))
		}
		time.Sleep(50 * time.Millisecond)
	}
	testenv.Git(t, sys, "fsck", "--strict", "--no-dangling")
	// Writes and reads go on, here and in a new process's view.
	projects = append(projects, e.CreateProject(e.Admin, "after-repack"))
	for _, env := range []*testenv.Env{e, testenv.NewWith(t, testenv.Options{Root: root})} {
		for _, id := range projects {
			env.Must(200, "GET", "/v1/projects/"+id, env.Admin, nil)
		}
		env.Must(200, "GET", "/v1/projects", key, nil)
	}
	testenv.Git(t, sys, "fsck", "--strict", "--no-dangling")
}
