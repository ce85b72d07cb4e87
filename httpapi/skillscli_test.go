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
// one skill's discovery address, by a project's URL, and by a skill's git
// repository. The script the skill's draft made executable (a git push)
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

	repo := installed(t, skillsAdd(t, bin, env, e.URL+"/git/demo/skills/pdf.git"))
	if repo["pdf/scripts/run.sh (x)"] != "#!/bin/sh\necho pdf\n" || repo["pdf/SKILL.md"] != manifest {
		t.Errorf("skills add …/git/demo/skills/pdf.git: the script is not executable, or files differ:\n%v", repo)
	}
}
