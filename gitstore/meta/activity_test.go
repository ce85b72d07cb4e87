package meta

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
)

// TestDiffTreesMatchesGoGit checks, for every commit of a system history
// with projects and assets created, renamed and deleted (several sharing a
// shard), that diffTrees names the same files and blobs under projects/,
// skills/ and prompts/ as go-git's DiffTree.
func TestDiffTreesMatchesGoGit(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	by := quire.Actor{Name: "Tess", Email: "tess@example.com"}
	var projects []*quire.Project
	for i := range 2 {
		p := &quire.Project{Name: fmt.Sprint("P", i), Slug: fmt.Sprint("p", i)}
		if err := s.CreateProject(ctx, by, p); err != nil {
			t.Fatal(err)
		}
		projects = append(projects, p)
	}
	var assets []*quire.Asset
	for i := range 40 {
		k := []quire.Kind{quire.KindSkill, quire.KindPrompt}[i%2]
		a := &quire.Asset{ProjectID: projects[i%2].ID, Kind: k, Name: fmt.Sprint("A", i), Slug: fmt.Sprint("a", i)}
		if err := s.CreateAsset(ctx, by, a); err != nil {
			t.Fatal(err)
		}
		assets = append(assets, a)
	}
	for i, a := range assets {
		switch i % 3 {
		case 0:
			a.Name += " renamed"
			if err := s.UpdateAsset(ctx, by, a); err != nil {
				t.Fatal(err)
			}
		case 1:
			if err := s.DeleteAsset(ctx, by, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.DeleteProject(ctx, by, projects[1].ID); err != nil {
		t.Fatal(err)
	}
	r := s.idx.r
	tip, err := r.Ref(mainRef)
	if err != nil {
		t.Fatal(err)
	}
	commits := 0
	for h := tip; !h.IsZero(); commits++ {
		c, err := r.Commit(h)
		if err != nil {
			t.Fatal(err)
		}
		var parent plumbing.Hash
		from := &object.Tree{}
		if len(c.ParentHashes) > 0 {
			pc, err := r.Commit(c.ParentHashes[0])
			if err != nil {
				t.Fatal(err)
			}
			parent = pc.TreeHash
			if from, err = r.Tree(pc.TreeHash); err != nil {
				t.Fatal(err)
			}
		}
		to, err := r.Tree(c.TreeHash)
		if err != nil {
			t.Fatal(err)
		}
		changes, err := object.DiffTree(from, to)
		if err != nil {
			t.Fatal(err)
		}
		var want, got []string
		for _, ch := range changes {
			name, blob := ch.To.Name, ch.To.TreeEntry.Hash
			if name == "" {
				name, blob = ch.From.Name, ch.From.TreeEntry.Hash
			}
			dir, _, _ := strings.Cut(name, "/")
			if activityDirs[dir] {
				want = append(want, name+" "+blob.String())
			}
		}
		err = diffTrees(r, parent, c.TreeHash, "", func(name string, blob plumbing.Hash) {
			got = append(got, name+" "+blob.String())
		})
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(want)
		sort.Strings(got)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("commit %s %q:\ngot  %v\nwant %v", h, c.Message, got, want)
		}
		h = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			h = c.ParentHashes[0]
		}
	}
	if commits < 70 {
		t.Fatalf("only %d commits walked", commits)
	}
}
