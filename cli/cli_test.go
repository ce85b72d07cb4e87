package cli_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/cli"
	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/skillpack"
)

// The CLI driven in-process against a real server (internal/testenv):
// what it prints, its exit code, the files it leaves, and the server's
// git repositories afterwards.

// fixture is a server with project demo holding two published skills,
// pdf-tools and xlsx, and a published prompt greet.
type fixture struct {
	e       *testenv.Env
	project string
	skills  map[string]string // slug → id
	// archives counts archive downloads (GET …/archive.tar.gz).
	archives atomic.Int64
	// terminal runs the commands as if stdout were a terminal.
	terminal bool
}

func newFixture(t *testing.T) *fixture {
	return newFixtureWith(t, testenv.Options{})
}

func newFixtureWith(t *testing.T, o testenv.Options) *fixture {
	t.Helper()
	e := testenv.NewWith(t, o)
	f := &fixture{e: e, skills: map[string]string{}}
	f.project = e.CreateProject(e.Admin, "demo")
	for _, slug := range []string{"pdf-tools", "xlsx"} {
		f.skills[slug] = e.CreateSkill(e.Admin, f.project, slug)
		f.publishSkill(t, slug, map[string]string{"SKILL.md": testenv.SkillManifest(slug), "scripts/run.py": "print('" + slug + " 1')\n"})
	}
	pid := e.CreatePrompt(e.Admin, f.project, "greet")
	e.Must(201, "POST", "/v1/prompts/"+pid+"/versions", e.Admin, map[string]any{"template": "Hello {{name}}!"})
	e.Must(200, "POST", "/v1/prompts/"+pid+"/versions/1/publish", e.Admin, nil)
	return f
}

// publishSkill opens a draft of slug from the live version, writes files
// (an empty content deletes) and publishes it; it returns its number.
func (f *fixture) publishSkill(t *testing.T, slug string, files map[string]string) int {
	t.Helper()
	id := f.skills[slug]
	var v struct {
		Version struct {
			Number int `json:"version"`
		} `json:"version"`
	}
	f.e.Must(201, "POST", "/v1/skills/"+id+"/versions", f.e.Admin, nil).Decode(t, &v)
	n := v.Version.Number
	for p, c := range files {
		if c == "" {
			f.e.Must(200, "DELETE", fmt.Sprintf("/v1/skills/%s/versions/%d/files/%s", id, n, p), f.e.Admin, nil)
			continue
		}
		f.e.Must(200, "POST", fmt.Sprintf("/v1/skills/%s/versions/%d/files", id, n), f.e.Admin, map[string]string{"file_path": p, "content": c})
	}
	f.e.Must(200, "POST", fmt.Sprintf("/v1/skills/%s/versions/%d/publish", id, n), f.e.Admin, nil)
	return n
}

// result is one run of the command line.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	return m
}

// countArchives counts archive downloads on their way to the server.
type countArchives struct {
	n    *atomic.Int64
	next http.RoundTripper
}

func (c countArchives) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/archive.tar.gz") {
		c.n.Add(1)
	}
	return c.next.RoundTrip(r)
}

// quire runs the command line in dir with env (QUIRE_SERVER is the
// fixture's and QUIRE_TOKEN the admin's unless env says otherwise), as
// main does: the one-line error on stderr, the exit code.
func (f *fixture) quire(t *testing.T, dir string, env map[string]string, args ...string) result {
	t.Helper()
	vars := map[string]string{"QUIRE_SERVER": f.e.URL, "QUIRE_TOKEN": f.e.Admin, "QUIRE_CONFIG_DIR": filepath.Join(dir, ".config")}
	for k, v := range env {
		vars[k] = v
	}
	var out, errb bytes.Buffer
	o := cli.Options{
		Stdin: strings.NewReader(vars["stdin"]), Stdout: &out, Stderr: &errb, Dir: dir, Terminal: f.terminal,
		Getenv: func(k string) string { return vars[k] },
		HTTP:   &http.Client{Transport: countArchives{&f.archives, http.DefaultTransport}},
	}
	err := cli.Run(context.Background(), o, args)
	if err != nil {
		fmt.Fprintln(&errb, "quire:", cli.Message(err))
	}
	return result{cli.ExitCode(err), out.String(), errb.String()}
}

func (f *fixture) must(t *testing.T, dir string, args ...string) result {
	t.Helper()
	r := f.quire(t, dir, nil, args...)
	if r.code != 0 {
		t.Fatalf("quire %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readLock(t *testing.T, dir string) cli.Lock {
	t.Helper()
	var l cli.Lock
	if err := json.Unmarshal([]byte(read(t, filepath.Join(dir, cli.LockName))), &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// indexDigests are the skill-level digests the discovery index shows.
// indexDigests is the skill-level digest (skillpack.SkillDigest) of each
// skill of the project's discovery index, computed from the artifact the
// index names (its SKILL.md, or its archive's files), as a lockfile
// records it.
func (f *fixture) indexDigests(t *testing.T) map[string]string {
	t.Helper()
	var idx struct {
		Skills []struct{ Name, Type, URL, Digest string }
	}
	f.e.Must(200, "GET", "/v1/projects/demo/agent-skills/index.json", f.e.Admin, nil).Decode(t, &idx)
	out := map[string]string{}
	for _, s := range idx.Skills {
		body := f.e.Must(200, "GET", s.URL, f.e.Admin, nil).Body
		if skillpack.Digest(body) != s.Digest {
			t.Fatalf("%s: the artifact's digest is not the index's", s.Name)
		}
		files := []skillpack.File{{Path: "SKILL.md", Digest: s.Digest}}
		if s.Type == "archive" {
			files = nil
			gz, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			tr := tar.NewReader(gz)
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(tr)
				files = append(files, skillpack.File{Path: h.Name, Digest: skillpack.Digest(b)})
			}
		}
		out[s.Name] = skillpack.SkillDigest(files)
	}
	return out
}

func statuses(t *testing.T, r result) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range r.json(t)["skills"].([]any) {
		m := s.(map[string]any)
		out[m["slug"].(string)] = m["status"].(string)
	}
	return out
}

func TestPull(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()

	r := f.must(t, dir, "pull", "demo")
	if !strings.Contains(r.stdout, "installed pdf-tools") && !strings.Contains(r.stdout, "installed demo/pdf-tools v1 in skills/pdf-tools") || !strings.Contains(r.stdout, "2 installed") {
		t.Fatalf("first pull:\n%s", r.stdout)
	}
	if got := read(t, filepath.Join(dir, "skills/pdf-tools/SKILL.md")); got != testenv.SkillManifest("pdf-tools") {
		t.Fatalf("SKILL.md on disk: %q", got)
	}
	if got := read(t, filepath.Join(dir, "skills/xlsx/scripts/run.py")); got != "print('xlsx 1')\n" {
		t.Fatalf("run.py on disk: %q", got)
	}
	// The lockfile: its digests are the discovery index's.
	lock := readLock(t, dir)
	idx := f.indexDigests(t)
	if lock.Version != 1 || len(lock.Skills) != 2 {
		t.Fatalf("lockfile: %+v", lock)
	}
	for _, s := range lock.Skills {
		if s.Project != "demo" || s.Version != 1 || len(s.Commit) != 40 || s.Digest != idx[s.Slug] {
			t.Fatalf("lock entry %+v; index digest %s", s, idx[s.Slug])
		}
	}
	raw := read(t, filepath.Join(dir, cli.LockName))
	for _, field := range []string{`"version": 1`, `"project": "demo"`, `"slug": "pdf-tools"`, `"commit": "`, `"digest": "sha256:`} {
		if !strings.Contains(raw, field) {
			t.Fatalf("lockfile lacks %s:\n%s", field, raw)
		}
	}
	if f.archives.Load() != 2 {
		t.Fatalf("first pull downloaded %d archives, want 2", f.archives.Load())
	}

	// Again: nothing downloaded, nothing changed.
	r = f.must(t, dir, "pull", "demo", "--json")
	if st := statuses(t, r); st["pdf-tools"] != "unchanged" || st["xlsx"] != "unchanged" {
		t.Fatalf("second pull: %v", st)
	}
	if f.archives.Load() != 2 {
		t.Fatalf("second pull downloaded %d archives", f.archives.Load()-2)
	}

	// One skill changes on the server: only it is downloaded.
	f.publishSkill(t, "pdf-tools", map[string]string{"scripts/run.py": "", "README.md": "new\n"})
	r = f.must(t, dir, "pull", "--json") // the lockfile's skills
	if st := statuses(t, r); st["pdf-tools"] != "updated" || st["xlsx"] != "unchanged" {
		t.Fatalf("pull after a publish: %v", st)
	}
	if f.archives.Load() != 3 {
		t.Fatalf("pull after a publish downloaded %d archives, want 1", f.archives.Load()-2)
	}
	if _, err := os.Stat(filepath.Join(dir, "skills/pdf-tools/scripts/run.py")); !os.IsNotExist(err) {
		t.Fatalf("a file deleted on the server is still in the folder: %v", err)
	}
	if read(t, filepath.Join(dir, "skills/pdf-tools/README.md")) != "new\n" {
		t.Fatal("the new file is not in the folder")
	}
	if l := readLock(t, dir); l.Skills[0].Version != 2 || l.Skills[0].Digest != f.indexDigests(t)["pdf-tools"] {
		t.Fatalf("lockfile after the update: %+v", l)
	}

	// --skill picks; a skill that does not exist is an error.
	other := t.TempDir()
	r = f.must(t, other, "pull", "demo", "--skill", "xlsx", "--dir", "agent")
	if _, err := os.Stat(filepath.Join(other, "agent/xlsx/SKILL.md")); err != nil || strings.Contains(r.stdout, "pdf-tools") {
		t.Fatalf("--skill xlsx: %v\n%s", err, r.stdout)
	}
	if r := f.quire(t, other, nil, "pull", "demo", "--skill", "nope"); r.code != 1 || !strings.Contains(r.stderr, "no skill nope") {
		t.Fatalf("--skill nope: %+v", r)
	}
}

func TestPullLocalEdits(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	f.must(t, dir, "pull", "demo")
	edited := filepath.Join(dir, "skills/pdf-tools/SKILL.md")
	write(t, edited, "my edit\n")
	lockBefore := read(t, filepath.Join(dir, cli.LockName))

	// Nothing changed on the server: the edit is kept, and said so.
	r := f.must(t, dir, "pull", "demo", "--json")
	if st := statuses(t, r); st["pdf-tools"] != "kept" || st["xlsx"] != "unchanged" {
		t.Fatalf("pull over an edit, server unchanged: %v", st)
	}

	// The server changed: refused, listing the folder, nothing written.
	f.publishSkill(t, "pdf-tools", map[string]string{"README.md": "v2\n"})
	f.publishSkill(t, "xlsx", map[string]string{"README.md": "v2\n"})
	r = f.quire(t, dir, nil, "pull", "demo")
	if r.code != 1 || !strings.Contains(r.stderr, "local edits in skills/pdf-tools") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("pull over an edit: %+v", r)
	}
	if read(t, edited) != "my edit\n" || read(t, filepath.Join(dir, cli.LockName)) != lockBefore {
		t.Fatal("a refused pull wrote something")
	}
	if _, err := os.Stat(filepath.Join(dir, "skills/xlsx/README.md")); !os.IsNotExist(err) {
		t.Fatal("a refused pull updated another skill")
	}

	// --force overwrites.
	r = f.must(t, dir, "pull", "demo", "--force", "--json")
	if st := statuses(t, r); st["pdf-tools"] != "updated" || st["xlsx"] != "updated" {
		t.Fatalf("pull --force: %v", st)
	}
	if read(t, edited) != testenv.SkillManifest("pdf-tools") {
		t.Fatal("--force did not overwrite the edit")
	}
	// --force restores an edited folder even when the server has nothing new.
	write(t, edited, "edit again\n")
	r = f.must(t, dir, "pull", "demo", "--force", "--json")
	if st := statuses(t, r); st["pdf-tools"] != "updated" || st["xlsx"] != "unchanged" || read(t, edited) != testenv.SkillManifest("pdf-tools") {
		t.Fatalf("pull --force, server unchanged: %v", st)
	}

	// A folder the lockfile does not know is a local edit too.
	fresh := t.TempDir()
	write(t, filepath.Join(fresh, "skills/xlsx/SKILL.md"), "mine\n")
	if r := f.quire(t, fresh, nil, "pull", "demo"); r.code != 1 || !strings.Contains(r.stderr, "skills/xlsx") {
		t.Fatalf("pull over an unknown folder: %+v", r)
	}
}

func TestPullFrozen(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	f.must(t, dir, "pull", "demo")
	lock := readLock(t, dir)
	// The server moves on; --frozen still installs what the lock pins.
	f.publishSkill(t, "pdf-tools", map[string]string{"README.md": "v2\n"})
	if err := os.RemoveAll(filepath.Join(dir, "skills")); err != nil {
		t.Fatal(err)
	}
	r := f.must(t, dir, "pull", "--frozen", "--json")
	if st := statuses(t, r); st["pdf-tools"] != "installed" && st["pdf-tools"] != "updated" {
		t.Fatalf("pull --frozen: %v", st)
	}
	if _, err := os.Stat(filepath.Join(dir, "skills/pdf-tools/README.md")); !os.IsNotExist(err) {
		t.Fatal("--frozen installed the live version, not the pinned one")
	}
	if got := readLock(t, dir); fmt.Sprint(got) != fmt.Sprint(lock) {
		t.Fatalf("--frozen changed the lockfile: %+v", got)
	}
	// Again: nothing to download.
	n := f.archives.Load()
	f.must(t, dir, "pull", "--frozen")
	if f.archives.Load() != n {
		t.Fatal("a second --frozen pull downloaded")
	}

	// A digest that is not the archive's: one line, exit 1, nothing written.
	lock.Skills[0].Digest = "sha256:" + strings.Repeat("0", 64)
	b, _ := json.Marshal(lock)
	write(t, filepath.Join(dir, cli.LockName), string(b))
	os.RemoveAll(filepath.Join(dir, "skills"))
	r = f.quire(t, dir, nil, "pull", "--frozen")
	if r.code != 1 || !strings.Contains(r.stderr, "digest") || !strings.Contains(r.stderr, "is not the one quire.lock pins") {
		t.Fatalf("--frozen with a wrong digest: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "skills")); !os.IsNotExist(err) {
		t.Fatal("a failed --frozen pull wrote skills")
	}
	if r := f.quire(t, dir, nil, "pull", "--frozen", "--label", "x"); r.code != 2 {
		t.Fatalf("--frozen --label: %+v", r)
	}
}

func TestSkillsInstall(t *testing.T) {
	f := newFixture(t)
	f.publishSkill(t, "xlsx", map[string]string{"README.md": "v2\n"})
	dir := t.TempDir()
	r := f.must(t, dir, "skills", "install", "demo/xlsx@1")
	if !strings.Contains(r.stdout, "installed demo/xlsx v1 in .claude/skills/xlsx") {
		t.Fatalf("install: %s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, ".claude/skills/xlsx/README.md")); !os.IsNotExist(err) {
		t.Fatal("@1 installed another version")
	}
	l := readLock(t, dir)
	if len(l.Skills) != 1 || l.Skills[0].Slug != "xlsx" || l.Skills[0].Version != 1 {
		t.Fatalf("lockfile after install: %+v", l)
	}
	f.must(t, dir, "skills", "install", "demo/xlsx", "--to", "agent")
	if read(t, filepath.Join(dir, "agent/xlsx/README.md")) != "v2\n" {
		t.Fatal("install of the live version")
	}
	if r := f.quire(t, dir, nil, "skills", "install", "demo/nope"); r.code != 1 || !strings.Contains(r.stderr, "not found") {
		t.Fatalf("install of a missing skill: %+v", r)
	}
	if r := f.quire(t, dir, nil, "skills", "install", "xlsx"); r.code != 2 || !strings.Contains(r.stderr, "PROJECT/SLUG") {
		t.Fatalf("install without a project: %+v", r)
	}
}

// gitRepo is the bare repository of skill slug.
func (f *fixture) gitRepo(slug string) string { return f.e.RepoPath(quire.KindSkill, f.skills[slug]) }

func TestPush(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	f.must(t, dir, "pull", "demo")
	folder := filepath.Join(dir, "skills/pdf-tools")
	write(t, filepath.Join(folder, "SKILL.md"), testenv.SkillManifest("pdf-tools")+"More.\n")
	write(t, filepath.Join(folder, "docs/usage.md"), "usage\n")
	os.Remove(filepath.Join(folder, "scripts/run.py"))

	r := f.must(t, dir, "push", "skills/pdf-tools", "-m", "Rework the skill")
	if !strings.Contains(r.stdout, "draft 2 of demo/pdf-tools opened: 1 added, 1 changed, 1 deleted") ||
		!strings.Contains(r.stdout, "A docs/usage.md") || !strings.Contains(r.stdout, "M SKILL.md") || !strings.Contains(r.stdout, "D scripts/run.py") {
		t.Fatalf("push:\n%s", r.stdout)
	}
	repo := f.gitRepo("pdf-tools")
	// One commit on draft/2 over the live version, holding the folder.
	if got := testenv.Git(t, repo, "rev-list", "--count", "main..refs/heads/draft/2"); strings.TrimSpace(got) != "1" {
		t.Fatalf("commits on draft/2: %s", got)
	}
	if got := testenv.Git(t, repo, "log", "-1", "--format=%s", "refs/heads/draft/2"); strings.TrimSpace(got) != "Rework the skill" {
		t.Fatalf("commit message: %q", got)
	}
	if got := testenv.Git(t, repo, "ls-tree", "-r", "--name-only", "refs/heads/draft/2"); got != "SKILL.md\ndocs/usage.md" {
		t.Fatalf("draft/2 tree:\n%s", got)
	}
	testenv.Git(t, repo, "fsck", "--strict")

	// --draft N adds a commit to that draft; --json says what changed.
	write(t, filepath.Join(folder, "docs/usage.md"), "usage 2\n")
	r = f.must(t, dir, "push", "skills/pdf-tools", "--draft", "2", "--json")
	if m := r.json(t); m["draft"] != float64(2) || m["created"] != false || fmt.Sprint(m["changed"]) != "[docs/usage.md]" {
		t.Fatalf("push --draft 2: %s", r.stdout)
	}
	if got := testenv.Git(t, repo, "show", "refs/heads/draft/2:docs/usage.md"); got != "usage 2" {
		t.Fatalf("draft/2 usage.md: %q", got)
	}
	// Nothing changed: no commit, no new draft.
	head := testenv.Git(t, repo, "rev-parse", "refs/heads/draft/2")
	r = f.must(t, dir, "push", "skills/pdf-tools", "--draft", "2")
	if !strings.Contains(r.stdout, "nothing to push") || testenv.Git(t, repo, "rev-parse", "refs/heads/draft/2") != head {
		t.Fatalf("push of nothing: %s", r.stdout)
	}
	xlsx := f.gitRepo("xlsx")
	r = f.must(t, dir, "push", "skills/xlsx")
	if !strings.Contains(r.stdout, "nothing to push") || strings.Contains(testenv.Git(t, xlsx, "for-each-ref"), "draft/") {
		t.Fatalf("push of an unchanged folder left a draft: %s", r.stdout)
	}

	// quire diff of the folder says what a push would; publish makes it live.
	r = f.must(t, dir, "diff", "skills/pdf-tools", "--draft", "2")
	if !strings.Contains(r.stdout, "0 added, 0 changed, 0 deleted") {
		t.Fatalf("diff against draft 2: %s", r.stdout)
	}
	r = f.must(t, dir, "diff", "skills/pdf-tools")
	if !strings.Contains(r.stdout, "against demo/pdf-tools v1: 1 added, 1 changed, 1 deleted") {
		t.Fatalf("diff against the lockfile's version: %s", r.stdout)
	}
	r = f.must(t, dir, "diff", "demo/pdf-tools", "--from", "1", "--to", "2")
	if !strings.Contains(r.stdout, "A docs/usage.md") || !strings.Contains(r.stdout, "+usage 2") {
		t.Fatalf("diff of versions: %s", r.stdout)
	}
	r = f.must(t, dir, "publish", "demo/pdf-tools", "2")
	if !strings.Contains(r.stdout, "published demo/pdf-tools version 2") {
		t.Fatalf("publish: %s", r.stdout)
	}
	if got := testenv.Git(t, repo, "ls-tree", "-r", "--name-only", "main"); got != "SKILL.md\ndocs/usage.md" {
		t.Fatalf("main after publish:\n%s", got)
	}
	testenv.Git(t, repo, "fsck", "--strict")
	// The pushed folder is what is live now: a pull finds it the same
	// (its digest matches), updates the lockfile, overwrites nothing.
	r = f.must(t, dir, "pull", "--json")
	if st := statuses(t, r); st["pdf-tools"] != "updated" {
		t.Fatalf("pull after publish: %v", st)
	}
}

func TestPushBadInput(t *testing.T) {
	limits := quire.DefaultLimits()
	limits.MaxFile = 1 << 10
	f := newFixtureWith(t, testenv.Options{Limits: limits})
	dir := t.TempDir()
	f.must(t, dir, "pull", "demo")
	repo := f.gitRepo("pdf-tools")
	refs := testenv.Git(t, repo, "for-each-ref")

	link := filepath.Join(dir, "skills/xlsx/link")
	if err := os.Symlink("/etc/passwd", link); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "file"), "x")
	for _, c := range []struct {
		name string
		args []string
		prep func()
		code int
		want string
	}{
		{"symlink", []string{"push", "skills/xlsx"}, nil, 1, "is a symlink"},
		{"too big", []string{"push", "skills/pdf-tools"}, func() {
			write(t, filepath.Join(dir, "skills/pdf-tools/big.bin"), strings.Repeat("x", 2<<10))
		}, 1, "push demo/pdf-tools: zip entry \"big.bin\" is larger than 1024 bytes (413 too_large)"},
		{"not a folder", []string{"push", "nope/pdf-tools"}, nil, 1, "no such folder"},
		{"unknown skill", []string{"push", "file"}, nil, 1, "not a folder"},
		{"no project", []string{"push", "other"}, func() { write(t, filepath.Join(dir, "other/SKILL.md"), "x") }, 2, "--project"},
		{"no draft", []string{"push", "skills/pdf-tools", "--draft", "9"}, nil, 1, "not found"},
		{"published, not a draft", []string{"push", "skills/pdf-tools", "--draft", "1"}, nil, 1, "not a draft"},
		{"pull into a file", []string{"pull", "demo", "--dir", "file"}, nil, 1, "is not a folder"},
		{"pull over a symlink", []string{"pull", "demo", "--force"}, nil, 1, "is a symlink"},
		{"no arguments", []string{"push"}, nil, 2, "accepts 1 arg"},
		{"bad flag", []string{"pull", "--nope"}, nil, 2, "unknown flag"},
		{"unknown command", []string{"fly"}, nil, 2, "unknown command"},
		{"bad draft number", []string{"publish", "demo/pdf-tools", "two"}, nil, 2, "not a positive number"},
		{"render without project", []string{"render", "greet"}, nil, 2, "PROJECT/SLUG"},
		{"bad var", []string{"render", "demo/greet", "--var", "name"}, nil, 2, "name=value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.prep != nil {
				c.prep()
			}
			r := f.quire(t, dir, nil, c.args...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != c.code || !strings.Contains(lines[len(lines)-1], c.want) || !strings.HasPrefix(lines[len(lines)-1], "quire: ") {
				t.Fatalf("exit %d, want %d; stderr %q, want %q", r.code, c.code, r.stderr, c.want)
			}
		})
	}
	// None of it left a draft or a commit behind, nor changed the lockfile's folders.
	if got := testenv.Git(t, repo, "for-each-ref"); got != refs {
		t.Fatalf("refs after refused pushes:\n%s\nwas\n%s", got, refs)
	}
	testenv.Git(t, repo, "fsck", "--strict")
}

func TestServerDownAndWrongToken(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	down := map[string]string{"QUIRE_SERVER": "http://127.0.0.1:1"}
	for _, args := range [][]string{{"pull", "demo"}, {"skills", "ls"}, {"render", "demo/greet"}, {"whoami"}} {
		r := f.quire(t, dir, down, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "cannot reach the server") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Fatalf("%v with the server down: %+v", args, r)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "skills")); !os.IsNotExist(err) {
		t.Fatal("a pull with the server down wrote a folder")
	}
	bad := map[string]string{"QUIRE_TOKEN": "sess_wrong"}
	for _, args := range [][]string{{"pull", "demo"}, {"whoami"}, {"skills", "ls", "demo"}} {
		r := f.quire(t, dir, bad, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "(401") || !strings.Contains(r.stderr, "quire login") {
			t.Fatalf("%v with a wrong token: %+v", args, r)
		}
	}
}

func TestRenderAndLists(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	r := f.must(t, dir, "render", "demo/greet", "--var", "name=Ann")
	if r.stdout != "Hello Ann!\n" {
		t.Fatalf("render: %q", r.stdout)
	}
	r = f.must(t, dir, "render", "demo/greet", "--vars", `{"name": "Bo"}`, "--json")
	if m := r.json(t); m["rendered"] != "Hello Bo!" || m["version"] != float64(1) {
		t.Fatalf("render --json: %s", r.stdout)
	}
	if r := f.quire(t, dir, nil, "render", "demo/greet"); r.code != 1 || !strings.Contains(r.stderr, "name") {
		t.Fatalf("render without its variable: %+v", r)
	}
	// Anonymous: a private project asks to log in; a public one renders
	// and pulls without a credential.
	anon := map[string]string{"QUIRE_TOKEN": ""}
	if r := f.quire(t, dir, anon, "render", "demo/greet", "--var", "name=Ann"); r.code != 1 || !strings.Contains(r.stderr, "(401") {
		t.Fatalf("anonymous render of a private project: %+v", r)
	}
	f.e.Must(200, "PATCH", "/v1/projects/demo", f.e.Admin, map[string]string{"visibility": "public"})
	if r := f.quire(t, dir, anon, "render", "demo/greet", "--var", "name=Ann"); r.code != 0 || r.stdout != "Hello Ann!\n" {
		t.Fatalf("anonymous render of a public project: %+v", r)
	}
	if r := f.quire(t, dir, anon, "pull", "demo"); r.code != 0 || !strings.Contains(r.stdout, "2 installed") {
		t.Fatalf("anonymous pull of a public project: %+v", r)
	}
	r = f.must(t, dir, "skills", "ls", "demo")
	if !strings.Contains(r.stdout, "demo/pdf-tools") || !strings.Contains(r.stdout, "demo/xlsx") || strings.Contains(r.stdout, "greet") {
		t.Fatalf("skills ls: %s", r.stdout)
	}
	r = f.must(t, dir, "prompts", "ls", "--json")
	if got := r.json(t)["prompts"].([]any); len(got) != 1 || got[0].(map[string]any)["ref"] != "demo/greet" {
		t.Fatalf("prompts ls --json: %s", r.stdout)
	}
}

func TestReview(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	f.must(t, dir, "pull", "demo")
	write(t, filepath.Join(dir, "skills/xlsx/README.md"), "reviewed\n")
	f.must(t, dir, "push", "skills/xlsx")
	r := f.must(t, dir, "review", "open", "demo/xlsx", "2", "--title", "Add a README")
	if !strings.Contains(r.stdout, "review 1 of demo/xlsx draft 2 opened: Add a README (1 files)") {
		t.Fatalf("review open: %s", r.stdout)
	}
	uid, tok := f.e.CreateUser("rev@example.com")
	f.e.Must(200, "POST", "/v1/projects/demo/members", f.e.Admin, map[string]string{"user_id": uid, "role": "editor"})
	r = f.quire(t, dir, map[string]string{"QUIRE_TOKEN": tok}, "review", "approve", "demo/xlsx", "1", "-m", "ok", "--json")
	if r.code != 0 || r.json(t)["kind"] != "approve" {
		t.Fatalf("review approve: %+v", r)
	}
	if got := testenv.Git(t, f.gitRepo("xlsx"), "for-each-ref", "--format=%(refname)", "refs/reviews/"); strings.TrimSpace(got) != "refs/reviews/1" {
		t.Fatalf("review refs: %q", got)
	}
	if r := f.quire(t, dir, nil, "review", "approve", "demo/xlsx", "7"); r.code != 1 || !strings.Contains(r.stderr, "404") {
		t.Fatalf("approve a missing review: %+v", r)
	}
}

func TestLoginWhoamiLogout(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	noenv := map[string]string{"QUIRE_TOKEN": "", "QUIRE_SERVER": ""}
	key := f.e.CreateKey(f.e.Admin, "read")
	r := f.quire(t, dir, noenv, "login", "--server", f.e.URL, "--token", key)
	if r.code != 0 || !strings.Contains(r.stdout, "logged in to "+f.e.URL+" as admin@example.com") {
		t.Fatalf("login --token: %+v", r)
	}
	tokenFile := filepath.Join(dir, ".config", "token.json")
	st, err := os.Stat(tokenFile)
	if err != nil || st.Mode().Perm() != 0o600 || !strings.Contains(read(t, tokenFile), key) {
		t.Fatalf("token file: %v %v", err, st)
	}
	// The saved login serves the next commands, server and token.
	r = f.quire(t, dir, noenv, "whoami")
	if r.code != 0 || !strings.Contains(r.stdout, "admin@example.com (admin) on "+f.e.URL+", by API key") {
		t.Fatalf("whoami: %+v", r)
	}
	f.must(t, dir, "pull", "demo")
	if r := f.quire(t, dir, noenv, "logout"); r.code != 0 || !strings.Contains(r.stdout, "logged out of "+f.e.URL) {
		t.Fatalf("logout: %+v", r)
	}
	if _, err := os.Stat(tokenFile); !os.IsNotExist(err) {
		t.Fatal("logout kept the token file")
	}
	if r := f.quire(t, dir, map[string]string{"QUIRE_TOKEN": "", "QUIRE_SERVER": f.e.URL}, "whoami"); r.code != 1 || !strings.Contains(r.stderr, "not logged in") {
		t.Fatalf("whoami after logout: %+v", r)
	}

	// Email and password: the password from stdin; a wrong one fails and
	// keeps no file.
	r = f.quire(t, dir, map[string]string{"QUIRE_TOKEN": "", "stdin": testenv.AdminPassword + "\n"}, "login", "--server", f.e.URL, "--email", testenv.AdminEmail, "--json")
	if r.code != 0 || r.json(t)["email"] != testenv.AdminEmail {
		t.Fatalf("login with a password: %+v", r)
	}
	if r := f.quire(t, dir, map[string]string{"QUIRE_TOKEN": ""}, "whoami", "--json"); r.code != 0 || r.json(t)["kind"] != "session" {
		t.Fatalf("whoami with a session: %+v", r)
	}
	f.must(t, dir, "logout")
	r = f.quire(t, dir, map[string]string{"QUIRE_TOKEN": "", "stdin": "admin@example.com\nwrong\n"}, "login", "--server", f.e.URL)
	if r.code != 1 || !strings.Contains(r.stderr, "401") {
		t.Fatalf("login with a wrong password: %+v", r)
	}
	if _, err := os.Stat(tokenFile); !os.IsNotExist(err) {
		t.Fatal("a failed login kept a token file")
	}
	if r := f.quire(t, dir, noenv, "login", "--server", f.e.URL, "--token", "ak_wrong"); r.code != 1 || !strings.Contains(r.stderr, "401") {
		t.Fatalf("login with a wrong token: %+v", r)
	}
}

func TestHelpHasExamples(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	for _, cmd := range [][]string{{"login"}, {"logout"}, {"whoami"}, {"pull"}, {"push"}, {"diff"}, {"publish"}, {"review"}, {"review", "open"}, {"review", "approve"},
		{"render"}, {"prompts"}, {"prompts", "ls"}, {"skills"}, {"skills", "ls"}, {"skills", "install"}, {"version"}} {
		r := f.must(t, dir, append(cmd, "--help")...)
		if !strings.Contains(r.stdout, "Examples:\n  quire "+cmd[0]) {
			t.Errorf("quire %s --help has no example:\n%s", strings.Join(cmd, " "), r.stdout)
		}
	}
}

// TestProgressBar: a pull of more than a few skills shows a progress bar
// on stderr when stdout is a terminal, and never otherwise.
func TestProgressBar(t *testing.T) {
	f := newFixture(t)
	for _, slug := range []string{"a", "b", "c"} {
		f.skills[slug] = f.e.CreateSkill(f.e.Admin, f.project, slug)
		f.publishSkill(t, slug, map[string]string{"SKILL.md": testenv.SkillManifest(slug)})
	}
	r := f.must(t, t.TempDir(), "pull", "demo")
	if r.stderr != "" || !strings.Contains(r.stdout, "5 installed") {
		t.Fatalf("pull, not a terminal: %+v", r)
	}
	f.terminal = true
	r = f.must(t, t.TempDir(), "pull", "demo")
	if !strings.Contains(r.stderr, "pulling") || !strings.Contains(r.stderr, "(4/5)") {
		t.Fatalf("pull on a terminal: stderr %q", r.stderr)
	}
	r = f.must(t, t.TempDir(), "pull", "demo", "--skill", "a", "--skill", "b")
	if r.stderr != "" {
		t.Fatalf("a pull of two skills on a terminal: stderr %q", r.stderr)
	}
}

// TestPullLabel: --label pulls the version a label names; skills without
// the label are skipped, a named one is an error.
func TestPullLabel(t *testing.T) {
	f := newFixture(t)
	f.publishSkill(t, "pdf-tools", map[string]string{"README.md": "v2\n"})
	f.e.Must(200, "PUT", "/v1/skills/"+f.skills["pdf-tools"]+"/labels/stable", f.e.Admin, map[string]any{"version": 1})
	dir := t.TempDir()
	r := f.must(t, dir, "pull", "demo", "--label", "stable", "--json")
	if st := statuses(t, r); st["pdf-tools"] != "installed" || st["xlsx"] != "skipped" {
		t.Fatalf("pull --label: %v", st)
	}
	if _, err := os.Stat(filepath.Join(dir, "skills/pdf-tools/README.md")); !os.IsNotExist(err) {
		t.Fatal("--label stable pulled the live version")
	}
	if l := readLock(t, dir); len(l.Skills) != 1 || l.Skills[0].Version != 1 {
		t.Fatalf("lockfile: %+v", l)
	}
	if r := f.quire(t, dir, nil, "pull", "demo", "--label", "stable", "--skill", "xlsx"); r.code != 1 || !strings.Contains(r.stderr, "demo/xlsx has no version stable") {
		t.Fatalf("pull --label of a named skill without it: %+v", r)
	}
}

// TestPushNewSkill: a skill with no version yet takes its first draft
// from a folder named after it.
func TestPushNewSkill(t *testing.T) {
	f := newFixture(t)
	f.skills["fresh"] = f.e.CreateSkill(f.e.Admin, f.project, "fresh")
	dir := t.TempDir()
	write(t, filepath.Join(dir, "fresh/SKILL.md"), testenv.SkillManifest("fresh"))
	r := f.must(t, dir, "push", "fresh", "--project", "demo")
	if !strings.Contains(r.stdout, "draft 1 of demo/fresh opened: 1 added, 0 changed, 0 deleted") {
		t.Fatalf("push of a new skill: %s", r.stdout)
	}
	repo := f.gitRepo("fresh")
	if got := testenv.Git(t, repo, "rev-list", "--count", "refs/heads/draft/1"); got != "1" {
		t.Fatalf("commits on draft/1: %s", got)
	}
	testenv.Git(t, repo, "fsck", "--strict")
	f.must(t, dir, "publish", "demo/fresh", "1")
	r = f.must(t, dir, "skills", "install", "demo/fresh", "--to", "agent")
	if read(t, filepath.Join(dir, "agent/fresh/SKILL.md")) != testenv.SkillManifest("fresh") {
		t.Fatalf("install after publish: %s", r.stdout)
	}
}

// TestPushPullModes: quire push sends the executable bit it finds on
// disk, the server keeps it as git mode 100755, and a pull (and skills
// install) restore it.
func TestPushPullModes(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	f.must(t, dir, "pull", "demo")
	script := filepath.Join(dir, "skills/pdf-tools/scripts/run.py")
	write(t, script, "print('runs')\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	f.must(t, dir, "push", "skills/pdf-tools")
	repo := f.gitRepo("pdf-tools")
	if got := testenv.Git(t, repo, "ls-tree", "refs/heads/draft/2", "scripts/run.py"); !strings.HasPrefix(got, "100755 ") {
		t.Fatalf("pushed mode: %s", got)
	}
	f.must(t, dir, "publish", "demo/pdf-tools", "2")
	for _, args := range [][]string{{"pull", "demo"}, {"skills", "install", "demo/pdf-tools", "--to", "agent"}} {
		other := t.TempDir()
		f.must(t, other, args...)
		p := filepath.Join(other, "skills/pdf-tools/scripts/run.py")
		if args[0] == "skills" {
			p = filepath.Join(other, "agent/pdf-tools/scripts/run.py")
		}
		if info, err := os.Stat(p); err != nil {
			t.Errorf("%v: %v", args, err)
		} else if info.Mode().Perm()&0o111 == 0 {
			t.Errorf("%v: run.py is %v, not executable", args, info.Mode())
		}
	}
}
