package gitstore

import (
	"context"
	"slices"
	"testing"

	"github.com/quire/quire"
)

func numbersOf(vs []*quire.Version) []int {
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = v.Number
	}
	return out
}

// TestVersionsPageReadsUpToThePage checks that a page of versions reads
// the refs of the versions up to its end (and one more, to know whether
// a next page exists), not every version, and that paging, deleted
// versions and the state filter give what the whole list would.
func TestVersionsPageReadsUpToThePage(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	for range 9 {
		if _, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, []quire.FileContent{{Path: "SKILL.md", Content: []byte("x")}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteVersion(ctx, tester, a, 4); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{2, 6} {
		if _, err := s.PublishVersion(ctx, tester, a, n, nil); err != nil {
			t.Fatal(err)
		}
	}

	var read []int
	s.versionRead = func(n int) { read = append(read, n) }
	page, next, err := s.VersionsPage(ctx, a, "", quire.ListOptions{Limit: 3})
	if err != nil || next != "3" || !slices.Equal(numbersOf(page), []int{1, 2, 3}) {
		t.Fatalf("first page: %v next %q, %v", numbersOf(page), next, err)
	}
	if !slices.Equal(read, []int{1, 2, 3, 4, 5}) { // 4 is deleted; 5 shows a next page exists
		t.Fatalf("first page of 3 read versions %v, want 1 to 5", read)
	}

	var got []int
	pages := 0
	for cursor := ""; ; pages++ {
		page, next, err := s.VersionsPage(ctx, a, "", quire.ListOptions{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, numbersOf(page)...)
		if cursor = next; cursor == "" {
			break
		}
	}
	if !slices.Equal(got, []int{1, 2, 3, 5, 6, 7, 8, 9}) || pages != 2 {
		t.Fatalf("pages of 3: %v after %d more pages", got, pages)
	}
	all, err := s.Versions(ctx, a)
	if err != nil || !slices.Equal(numbersOf(all), got) {
		t.Fatalf("Versions: %v, %v; want %v", numbersOf(all), err, got)
	}

	page, next, err = s.VersionsPage(ctx, a, quire.StatePublished, quire.ListOptions{Limit: 1})
	if err != nil || next != "2" || !slices.Equal(numbersOf(page), []int{2}) {
		t.Fatalf("published, first page of 1: %v next %q, %v", numbersOf(page), next, err)
	}
	page, next, err = s.VersionsPage(ctx, a, quire.StatePublished, quire.ListOptions{Limit: 1, Cursor: next})
	if err != nil || next != "" || !slices.Equal(numbersOf(page), []int{6}) {
		t.Fatalf("published, last page: %v next %q, %v", numbersOf(page), next, err)
	}
	if _, _, err := s.VersionsPage(ctx, a, "", quire.ListOptions{Limit: 1, Cursor: "-1"}); quire.ErrorCode(err) != quire.EINVALID {
		t.Fatalf("bad cursor: %v, want EINVALID", err)
	}
}
