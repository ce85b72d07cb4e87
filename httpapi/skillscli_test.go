package httpapi_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// skillsCLI finds the `skills` npm CLI (vercel-labs/skills, the installer
// `npx skills add` runs) and the Node >= 22 it needs, as .ci/run installs
// them into its npm cache: $QUIRE_CI_NPM/node22. The test skips, saying
// so, where they are missing.
func skillsCLI(t *testing.T) (bin string, env []string) {
	t.Helper()
	dir := os.Getenv("QUIRE_CI_NPM")
	if dir == "" {
		cache, _ := os.UserCacheDir()
		dir = filepath.Join(cache, "quire-ci-npm")
	}
	binDir := filepath.Join(dir, "node22", "node_modules", ".bin")
	bin = filepath.Join(binDir, "skills")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("the skills CLI is not installed (npm install --prefix %s node@22 skills@1.7.4; .ci/run does): skipping", filepath.Dir(filepath.Dir(binDir)))
	}
	home := t.TempDir()
	env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "DISABLE_TELEMETRY=1", "DO_NOT_TRACK=1", "CI=1",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	return bin, env
}

// skillsAdd runs `skills add source args...` in a new project folder and
// returns the folder Claude Code's skills land in.
func skillsAdd(t *testing.T, bin string, env []string, source string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	testenv.Git(t, dir, "init", "-q")
	cmd := exec.Command(bin, append([]string{"add", source, "--agent", "claude-code", "-y", "--copy"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("skills add %s: %v\n%s", source, err, out)
	}
	return filepath.Join(dir, ".claude", "skills")
}

// installed lists what a skills folder holds: skill/path -> content, with
// " (x)" after the path of an executable file.
func installed(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if info.Mode()&0o111 != 0 {
			rel += " (x)"
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSkillsCLIInstalls installs from quire with the real skills CLI, the
// way agent users do: by the server's URL (discovery, every skill), by
// one skill's discovery address, by a project's URL, by the project's
// repository (every skill, or one), and by a skill's git repository. The script the skill's draft made executable (a git push)
// stays executable where the installer keeps modes: through git. Through
// discovery the CLI writes every file 0644 whatever the archive says
// (its extractor reads no mode), which docs/clients.md states.
func TestSkillsCLIInstalls(t *testing.T) {
	bin, env := skillsCLI(t)
	f := newGitFixture(t)
	e := f.e
	// pdf: SKILL.md, scripts/run.py, notes.md and an executable script
	// (pushed with its mode), published as v2.
	w := f.clone(e.Admin)
	f.g.must(w, "checkout", "-q", "draft/2")
	f.g.commitFile(w, "scripts/run.sh", "#!/bin/sh\necho pdf\n")
	f.g.must(w, "update-index", "--chmod=+x", "scripts/run.sh")
	f.g.must(w, "commit", "-q", "-m", "run.sh is executable")
	f.g.must(w, "push", "-q", "origin", "draft/2")
	e.Must(200, "POST", "/v1/skills/pdf/versions/2/publish", e.Admin, nil)
	// review: SKILL.md alone, a skill-md entry.
	publishSkill(t, e, f.pid, "review", "Review code.", nil)
	manifest := testenv.SkillManifest("pdf")
	e.ProjectReposIdle()
	// Public, so the installers need no credential. (A git client asks
	// anonymously first, so it sees a public project's published state.)
	e.Must(200, "PATCH", "/v1/projects/demo", e.Admin, map[string]string{"visibility": "public"})

	all := installed(t, skillsAdd(t, bin, env, e.URL, "--skill", "*"))
	if all["pdf/SKILL.md"] != manifest || all["pdf/scripts/run.sh"] != "#!/bin/sh\necho pdf\n" || all["pdf/notes.md"] == "" ||
		!strings.Contains(all["review/SKILL.md"], "description: Review code.") || len(all) != 5 {
		t.Errorf("skills add %s:\n%v", e.URL, all)
	}

	one := installed(t, skillsAdd(t, bin, env, e.URL+"/.well-known/agent-skills/review"))
	if len(one) != 1 || !strings.Contains(one["review/SKILL.md"], "name: review") {
		t.Errorf("skills add …/.well-known/agent-skills/review:\n%v", one)
	}

	proj := installed(t, skillsAdd(t, bin, env, e.URL+"/v1/projects/demo", "--skill", "pdf"))
	if len(proj) != 4 || proj["pdf/SKILL.md"] != manifest {
		t.Errorf("skills add …/v1/projects/demo --skill pdf:\n%v", proj)
	}

	// The project's repository: every skill, or one with --skill, the
	// script still executable.
	whole := installed(t, skillsAdd(t, bin, env, e.URL+"/git/demo.git", "--skill", "*"))
	if len(whole) != 5 || whole["pdf/scripts/run.sh (x)"] != "#!/bin/sh\necho pdf\n" || !strings.Contains(whole["review/SKILL.md"], "name: review") {
		t.Errorf("skills add …/git/demo.git --skill '*':\n%v", whole)
	}
	picked := installed(t, skillsAdd(t, bin, env, e.URL+"/git/demo.git", "--skill", "review"))
	if len(picked) != 1 || !strings.Contains(picked["review/SKILL.md"], "name: review") {
		t.Errorf("skills add …/git/demo.git --skill review:\n%v", picked)
	}

	repo := installed(t, skillsAdd(t, bin, env, e.URL+"/git/demo/skills/pdf.git"))
	if repo["pdf/scripts/run.sh (x)"] != "#!/bin/sh\necho pdf\n" || repo["pdf/SKILL.md"] != manifest {
		t.Errorf("skills add …/git/demo/skills/pdf.git: the script is not executable, or files differ:\n%v", repo)
	}
}

// TestClaudeCodeMarketplace adds a project's repository to Claude Code
// (the real CLI, @anthropic-ai/claude-code from npm, which .ci/run
// installs into its npm cache) as a plugin marketplace and installs one
// of its skills as a plugin: Claude Code clones the repository, checks
// its marketplace.json, and copies the skill's folder, scripts
// executable. It skips, saying so, where the CLI is missing.
func TestClaudeCodeMarketplace(t *testing.T) {
	_, env := skillsCLI(t) // Node 22 on PATH, a fresh HOME
	dir := os.Getenv("QUIRE_CI_NPM")
	if dir == "" {
		cache, _ := os.UserCacheDir()
		dir = filepath.Join(cache, "quire-ci-npm")
	}
	claude := filepath.Join(dir, "claude", "node_modules", ".bin", "claude")
	if _, err := os.Stat(claude); err != nil {
		t.Skipf("Claude Code is not installed (npm install --prefix %s @anthropic-ai/claude-code@2.1.332; .ci/run does): skipping", filepath.Dir(filepath.Dir(filepath.Dir(claude))))
	}
	env = append(env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	f := newGitFixture(t)
	e := f.e
	e.Must(200, "POST", "/v1/skills/pdf/versions/2/files", e.Admin, map[string]string{"file_path": "scripts/run.sh", "content": "#!/bin/sh\n", "mode": "100755"})
	e.Must(200, "POST", "/v1/skills/pdf/versions/2/publish", e.Admin, nil)
	e.Must(200, "PATCH", "/v1/projects/demo", e.Admin, map[string]string{"visibility": "public"})
	e.ProjectReposIdle()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(claude, args...)
		cmd.Dir, cmd.Env = t.TempDir(), env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := run("plugin", "marketplace", "add", e.URL+"/git/demo.git"); !strings.Contains(out, "Successfully added marketplace: demo") {
		t.Fatalf("marketplace add:\n%s", out)
	}
	if out := run("plugin", "install", "pdf@demo"); !strings.Contains(out, "Successfully installed plugin: pdf@demo") {
		t.Fatalf("plugin install:\n%s", out)
	}
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	found, _ := filepath.Glob(filepath.Join(home, ".claude", "plugins", "cache", "demo", "pdf", "*", "skills", "pdf", "scripts", "run.sh"))
	if len(found) != 1 {
		t.Fatalf("the installed plugin has no skills/pdf/scripts/run.sh: %v", found)
	}
	if info, err := os.Stat(found[0]); err != nil || info.Mode().Perm()&0o111 == 0 {
		t.Errorf("run.sh installed as %v (%v), not executable", info.Mode(), err)
	}
}
