package gitstore

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/quire/quire/gitstore/odb"

	"github.com/quire/quire"
)

// TestObjectSize: the size blob:limit compares is the object's, for loose
// objects and for packed ones stored whole or as deltas.
func TestObjectSize(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	big := strings.Repeat("line of text that repeats\n", 400)
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, []quire.FileContent{{Path: "a.md", Content: []byte(big)}}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.PutFiles(ctx, tester, a, 1, []quire.FileContent{{Path: "a.md", Content: []byte(big + strings.Repeat("x", i+1))}}, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	dir := s.RepoPath(a)
	check := func(want string) {
		t.Helper()
		r, err := s.assetRepo(a)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := odb.NewIdxCache(4).OpenPacks(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer ps.Close()
		o := odb.NewObjectReader(r.DB, ps)
		kinds := map[string]int{}
		for _, line := range strings.Split(gitCLI(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objectsize) %(deltabase)"), "\n") {
			f := strings.Fields(line)
			h, _ := odb.ParseHash(f[0])
			got, err := o.Size(h)
			if want, _ := strconv.ParseInt(f[1], 10, 64); err != nil || got != want {
				t.Errorf("size(%s) = %d, %v; git says %d", f[0], got, err, want)
			}
			kinds[map[bool]string{true: "whole", false: "delta"}[f[2] == strings.Repeat("0", 40)]]++
		}
		if kinds[want] == 0 {
			t.Errorf("no %s objects to check: %v", want, kinds)
		}
	}
	check("whole")
	gitCLI(t, dir, "repack", "-adq", "--depth=5")
	check("delta")
}
