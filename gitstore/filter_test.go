package gitstore

import (
	"context"
	"github.com/quire/quire/gitstore/odb"
	"strconv"
	"strings"
	"testing"

	"github.com/quire/quire"
)

func TestParseFilter(t *testing.T) {
	for _, tc := range []struct {
		spec string
		kind filterKind
		n    uint64
		err  string
	}{
		{spec: "blob:none", kind: filterBlobNone},
		{spec: "blob:limit=0", kind: filterBlobLimit},
		{spec: "blob:limit=100", kind: filterBlobLimit, n: 100},
		{spec: "blob:limit=10k", kind: filterBlobLimit, n: 10 << 10},
		{spec: "blob:limit=2M", kind: filterBlobLimit, n: 2 << 20},
		{spec: "blob:limit=1g", kind: filterBlobLimit, n: 1 << 30},
		{spec: "tree:0", kind: filterTreeDepth},
		{spec: "tree:3", kind: filterTreeDepth, n: 3},
		{spec: "blob:limit=", err: "expected 'blob:limit=<n>'"},
		{spec: "blob:limit=-1", err: "expected 'blob:limit=<n>'"},
		{spec: "blob:limit=1t", err: "expected 'blob:limit=<n>'"},
		{spec: "blob:limit=99999999999999999999", err: "expected 'blob:limit=<n>'"},
		{spec: "blob:limit=17179869184g", err: "expected 'blob:limit=<n>'"},
		{spec: "tree:", err: "expected 'tree:<depth>'"},
		{spec: "tree:x", err: "expected 'tree:<depth>'"},
		{spec: "sparse:oid=main:f", err: "is not supported"},
		{spec: "object:type=blob", err: "is not supported"},
		{spec: "combine:blob:none+tree:0", err: "is not supported"},
		{spec: "", err: "is not supported"},
	} {
		f, err := parseFilter(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || f.kind != tc.kind || f.n != tc.n || f.spec != tc.spec {
			t.Errorf("%q: %+v, %v; want kind %d n %d", tc.spec, f, err, tc.kind, tc.n)
		}
	}
}

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
			h, _ := parseHash(f[0])
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
