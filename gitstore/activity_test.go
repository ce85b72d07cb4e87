package gitstore

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/quire/quire"
)

// fullActivity is Activity as it was before the merge: every asset's
// history walked in full, every entry sorted, then the page cut.
func fullActivity(t *testing.T, s *Store, p *quire.Project, assets []*quire.Asset, opts quire.ListOptions) ([]quire.Activity, string) {
	t.Helper()
	var all []entry
	for _, a := range assets {
		r, err := s.assetRepo(a)
		if err != nil {
			t.Fatal(err)
		}
		h, err := walkHistory(r, a)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, h...)
	}
	meta, err := s.Store.ProjectActivity(p.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range meta {
		all = append(all, entry{Commit: e.Commit, rank: metadataRank + e.Depth, source: quire.SourceMetadata})
	}
	sortNewestFirst(all)
	pg, next, err := pageEntries(all, opts)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]quire.Activity, len(pg))
	for i, e := range pg {
		out[i] = quire.Activity{Commit: e.Commit, Source: e.source}
	}
	return out, next
}

// TestActivityMatchesFullWalk pages through the activity of a project
// whose assets' histories interleave (versions, publishes, promotions,
// archives, labels, deletes, renames, most within the same second), with
// several page sizes, and checks every page and cursor equal the full
// walk's. A second store on the same data root writes between reads, so
// the history memo is also checked against another process's writes.
func TestActivityMatchesFullWalk(t *testing.T) {
	ctx := context.Background()
	s, other := twoStores(t)
	p := &quire.Project{Name: "P", Slug: "p"}
	if err := s.CreateProject(ctx, tester, p); err != nil {
		t.Fatal(err)
	}
	var assets []*quire.Asset
	for i, k := range []quire.Kind{quire.KindSkill, quire.KindPrompt, quire.KindSkill, quire.KindPrompt} {
		a := &quire.Asset{ProjectID: p.ID, Kind: k, Name: fmt.Sprint("A", i), Slug: fmt.Sprint("a", i)}
		if err := s.CreateAsset(ctx, tester, a); err != nil {
			t.Fatal(err)
		}
		assets = append(assets, a)
	}
	file := func(a *quire.Asset) string {
		if a.Kind == quire.KindPrompt {
			return "prompt.md"
		}
		return "SKILL.md"
	}
	check := func(step string) {
		t.Helper()
		for _, limit := range []int{1, 3, 7, 0} {
			var cur string
			for page := 0; ; page++ {
				opts := quire.ListOptions{Limit: limit, Cursor: cur}
				got, next, err := s.Activity(ctx, p, assets, opts)
				if err != nil {
					t.Fatal(err)
				}
				want, wantNext := fullActivity(t, s, p, assets, opts)
				if !reflect.DeepEqual(got, want) || next != wantNext {
					t.Fatalf("%s, limit %d, page %d:\ngot  %v next %q\nwant %v next %q", step, limit, page, got, next, want, wantNext)
				}
				if next == "" {
					break
				}
				cur = next
			}
		}
	}
	check("created")
	for round := 1; round <= 3; round++ {
		for i, a := range assets {
			w := s
			if (round+i)%2 == 0 {
				w = other // another process's write: the memo must see it
			}
			v, err := w.CreateVersion(ctx, tester, a, quire.Base{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			body := fmt.Sprintf("round %d of %s\n", round, a.Name)
			if _, err := w.PutFiles(ctx, tester, a, v.Number, []quire.FileContent{{Path: file(a), Content: []byte(body)}}, "", ""); err != nil {
				t.Fatal(err)
			}
			switch (round + i) % 4 {
			case 0:
				if _, err := w.PublishVersion(ctx, tester, a, v.Number, nil); err != nil {
					t.Fatal(err)
				}
			case 1:
				if _, err := w.PublishVersion(ctx, tester, a, v.Number, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := w.SetLabel(ctx, tester, a, "prod", v.Number, ""); err != nil {
					t.Fatal(err)
				}
			case 2:
				if err := w.DeleteVersion(ctx, tester, a, v.Number); err != nil {
					t.Fatal(err)
				}
			}
		}
		check(fmt.Sprint("round ", round))
	}
	assets[1].Name = "Renamed"
	if err := other.UpdateAsset(ctx, tester, assets[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ArchiveVersion(ctx, tester, assets[0], 1); err != nil && quire.ErrorCode(err) != quire.ECONFLICT {
		t.Fatal(err)
	}
	check("renamed and archived")
	if _, _, err := s.Activity(ctx, p, assets, quire.ListOptions{Cursor: "not a cursor!"}); quire.ErrorCode(err) != quire.EINVALID {
		t.Fatalf("bad cursor: %v", err)
	}
}
