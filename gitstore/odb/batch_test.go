package odb

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
)

// TestBatch: a batch's objects are readable through it at once, stored
// nowhere until Flush, then as one pack (and index) that git reads and
// fsck accepts, with no loose object and no temporary file left; objects
// the repository has are not written again.
func TestBatch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for _, fsync := range []bool{false, true} {
		st := NewStorer(dir, cache.NewObjectLRUDefault(), NewTreeCache(1000), fsync)
		db := NewDB(st)
		b := db.Batch()
		blob, err := b.WriteBlob([]byte("hello " + time.Now().String() + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		tree, err := b.WriteTree([]object.TreeEntry{{Name: "a.txt", Mode: filemode.Regular, Hash: blob}})
		if err != nil {
			t.Fatal(err)
		}
		commit, err := b.WriteCommit(quire.Actor{Name: "T", Email: "t@example.com"}, time.Now(), tree, plumbing.ZeroHash, "batch\n")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := b.ReadBlob(blob); err != nil || !strings.HasPrefix(string(got), "hello ") {
			t.Fatalf("read through the batch: %q %v", got, err)
		}
		if e, ok, err := b.Lookup(tree, "a.txt"); err != nil || !ok || e.Hash != blob {
			t.Fatalf("lookup through the batch: %v %v %v", e, ok, err)
		}
		if db.Has(commit) {
			t.Fatal("the repository has the commit before Flush")
		}
		// The same blob again is not written twice.
		x := []byte(fmt.Sprint("x", fsync))
		if _, err := b.WriteBlob(x); err != nil {
			t.Fatal(err)
		}
		if _, err := b.WriteBlob(x); err != nil {
			t.Fatal(err)
		}
		n, err := b.Flush()
		if err != nil || n != 4 {
			t.Fatalf("flush: %d objects, %v", n, err)
		}
		// Another reader (a fresh storer: this one's pack indexes are
		// reloaded on its next miss) finds the objects.
		fresh := NewDB(NewStorer(dir, cache.NewObjectLRUDefault(), NewTreeCache(1000), fsync))
		if !fresh.Has(commit) || !fresh.Has(blob) {
			t.Fatal("the repository lacks the objects after Flush")
		}
		if c, err := db.Commit(commit); err != nil || c.TreeHash != tree {
			t.Fatalf("read after Flush: %v %v", c, err)
		}
		if n, err := b.Flush(); err != nil || n != 0 {
			t.Fatalf("second flush: %d %v", n, err)
		}
		// A second batch of objects the repository has writes no pack.
		b2 := fresh.Batch()
		if _, err := b2.WriteBlob(x); err != nil {
			t.Fatal(err)
		}
		if n, err := b2.Flush(); err != nil || n != 0 {
			t.Fatalf("flush of known objects: %d %v", n, err)
		}
		git("update-ref", "refs/heads/main", commit.String())
		if got := git("show", "main:a.txt"); !strings.HasPrefix(got, "hello ") {
			t.Errorf("git show: %q", got)
		}
		git("fsck", "--strict")
		if got := git("count-objects", "-v"); !strings.Contains(got, "count: 0\n") {
			t.Errorf("loose objects left:\n%s", got)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "incoming-") {
				t.Errorf("temporary %s left", e.Name())
			}
		}
		packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
		idxs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
		if len(packs) != len(idxs) || len(packs) == 0 {
			t.Errorf("packs %v, indexes %v", packs, idxs)
		}
	}
	if got := git("count-objects", "-v"); !strings.Contains(got, "packs: 2\n") {
		t.Errorf("want one pack per flush:\n%s", got)
	}
}
