package httpapi_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// pushPathRefusals are pushes whose paths the API would refuse: names a
// checkout on macOS or Windows would merge, and bidi controls. git on
// Linux commits them happily.
var pushPathRefusals = []pushRefusal{
	{name: "file case", setup: func(f *gitFixture, w string) {
		f.g.commitFile(w, "Notes.md", "other case\n")
	}, args: []string{"draft/2"}, reason: "path notes.md collides with Notes.md after case folding"},
	{name: "directory case", setup: func(f *gitFixture, w string) {
		f.g.commitFile(w, "Scripts/other.py", "print(2)\n")
	}, args: []string{"draft/2"}, reason: "path scripts/ collides with Scripts/ after case folding"},
	{name: "NFC and NFD", setup: func(f *gitFixture, w string) {
		f.g.commitFile(w, cafeNFC, "1\n")
		f.g.commitFile(w, cafeNFD, "2\n")
	}, args: []string{"draft/2"}, reason: "after Unicode normalization (NFC)"},
	{name: "collision in an earlier commit", setup: func(f *gitFixture, w string) {
		f.g.commitFile(w, "SKILL.MD", "x\n")
		f.g.must(w, "rm", "-q", "SKILL.MD")
		f.g.must(w, "commit", "-q", "-m", "gone again")
	}, args: []string{"draft/2"}, reason: "path SKILL.md collides with SKILL.MD after case folding"},
	{name: "right-to-left override", setup: func(f *gitFixture, w string) {
		f.g.commitFile(w, "evil\u202etxt.md", "x\n")
	}, args: []string{"draft/2"}, reason: "invalid file_path: must not contain bidirectional control characters"},
	{name: "isolate in a directory", setup: func(f *gitFixture, w string) {
		f.g.commitFile(w, "d\u2067/a.md", "x\n")
	}, args: []string{"draft/2"}, reason: "invalid file_path: must not contain bidirectional control characters"},
}

func TestGitPushPathRefusals(t *testing.T) {
	sequentialHeavy(t)
	for _, tc := range pushPathRefusals {
		t.Run(tc.name, func(t *testing.T) {
			f := newGitFixture(t)
			w := f.clone(f.e.Admin, "-b", "draft/2")
			f.g.must(w, "config", "core.quotePath", "false")
			f.g.commitFile(w, "pushed.md", "pushed\n")
			tc.setup(f, w)
			wantPushRefused(t, f, w, tc.reason, append([]string{"push", "origin"}, tc.args...)...)
		})
	}
}

// wantPushRefused runs git with args in w, which must fail with git
// printing reason, and checks the server's refs, packs and fsck.
func wantPushRefused(t *testing.T, f *gitFixture, w, reason string, args ...string) {
	t.Helper()
	before := f.serverRefs()
	packs, _ := filepath.Glob(filepath.Join(f.repo(), "objects", "pack", "*.pack"))
	out := f.g.fails(w, args...)
	if !strings.Contains(out, "[remote rejected]") || !strings.Contains(out, reason) {
		t.Fatalf("want remote rejected (%s); git said:\n%s", reason, out)
	}
	if strings.ContainsAny(out, "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f") {
		t.Errorf("the refusal prints a bidi control raw:\n%s", out)
	}
	if after := f.serverRefs(); after != before {
		t.Errorf("refs changed:\n%s\nwant\n%s", after, before)
	}
	if now, _ := filepath.Glob(filepath.Join(f.repo(), "objects", "pack", "*.pack")); len(now) != len(packs) {
		t.Errorf("a refused push left a pack: %v", now)
	}
	f.fsck()
}

// TestGitPushPromptLayout: a pushed prompt version may hold prompt.txt or
// messages/, not both, as the API's template and messages fields; moving
// from one to the other in one commit is fine.
func TestGitPushPromptLayout(t *testing.T) {
	f := newGitFixture(t)
	e := f.e
	id := e.CreatePrompt(e.Admin, f.pid, "greet")
	e.Must(201, "POST", "/v1/prompts/greet/versions", e.Admin, obj{"template": "Hello {{name}}\n"})
	e.Must(201, "POST", "/v1/prompts/greet/versions", e.Admin, obj{"messages": []obj{{"role": "user", "content": "Hi\n"}}})
	repo := e.RepoPath(quire.KindPrompt, id)
	// Each subtest has its own git client: it fails the test it belongs to.
	clone := func(t *testing.T, branch string) (*gitClient, string) {
		g := newGitClient(t, e)
		dir := t.TempDir()
		g.must(dir, "clone", "-q", "-b", branch, g.url(e.Admin, "demo/prompts/greet.git"), "w")
		return g, filepath.Join(dir, "w")
	}
	refused := func(t *testing.T, g *gitClient, w, branch string) {
		t.Helper()
		before := refsOf(t, repo)
		out := g.fails(w, "push", "origin", branch)
		if !strings.Contains(out, "[remote rejected]") || !strings.Contains(out, "a prompt version holds prompt.txt or messages/, not both)") {
			t.Fatalf("git said:\n%s", out)
		}
		sameRefs(t, before, refsOf(t, repo))
		testenv.Git(t, repo, "fsck", "--strict", "--no-dangling")
	}

	t.Run("messages added to a text prompt", func(t *testing.T) {
		g, w := clone(t, "draft/1")
		g.commitFile(w, "messages/001-user.txt", "Hi\n")
		refused(t, g, w, "draft/1")
	})
	t.Run("prompt.txt added to a chat prompt", func(t *testing.T) {
		g, w := clone(t, "draft/2")
		g.commitFile(w, "prompt.txt", "Hello\n")
		refused(t, g, w, "draft/2")
	})
	t.Run("text prompt turned into a chat prompt", func(t *testing.T) {
		g, w := clone(t, "draft/1")
		if err := os.MkdirAll(filepath.Join(w, "messages"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w, "messages", "001-user.txt"), []byte("Hi {{name}}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		g.must(w, "rm", "-q", "prompt.txt")
		g.must(w, "add", "messages")
		g.must(w, "commit", "-q", "-m", "chat now")
		g.must(w, "push", "-q", "origin", "draft/1")
		v := e.Must(200, "GET", "/v1/prompts/greet/versions/1", e.Admin, nil).JSON(t)
		if got := str(t, v, "version", "messages", "0", "content"); got != "Hi {{name}}\n" {
			t.Errorf("messages[0] = %q", got)
		}
		testenv.Git(t, repo, "fsck", "--strict", "--no-dangling")
	})
	f.fsck()
}
