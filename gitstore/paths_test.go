package gitstore

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/quire/quire"
)

// TestCollisionsStoredBeforeTheRule: a draft whose tree already holds
// look-alike paths (written before the rule, or by git) can still be
// updated at those exact paths; a write adding another look-alike is
// refused, naming the first in the directory; a new version from it with
// files is checked the same way.
func TestCollisionsStoredBeforeTheRule(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	v, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, []quire.FileContent{{Path: "a.md", Content: []byte("a\n")}})
	if err != nil {
		t.Fatal(err)
	}
	dir := s.RepoPath(a)
	mktree := func(lines ...string) string {
		cmd := exec.Command("git", "-C", dir, "mktree")
		cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("mktree: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	blob := gitCLI(t, dir, "hash-object", "-w", "--stdin")
	sub := mktree("100644 blob " + blob + "\tx.md")
	root := mktree("100644 blob "+blob+"\tREADME.md", "100644 blob "+blob+"\tReadme.md",
		"040000 tree "+sub+"\tDocs", "040000 tree "+sub+"\tdocs")
	c := gitCLI(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit-tree", root, "-p", v.Commit, "-m", "look-alikes")
	gitCLI(t, dir, "update-ref", "refs/heads/draft/1", c, v.Commit)

	// A second store sees the ref as the CLI left it.
	s2, err := Open(Options{Root: s.opts.Root})
	if err != nil {
		t.Fatal(err)
	}
	put := func(p string) error {
		_, err := s2.PutFiles(ctx, tester, a, 1, []quire.FileContent{{Path: p, Content: []byte("new\n")}}, "", "")
		return err
	}
	for _, p := range []string{"README.md", "Readme.md", "Docs/x.md", "docs/new.md"} {
		if err := put(p); err != nil {
			t.Errorf("update of %s: %v", p, err)
		}
	}
	for p, existing := range map[string]string{"readme.md": "README.md", "DOCS/x.md": "Docs/", "Docs/X.md": "Docs/x.md"} {
		err := put(p)
		if quire.ErrorCode(err) != quire.ECONFLICT || quire.ErrorDetails(err)["existing"] != existing {
			t.Errorf("put %s: %v (details %v), want a conflict with %s", p, err, quire.ErrorDetails(err), existing)
		}
	}
	_, err = s2.CreateVersion(ctx, tester, a, quire.Base{Version: 1}, []quire.FileContent{{Path: "README.MD", Content: []byte("x\n")}})
	if quire.ErrorCode(err) != quire.ECONFLICT || quire.ErrorDetails(err)["existing"] != "README.md" {
		t.Errorf("CreateVersion from v1 with README.MD: %v, want a conflict with README.md", err)
	}
	gitCLI(t, dir, "fsck", "--strict", "--no-dangling")
}
