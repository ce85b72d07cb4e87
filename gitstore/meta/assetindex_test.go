package meta

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/quire/quire"
)

func slugsOf(as []*quire.Asset) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Slug
	}
	return out
}

// TestAssetsPageReadsOnlyThePage checks that a list page is a slice of its
// project's index: it looks at the page's records and no others, in slug
// order, and the index follows creates, renames and deletes, and is
// rebuilt the same from the system repository by another process.
func TestAssetsPageReadsOnlyThePage(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	projects := map[string]string{}
	for _, slug := range []string{"a", "b"} {
		p := &quire.Project{Name: slug, Slug: slug}
		if err := s.CreateProject(ctx, tester, p); err != nil {
			t.Fatal(err)
		}
		projects[slug] = p.ID
	}
	create := func(project string, kind quire.Kind, slug string) *quire.Asset {
		t.Helper()
		a := &quire.Asset{ProjectID: projects[project], Kind: kind, Name: slug, Slug: slug}
		if err := s.CreateAsset(ctx, tester, a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	// Created out of order, so the order of the list is the index's.
	var skillsA []*quire.Asset
	for _, n := range []int{5, 2, 7, 1, 6, 3, 4} {
		skillsA = append(skillsA, create("a", quire.KindSkill, fmt.Sprintf("s%d", n)))
	}
	create("a", quire.KindPrompt, "s1")
	for n := range 5 {
		create("b", quire.KindSkill, fmt.Sprintf("s%d", n))
	}

	visited := map[string]int{}
	s.idx.visit = func(a *quire.Asset) { visited[a.ProjectID]++ }
	var got []string
	cursor, pages := "", 0
	for {
		clear(visited)
		page, next, err := s.AssetsPage(ctx, quire.KindSkill, projects["a"], quire.ListOptions{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if visited[projects["a"]] != len(page) || visited[projects["b"]] != 0 {
			t.Fatalf("a page of %d looked at %d records of its project and %d of another", len(page), visited[projects["a"]], visited[projects["b"]])
		}
		got = append(got, slugsOf(page)...)
		pages++
		if cursor = next; cursor == "" {
			break
		}
	}
	if want := []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7"}; !slices.Equal(got, want) || pages != 3 {
		t.Fatalf("pages of 3: %v in %d pages, want %v in 3", got, pages, want)
	}

	// A slug lookup looks at the assets with that slug only.
	clear(visited)
	found, err := s.FindAssets(ctx, quire.KindSkill, "s1")
	if err != nil || len(found) != 2 {
		t.Fatalf("FindAssets(s1) = %d assets, %v; want one per project", len(found), err)
	}
	if visited[projects["a"]]+visited[projects["b"]] != 2 {
		t.Fatalf("FindAssets looked at %v records, want 2", visited)
	}
	s.idx.visit = nil

	// A clash is still caught within a project, and only there.
	if err := s.CreateAsset(ctx, tester, &quire.Asset{ProjectID: projects["a"], Kind: quire.KindSkill, Name: "x", Slug: "s3"}); quire.ErrorCode(err) != quire.ECONFLICT {
		t.Fatalf("duplicate slug in a project: %v, want ECONFLICT", err)
	}
	create("b", quire.KindSkill, "s6")

	// Rename s5 to s0 and delete s7: the order follows.
	ren := skillsA[0]
	ren.Slug = "s0"
	if err := s.UpdateAsset(ctx, tester, ren); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateAsset(ctx, tester, &quire.Asset{ID: skillsA[1].ID, ProjectID: projects["a"], Kind: quire.KindSkill, Name: "x", Slug: "s1"}); quire.ErrorCode(err) != quire.ECONFLICT {
		t.Fatalf("rename onto a taken slug: %v, want ECONFLICT", err)
	}
	if err := s.DeleteAsset(ctx, tester, skillsA[2]); err != nil {
		t.Fatal(err)
	}
	want := []string{"s0", "s1", "s2", "s3", "s4", "s6"}
	all, err := s.Assets(ctx, quire.KindSkill, projects["a"])
	if err != nil || !slices.Equal(slugsOf(all), want) {
		t.Fatalf("after rename and delete: %v, %v; want %v", slugsOf(all), err, want)
	}
	if page, next, err := s.AssetsPage(ctx, quire.KindSkill, projects["a"], quire.ListOptions{Limit: 50, Cursor: "6"}); err != nil || len(page) != 0 || next != "" {
		t.Fatalf("page past the end: %v %q %v", slugsOf(page), next, err)
	}
	if _, _, err := s.AssetsPage(ctx, quire.KindSkill, projects["a"], quire.ListOptions{Limit: 50, Cursor: "x"}); quire.ErrorCode(err) != quire.EINVALID {
		t.Fatalf("bad cursor: %v, want EINVALID", err)
	}

	// Another process builds the same index from the system repository.
	other := openAt(t, s.idx.r.dir)
	for _, p := range []string{"a", "b"} {
		for _, kind := range []quire.Kind{quire.KindSkill, quire.KindPrompt} {
			mine, _ := s.Assets(ctx, kind, projects[p])
			theirs, err := other.Assets(ctx, kind, projects[p])
			if err != nil || !slices.Equal(slugsOf(mine), slugsOf(theirs)) {
				t.Fatalf("%s %s of %s: reopened %v, %v; want %v", p, kind, p, slugsOf(theirs), err, slugsOf(mine))
			}
		}
	}
	// And follows this one's later changes.
	create("a", quire.KindSkill, "s9")
	theirs, err := other.Assets(ctx, quire.KindSkill, projects["a"])
	if want := append(want, "s9"); err != nil || !slices.Equal(slugsOf(theirs), want) {
		t.Fatalf("after a change by another process: %v, %v; want %v", slugsOf(theirs), err, want)
	}
}
