package gitstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
)

// viewProject makes the project of newTestSkill's skill "s" with a
// second skill, slug, for the project view's tests.
func viewProject(t *testing.T, s *Store, slug string) (pr *quire.Project, a, b *quire.Asset) {
	t.Helper()
	ctx := context.Background()
	a = newTestSkill(t, s)
	pr, err := s.Project(ctx, a.ProjectID)
	if err != nil {
		t.Fatal(err)
	}
	b = &quire.Asset{ProjectID: pr.ID, Kind: quire.KindSkill, Name: strings.ToUpper(slug), Slug: slug}
	if err := s.CreateAsset(ctx, tester, b); err != nil {
		t.Fatal(err)
	}
	return pr, a, b
}

// publishSkill publishes a version of skill as whose SKILL.md has
// description, and returns its commit.
func publishSkill(t *testing.T, s *Store, as *quire.Asset, description string) string {
	t.Helper()
	ctx := context.Background()
	v, err := s.CreateVersion(ctx, tester, as, quire.Base{}, []quire.FileContent{{Path: "SKILL.md", Content: []byte("---\nname: " + as.Slug + "\ndescription: " + description + "\n---\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if v, err = s.PublishVersion(ctx, tester, as, v.Number, nil); err != nil {
		t.Fatal(err)
	}
	return v.Commit
}

// TestProjectView: a change applied to the view keeps every other skill
// as the view has it; SyncProject mends a view that drifted from the
// live versions; both leave a repository git fsck accepts, each commit's
// new objects in one pack.
func TestProjectView(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	pr, a, b := viewProject(t, s, "b")
	a1 := publishSkill(t, s, a, "a one")
	publishSkill(t, s, b, "b one")
	skills := []*quire.Asset{a, b}
	path := s.RepoPath(quire.ProjectRepo(pr.ID))
	show := func() string {
		return gitCLI(t, path, "ls-tree", "-r", "--name-only", "main") + "\n" + gitCLI(t, path, "show", "main:README.md")
	}
	if c, err := s.SyncProject(ctx, tester, pr, skills, "first"); err != nil || c == "" {
		t.Fatalf("first sync: %q %v", c, err)
	}
	if got := show(); !strings.Contains(got, "skills/s/SKILL.md") || !strings.Contains(got, "skills/b/SKILL.md") || !strings.Contains(got, "| a one |") {
		t.Fatalf("view:\n%s", got)
	}
	// A second sync changes nothing: no commit.
	if c, err := s.SyncProject(ctx, tester, pr, skills, "again"); err != nil || c != "" {
		t.Fatalf("second sync: %q %v", c, err)
	}
	a2 := publishSkill(t, s, a, "a two")
	if _, err := s.ApplyProjectChange(ctx, tester, pr, skills, quire.ProjectChange{Skill: a, Slug: "s", Commit: a2}, "Publish s v2"); err != nil {
		t.Fatal(err)
	}
	if got := show(); !strings.Contains(got, "| a two |") || !strings.Contains(got, "| b one |") {
		t.Fatalf("after one change, the other skill must stay:\n%s", got)
	}
	// Drift: the view set back to an older commit, and b removed; a sync
	// puts both as they are live.
	s.ApplyProjectChange(ctx, tester, pr, skills, quire.ProjectChange{Skill: a, Slug: "s", Commit: a1}, "drift")
	s.ApplyProjectChange(ctx, tester, pr, skills, quire.ProjectChange{Skill: b, Slug: "b"}, "drift")
	if got := show(); strings.Contains(got, "skills/b/") || !strings.Contains(got, "| a one |") {
		t.Fatalf("drifted view:\n%s", got)
	}
	if c, err := s.SyncProject(ctx, tester, pr, skills, "mend"); err != nil || c == "" {
		t.Fatalf("mend: %q %v", c, err)
	}
	if got := show(); !strings.Contains(got, "| a two |") || !strings.Contains(got, "| b one |") {
		t.Fatalf("mended view:\n%s", got)
	}
	if got := gitCLI(t, path, "log", "--format=%s", "main"); got != "mend\ndrift\ndrift\nPublish s v2\nfirst" {
		t.Errorf("log:\n%s", got)
	}
	gitCLI(t, path, "fsck", "--strict")
	// Each commit wrote its objects as one pack, none loose; the sync
	// that changed nothing wrote none.
	if got := gitCLI(t, path, "count-objects", "-v"); !strings.Contains(got, "count: 0\n") || !strings.Contains(got, "packs: 5\n") {
		t.Errorf("objects of the view:\n%s", got)
	}
}

// TestProjectViewSkillGone: the queue applies a skill's change after
// its request answered, so the skill may be deleted by then (its removal
// queued behind the change). A rename still moves the view's entry to
// the new slug (a rename keeps the live commit); a publish of the gone
// skill adds nothing; neither fails, and the removal then takes it out.
func TestProjectViewSkillGone(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	pr, a, b := viewProject(t, s, "review")
	publishSkill(t, s, a, "about s")
	live := publishSkill(t, s, b, "about review")
	skills := []*quire.Asset{a, b}
	if _, err := s.SyncProject(ctx, tester, pr, skills, "first"); err != nil {
		t.Fatal(err)
	}
	path := s.RepoPath(quire.ProjectRepo(pr.ID))
	before := gitCLI(t, path, "rev-parse", "main:skills/review")

	// Renamed, then deleted, before the queue applies either change.
	b.Slug = "code-review"
	if err := s.RemoveRepository(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyProjectChange(ctx, tester, pr, skills, quire.ProjectChange{Skill: b, Slug: "code-review", OldSlug: "review", Commit: live}, "Rename skill review to code-review"); err != nil {
		t.Fatalf("rename of a deleted skill: %v", err)
	}
	if got := gitCLI(t, path, "ls-tree", "--name-only", "main", "skills/"); got != "skills/code-review\nskills/s" {
		t.Fatalf("view after the rename:\n%s", got)
	}
	if got := gitCLI(t, path, "rev-parse", "main:skills/code-review"); got != before {
		t.Errorf("the renamed entry is %s, want the view's own %s", got, before)
	}
	// A publish of the gone skill, queued before its deletion: nothing.
	if c, err := s.ApplyProjectChange(ctx, tester, pr, skills, quire.ProjectChange{Skill: b, Slug: "code-review", Commit: live}, "Publish code-review v2"); err != nil || c != "" {
		t.Fatalf("publish of a deleted skill: %q %v", c, err)
	}
	if got := gitCLI(t, path, "ls-tree", "--name-only", "main", "skills/"); got != "skills/code-review\nskills/s" {
		t.Fatalf("view after the publish of a deleted skill:\n%s", got)
	}
	if _, err := s.ApplyProjectChange(ctx, tester, pr, skills, quire.ProjectChange{Skill: b, Slug: "code-review"}, "Delete skill code-review"); err != nil {
		t.Fatal(err)
	}
	if got := gitCLI(t, path, "ls-tree", "--name-only", "main", "skills/"); got != "skills/s" {
		t.Fatalf("view after the deletion:\n%s", got)
	}
	if got := gitCLI(t, path, "log", "--format=%s", "main"); got != "Delete skill code-review\nRename skill review to code-review\nfirst" {
		t.Errorf("log:\n%s", got)
	}
	gitCLI(t, path, "fsck", "--strict")
}

// TestProjectViewStartupSkipsUnchanged: a sync (what start-up runs) does
// not read a skill whose live commit is the one the view's entry was
// copied from -- here its objects are moved away, as if unreadable --
// and still reads one that changed.
func TestProjectViewStartupSkipsUnchanged(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	pr, a, b := viewProject(t, s, "b")
	publishSkill(t, s, a, "a one")
	publishSkill(t, s, b, "b one")
	skills := []*quire.Asset{a, b}
	if c, err := s.SyncProject(ctx, tester, pr, skills, "first"); err != nil || c == "" {
		t.Fatalf("first sync: %q %v", c, err)
	}

	// A restart: a new store over the same data root, b unreadable.
	s2, err := Open(Options{Root: s.opts.Root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	objs := filepath.Join(s2.RepoPath(b), "objects")
	if err := os.Rename(objs, objs+".away"); err != nil {
		t.Fatal(err)
	}
	if c, err := s2.SyncProject(ctx, tester, pr, skills, "restart"); err != nil || c != "" {
		t.Fatalf("sync with nothing changed read a skill: %q %v", c, err)
	}
	if err := os.Rename(objs+".away", objs); err != nil {
		t.Fatal(err)
	}
	// A publish the view missed (a crash before its change was applied).
	publishSkill(t, s2, a, "a two")
	if c, err := s2.SyncProject(ctx, tester, pr, skills, "mend"); err != nil || c == "" {
		t.Fatalf("sync after a missed publish: %q %v", c, err)
	}
	path := s2.RepoPath(quire.ProjectRepo(pr.ID))
	if got := gitCLI(t, path, "show", "main:README.md"); !strings.Contains(got, "| a two |") || !strings.Contains(got, "| b one |") {
		t.Errorf("view after the mend:\n%s", got)
	}
	gitCLI(t, path, "fsck", "--strict")
}

// TestProjectViewRepacked: each view change adds a pack, and the
// background repacker folds a project repository's packs once they pass
// RepackPacks, as it does an asset's.
func TestProjectViewRepacked(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	g := NewGit(s, GitOptions{RepackPacks: 2, RepackDelay: 10 * time.Millisecond})
	t.Cleanup(func() { g.Close() })
	a := newTestSkill(t, s)
	pr, err := s.Project(ctx, a.ProjectID)
	if err != nil {
		t.Fatal(err)
	}
	path := s.RepoPath(quire.ProjectRepo(pr.ID))
	for i := range 4 {
		v, err := s.CreateVersion(ctx, tester, a, quire.Base{}, []quire.FileContent{{Path: "SKILL.md", Content: fmt.Appendf(nil, "---\nname: s\ndescription: round %d\n---\n", i)}})
		if err != nil {
			t.Fatal(err)
		}
		if v, err = s.PublishVersion(ctx, tester, a, v.Number, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ApplyProjectChange(ctx, tester, pr, []*quire.Asset{a}, quire.ProjectChange{Skill: a, Slug: "s", Commit: v.Commit}, fmt.Sprintf("Publish s v%d", v.Number)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		packs, _, loose, err := odb.ObjectCounts(path)
		if err != nil {
			t.Fatal(err)
		}
		if packs <= 2 && loose == 0 { // four changes, four packs, unless repacked
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("project repository not repacked: %d packs, %d loose", packs, loose)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := gitCLI(t, path, "show", "main:README.md"); !strings.Contains(got, "| round 3 |") {
		t.Errorf("view after the repack:\n%s", got)
	}
	gitCLI(t, path, "fsck", "--strict")
}
