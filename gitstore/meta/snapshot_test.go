package meta

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/quire/quire"
)

// TestMetaSnapshotStart checks that a process starting on a data root
// reads the saved index and only the records changed since it was saved,
// answers exactly what a full read would, and falls back to a full read
// when the saved index is unusable.
func TestMetaSnapshotStart(t *testing.T) {
	ctx := context.Background()
	a := newTestStore(t)
	a.idx.snapEvery = 4
	if err := a.CreateUser(ctx, tester, &quire.User{Email: "Ann@example.com", Name: "Ann", Role: quire.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	p := &quire.Project{Name: "P", Slug: "p", Members: []quire.Member{}}
	if err := a.CreateProject(ctx, tester, p); err != nil {
		t.Fatal(err)
	}
	var assets []*quire.Asset
	for i := range 6 {
		as := &quire.Asset{ProjectID: p.ID, Kind: quire.KindSkill, Name: "S", Slug: fmt.Sprintf("s%d", i)}
		if err := a.CreateAsset(ctx, tester, as); err != nil {
			t.Fatal(err)
		}
		assets = append(assets, as)
	}
	// 8 records so far, saved at 4 and 8; two changes after the save.
	a.idx.snapEvery = 1 << 20
	if err := a.CreateAsset(ctx, tester, &quire.Asset{ProjectID: p.ID, Kind: quire.KindPrompt, Name: "Q", Slug: "q"}); err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteAsset(ctx, tester, assets[2]); err != nil {
		t.Fatal(err)
	}

	same := func(t *testing.T, s *Store) {
		t.Helper()
		u, err := s.UserByEmail(ctx, "ann@example.com")
		if err != nil || u.Name != "Ann" {
			t.Fatalf("user by email: %+v, %v", u, err)
		}
		pr, err := s.Project(ctx, "p")
		if err != nil || pr.ID != p.ID || pr.Members == nil {
			t.Fatalf("project by slug: %+v, %v", pr, err)
		}
		for _, kind := range []quire.Kind{quire.KindSkill, quire.KindPrompt} {
			want, _ := a.Assets(ctx, kind, p.ID)
			got, err := s.Assets(ctx, kind, p.ID)
			if err != nil || !slices.Equal(slugsOf(got), slugsOf(want)) {
				t.Fatalf("%s: %v, %v; want %v", kind, slugsOf(got), err, slugsOf(want))
			}
			for i := range got {
				if got[i].ID != want[i].ID || got[i].Kind != kind || !got[i].CreatedAt.Equal(want[i].CreatedAt) {
					t.Fatalf("%s %d: %+v, want %+v", kind, i, got[i], want[i])
				}
			}
		}
		if found, err := s.FindAssets(ctx, quire.KindSkill, "s2"); err != nil || len(found) != 0 {
			t.Fatalf("deleted skill found: %v, %v", found, err)
		}
	}
	open := func(t *testing.T) (*Store, *int) {
		t.Helper()
		s := openAt(t, a.idx.r.dir)
		n := new(int)
		s.idx.decoded = func(string) { *n++ }
		return s, n
	}

	t.Run("saved", func(t *testing.T) {
		s, decoded := open(t)
		same(t, s)
		if *decoded != 1 {
			t.Fatalf("start read %d records from git, want the 1 written since the save (the other change is a deletion)", *decoded)
		}
	})
	t.Run("unusable", func(t *testing.T) {
		if err := os.WriteFile(a.idx.snapPath(), []byte("not an index"), 0o644); err != nil {
			t.Fatal(err)
		}
		s, decoded := open(t)
		same(t, s)
		if *decoded != 8 {
			t.Fatalf("start read %d records from git, want all 8", *decoded)
		}
	})
	t.Run("missing", func(t *testing.T) {
		if err := os.Remove(a.idx.snapPath()); err != nil {
			t.Fatal(err)
		}
		s, decoded := open(t)
		same(t, s)
		if *decoded != 8 {
			t.Fatalf("start read %d records from git, want all 8", *decoded)
		}
	})
}
