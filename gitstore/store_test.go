package gitstore

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/quire/quire"
)

var tester = quire.Actor{Name: "Tess Ter", Email: "tess@example.com"}

func newTestStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// twoStores opens two stores on one new data root, as two processes
// sharing it would.
func twoStores(t testing.TB) (*Store, *Store) {
	t.Helper()
	root := t.TempDir()
	s1, err := Open(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Open(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return s1, s2
}

func newTestSkill(t testing.TB, s *Store) *quire.Asset {
	t.Helper()
	ctx := context.Background()
	p := &quire.Project{Name: "P", Slug: "p"}
	if err := s.CreateProject(ctx, tester, p); err != nil {
		t.Fatal(err)
	}
	a := &quire.Asset{ProjectID: p.ID, Kind: quire.KindSkill, Name: "S", Slug: "s"}
	if err := s.CreateAsset(ctx, tester, a); err != nil {
		t.Fatal(err)
	}
	return a
}

// gitCLI runs the real git binary in dir and returns its trimmed output.
func gitCLI(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestVersionLifecycleInGit(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	v, err := s.CreateVersion(ctx, tester, a, quire.Base{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Number != 1 || v.State != quire.StateDraft {
		t.Fatalf("got %+v", v)
	}
	if _, err := s.PutFiles(ctx, tester, a, 1, []quire.FileContent{{Path: "SKILL.md", Content: []byte("hi\n")}}, "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutFiles(ctx, tester, a, 1, []quire.FileContent{{Path: "a/b/c.txt", Content: []byte("x")}}, "", ""); err != nil {
		t.Fatal(err)
	}
	// Same content again: no new commit.
	before := gitCLI(t, s.RepoPath(a), "rev-parse", "refs/heads/draft/1")
	if _, err := s.PutFiles(ctx, tester, a, 1, []quire.FileContent{{Path: "a/b/c.txt", Content: []byte("x")}}, "", ""); err != nil {
		t.Fatal(err)
	}
	if after := gitCLI(t, s.RepoPath(a), "rev-parse", "refs/heads/draft/1"); after != before {
		t.Fatalf("identical upsert made a commit")
	}
	if got := gitCLI(t, s.RepoPath(a), "show", "draft/1:a/b/c.txt"); got != "x" {
		t.Fatalf("git show = %q", got)
	}
	if _, err := s.PublishVersion(ctx, tester, a, 1, nil); err != nil {
		t.Fatal(err)
	}
	refs := gitCLI(t, s.RepoPath(a), "for-each-ref", "--format=%(refname) %(objecttype)")
	for _, want := range []string{"refs/heads/main commit", "refs/tags/v1 tag"} {
		if !strings.Contains(refs, want) {
			t.Fatalf("refs missing %q:\n%s", want, refs)
		}
	}
	if strings.Contains(refs, "draft/1") {
		t.Fatalf("draft branch kept after publish:\n%s", refs)
	}
	v2, err := s.CreateVersion(ctx, tester, a, quire.Base{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := gitCLI(t, s.RepoPath(a), "rev-parse", "draft/2^"); got != gitCLI(t, s.RepoPath(a), "rev-parse", "v1^{commit}") {
		t.Fatalf("draft 2 not parented on v1")
	}
	if _, err := s.ArchiveVersion(ctx, tester, a, 1); quire.ErrorCode(err) != quire.ECONFLICT {
		t.Fatalf("archive live: %v", err)
	}
	if _, err := s.ArchiveVersion(ctx, tester, a, v2.Number); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, s.RepoPath(a), "fsck", "--strict")
	gitCLI(t, s.systemPath(), "fsck", "--strict")
}

// TestPromoteKeepsVersionsLog checks a promotion is recorded on the
// versions log by a commit on the log's own tree: the log does not change,
// so nothing but that commit is written (a packed log blob and tree are
// not written again as loose objects).
func TestPromoteKeepsVersionsLog(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	for n := 1; n <= 2; n++ {
		if _, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, []quire.FileContent{{Path: "SKILL.md", Content: []byte(fmt.Sprintf("v%d\n", n))}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PublishVersion(ctx, tester, a, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	dir := s.RepoPath(a)
	gitCLI(t, dir, "repack", "-a", "-d", "-q")
	before := gitCLI(t, dir, "rev-parse", "refs/quire/versions")
	if _, err := s.PromoteVersion(ctx, tester, a, 1); err != nil {
		t.Fatal(err)
	}
	if got := gitCLI(t, dir, "count-objects"); !strings.HasPrefix(got, "1 objects") {
		t.Fatalf("loose objects after the promotion: %q, want the commit alone", got)
	}
	if got := gitCLI(t, dir, "rev-parse", "refs/quire/versions^"); got != before {
		t.Fatalf("versions log parent %s, want %s", got, before)
	}
	if got, want := gitCLI(t, dir, "rev-parse", "refs/quire/versions^{tree}"), gitCLI(t, dir, "rev-parse", before+"^{tree}"); got != want {
		t.Fatalf("promotion changed the versions log tree: %s, was %s", got, want)
	}
	if got := gitCLI(t, dir, "log", "-1", "--format=%s", "refs/quire/versions"); got != "Promote version 1" {
		t.Fatalf("versions log says %q", got)
	}
	gitCLI(t, dir, "fsck", "--strict")
}
