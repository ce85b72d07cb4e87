package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
	"github.com/quire/quire"
)

// TestReadBackWithGoGit writes through the store, then reads the
// repository with a go-git instance of its own, as a clone or another
// tool would: refs, tag objects, commit lineage, authors and trees.
func TestReadBackWithGoGit(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	alice := quire.Actor{Name: "Alice", Email: "alice@example.com"}
	if _, err := s.CreateVersion(ctx, alice, a, quire.Base{}, nil); err != nil {
		t.Fatal(err)
	}
	put := func(n int, path, content string) {
		t.Helper()
		if _, err := s.PutFiles(ctx, alice, a, n, []quire.FileContent{{Path: path, Content: []byte(content)}}, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	put(1, "SKILL.md", "---\nname: s\ndescription: d\n---\n")
	put(1, "lib/x.py", "x = 1\n")
	v1, err := s.PublishVersion(ctx, alice, a, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{}, nil); err != nil {
		t.Fatal(err)
	}
	put(2, "lib/x.py", "x = 2\n")
	if _, err := s.DeleteFile(ctx, tester, a, 2, "SKILL.md", ""); err != nil {
		t.Fatal(err)
	}

	repo, err := git.PlainOpen(s.RepoPath(a))
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.Head()
	if err != nil || head.Name() != "refs/heads/main" || head.Hash().String() != v1.Commit {
		t.Fatalf("HEAD %v (%v), want main at %s", head, err, v1.Commit)
	}
	// v1 is an annotated tag on the published commit, by the publisher.
	tagRef, err := repo.Reference("refs/tags/v1", false)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := repo.TagObject(tagRef.Hash())
	if err != nil {
		t.Fatalf("v1 is not an annotated tag: %v", err)
	}
	if tag.Target.String() != v1.Commit || tag.Tagger.Email != "alice@example.com" || tag.Name != "v1" {
		t.Fatalf("tag %+v", tag)
	}
	if _, err := repo.Reference("refs/heads/draft/1", false); !errors.Is(err, plumbing.ErrReferenceNotFound) {
		t.Fatalf("draft/1 after publish: %v", err)
	}
	// Draft 2: three commits on top of v1, each authored and named.
	d2, err := repo.Reference("refs/heads/draft/2", false)
	if err != nil {
		t.Fatal(err)
	}
	iter, err := repo.Log(&git.LogOptions{From: d2.Hash()})
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	iter.ForEach(func(c *object.Commit) error {
		log = append(log, c.Author.Email+" "+strings.TrimSpace(c.Message))
		return nil
	})
	want := []string{
		"tess@example.com Delete SKILL.md",
		"alice@example.com Update lib/x.py",
		"tess@example.com Open draft 2 from v1",
		"alice@example.com Add lib/x.py",
		"alice@example.com Add SKILL.md",
		"alice@example.com Open draft 1",
	}
	if strings.Join(log, "\n") != strings.Join(want, "\n") {
		t.Fatalf("log of draft/2:\n%s", strings.Join(log, "\n"))
	}
	c, _ := repo.CommitObject(d2.Hash())
	tree, _ := c.Tree()
	var files []string
	tree.Files().ForEach(func(f *object.File) error {
		content, _ := f.Contents()
		files = append(files, f.Name+"="+content)
		return nil
	})
	if strings.Join(files, ",") != "lib/x.py=x = 2\n" {
		t.Fatalf("draft/2 tree: %q", files)
	}
	// The version allocation record is on its own ref, not a branch.
	if _, err := repo.Reference(versionsRef, false); err != nil {
		t.Fatalf("no %s: %v", versionsRef, err)
	}
	gitCLI(t, s.RepoPath(a), "fsck", "--strict")
}

// TestRefUpdatesAreAtomic: readers that are not quire (the git CLI and an
// independent go-git) never miss a draft's ref while it is rewritten,
// the first trap of go-git's in-place ref writes.
func TestRefUpdatesAreAtomic(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, nil); err != nil {
		t.Fatal(err)
	}
	repo, err := git.PlainOpen(s.RepoPath(a))
	if err != nil {
		t.Fatal(err)
	}
	var done atomic.Bool
	var misses, reads atomic.Int64
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // go-git, its own storage
		defer wg.Done()
		for !done.Load() {
			reads.Add(1)
			if _, err := repo.Reference(DraftRef(1), false); err != nil {
				misses.Add(1)
			}
		}
	}()
	go func() { // the git CLI
		defer wg.Done()
		for !done.Load() {
			reads.Add(1)
			if out, err := exec.Command("git", "-C", s.RepoPath(a), "rev-parse", "--verify", "-q", "refs/heads/draft/1").Output(); err != nil || len(out) == 0 {
				misses.Add(1)
			}
		}
	}()
	for i := 0; i < 80; i++ {
		if _, err := s.PutFiles(ctx, tester, a, 1, []quire.FileContent{{Path: "f.txt", Content: []byte(fmt.Sprint(i))}}, "", ""); err != nil {
			t.Error(err)
			break
		}
	}
	done.Store(true)
	wg.Wait()
	if misses.Load() != 0 {
		t.Fatalf("%d of %d reads missed refs/heads/draft/1 during writes", misses.Load(), reads.Load())
	}
}

// TestCompareAndSwap: the storer refuses a ref update whose old value is
// stale, and a create (nil old) over an existing ref.
func TestCompareAndSwap(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	v, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.assetRepo(a)
	if err != nil {
		t.Fatal(err)
	}
	cur := plumbing.NewHash(v.Commit)
	other := plumbing.NewHash(strings.Repeat("1", 40))
	if err := r.casRef(DraftRef(1), plumbing.ZeroHash, other); !errors.Is(err, storage.ErrReferenceHasChanged) {
		t.Fatalf("create over an existing ref: %v", err)
	}
	if err := r.casRef(DraftRef(1), other, cur); !errors.Is(err, storage.ErrReferenceHasChanged) {
		t.Fatalf("stale old value: %v", err)
	}
	if err := r.casRef(DraftRef(9), cur, cur); !errors.Is(err, storage.ErrReferenceHasChanged) {
		t.Fatalf("old value for a missing ref: %v", err)
	}
	if h, _ := r.ref(DraftRef(1)); h != cur {
		t.Fatalf("draft/1 moved to %s", h)
	}
	if err := r.casRef(DraftRef(1), cur, cur); err != nil {
		t.Fatalf("matching old value: %v", err)
	}
}

// TestBoundedOpenRepositories: the pool of open repositories stays within
// MaxOpenRepos however many assets are used, and evicted ones reopen.
func TestBoundedOpenRepositories(t *testing.T) {
	ctx := context.Background()
	s, err := Open(Options{Root: t.TempDir(), MaxOpenRepos: 2})
	if err != nil {
		t.Fatal(err)
	}
	p := &quire.Project{Name: "P", Slug: "p"}
	if err := s.CreateProject(ctx, tester, p); err != nil {
		t.Fatal(err)
	}
	var assets []*quire.Asset
	for i := 0; i < 5; i++ {
		a := &quire.Asset{ProjectID: p.ID, Kind: quire.KindSkill, Name: "S", Slug: fmt.Sprint("s", i)}
		if err := s.CreateAsset(ctx, tester, a); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateVersion(ctx, tester, a, quire.Base{}, []quire.FileContent{{Path: "n", Content: []byte(a.Slug)}}); err != nil {
			t.Fatal(err)
		}
		assets = append(assets, a)
	}
	for round := 0; round < 2; round++ {
		for _, a := range assets {
			b, _, err := s.ReadFile(ctx, a, 1, "n")
			if err != nil || string(b) != a.Slug {
				t.Fatalf("read %s: %q %v", a.Slug, b, err)
			}
			n := s.open.Len()
			if n > 2 {
				t.Fatalf("%d repositories open, limit 2", n)
			}
		}
	}
}

// TestTwoStoresOneRoot: two stores (two processes) on one data root see
// each other's writes at once, and their writes to one draft serialize.
func TestTwoStoresOneRoot(t *testing.T) {
	ctx := context.Background()
	s1, s2 := twoStores(t)
	a := newTestSkill(t, s1)
	a2, err := s2.Asset(ctx, quire.KindSkill, a.ID)
	if err != nil {
		t.Fatalf("second store does not see the asset: %v", err)
	}
	if _, err := s2.CreateVersion(ctx, tester, a2, quire.Base{}, nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			st, asset := s1, a
			if i%2 == 1 {
				st, asset = s2, a2
			}
			if _, err := st.PutFiles(ctx, tester, asset, 1, []quire.FileContent{{Path: fmt.Sprint("f", i), Content: []byte("x")}}, "", ""); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	if got := gitCLI(t, s1.RepoPath(a), "rev-list", "--count", "refs/heads/draft/1"); got != "21" {
		t.Fatalf("%s commits, want 21", got)
	}
	for _, st := range []*Store{s1, s2} {
		fs, err := st.Files(ctx, a, 1)
		if err != nil || len(fs) != 20 {
			t.Fatalf("%d files (%v)", len(fs), err)
		}
	}
	// Metadata too: a rename on one store is seen by the other.
	a2.Slug = "renamed"
	if err := s2.UpdateAsset(ctx, tester, a2); err != nil {
		t.Fatal(err)
	}
	if found, _ := s1.FindAssets(ctx, quire.KindSkill, "renamed"); len(found) != 1 {
		t.Fatalf("first store finds %d assets by the new slug", len(found))
	}
	gitCLI(t, s1.RepoPath(a), "fsck", "--strict")
	gitCLI(t, s1.systemPath(), "fsck", "--strict")
}

// TestPackedRefsAndObjects: after git gc packs the refs and objects, the
// store still reads every version (the fast loose-ref path falls back to
// packed-refs) and keeps writing; fsck stays clean.
func TestPackedRefsAndObjects(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{}, []quire.FileContent{{Path: "SKILL.md", Content: []byte("one")}, {Path: "d/x", Content: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishVersion(ctx, tester, a, 1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{}, nil); err != nil {
		t.Fatal(err)
	}
	dir := s.RepoPath(a)
	gitCLI(t, dir, "gc", "--quiet", "--prune=now")
	if out := gitCLI(t, dir, "count-objects", "-v"); !strings.Contains(out, "count: 0") {
		t.Fatalf("objects still loose after gc:\n%s", out)
	}
	if refs := gitCLI(t, dir, "for-each-ref", "--format=%(refname)"); !strings.Contains(refs, "refs/heads/draft/2") {
		t.Fatalf("refs: %s", refs)
	}
	// A fresh store, so nothing comes from a cache.
	s2, err := Open(Options{Root: s.Root()})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := s2.Versions(ctx, a)
	if err != nil || len(vs) != 2 || vs[0].State != quire.StatePublished || !vs[0].Live || vs[1].State != quire.StateDraft {
		t.Fatalf("versions after gc: %+v %v", vs, err)
	}
	b, _, err := s2.ReadFile(ctx, a, 2, "d/x")
	if err != nil || string(b) != "x" {
		t.Fatalf("read after gc: %q %v", b, err)
	}
	v, err := s2.PutFiles(ctx, tester, a, 2, []quire.FileContent{{Path: "d/y", Content: []byte("y")}}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := gitCLI(t, dir, "rev-parse", "refs/heads/draft/2"); got != v.Commit {
		t.Fatalf("draft/2 is %s, the store says %s", got, v.Commit)
	}
	if _, err := s2.ArchiveVersion(ctx, tester, a, 2); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, dir, "fsck", "--strict")
}

// TestLooseObjectsAreGitObjects: objects the store writes itself (blobs,
// commits at zlib level 1, trees stored) read back with git cat-file,
// byte for byte, and carry git's permissions.
func TestLooseObjectsAreGitObjects(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	content := strings.Repeat("line of text\n", 1000)
	v, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, []quire.FileContent{{Path: "a/b/c.txt", Content: []byte(content)}, {Path: "z", Content: nil}})
	if err != nil {
		t.Fatal(err)
	}
	dir := s.RepoPath(a)
	if got := gitCLI(t, dir, "cat-file", "-p", v.Commit+":a/b/c.txt"); got+"\n" != content {
		t.Fatal("blob differs")
	}
	if got := gitCLI(t, dir, "cat-file", "-s", v.Commit+":z"); got != "0" {
		t.Fatalf("empty blob size %s", got)
	}
	if got := gitCLI(t, dir, "ls-tree", "-r", v.Commit); !strings.Contains(got, "100644 blob") || !strings.Contains(got, "\ta/b/c.txt") {
		t.Fatalf("ls-tree:\n%s", got)
	}
	if got := gitCLI(t, dir, "cat-file", "-p", v.Commit+":a"); !strings.HasPrefix(got, "040000 tree") {
		t.Fatalf("subtree entry: %s", got)
	}
	blob := gitCLI(t, dir, "rev-parse", v.Commit+":a/b/c.txt")
	fi, err := os.Stat(filepath.Join(dir, "objects", blob[:2], blob[2:]))
	if err != nil || fi.Mode().Perm() != 0o444 || fi.Size() >= int64(len(content)) {
		t.Fatalf("loose blob %v (%v): want read-only and compressed", fi, err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "objects", "*", "tmp_obj_*")); len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
	gitCLI(t, dir, "fsck", "--strict", "--full")
}

// TestConcurrentReadsOfPackedRepository: once a repository has packs
// (after a push or git gc), concurrent reads and writes must not race in
// go-git's lazily filled pack maps (run with -race). A tiny object cache
// makes every read reach the packs.
func TestConcurrentReadsOfPackedRepository(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	var files []quire.FileContent
	for i := 0; i < 40; i++ {
		files = append(files, quire.FileContent{Path: fmt.Sprint("f", i), Content: []byte(fmt.Sprint("content ", i))})
	}
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{}, files); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, s.RepoPath(a), "gc", "--quiet", "--prune=now")
	cold, err := Open(Options{Root: s.Root(), CacheBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				n := (i + g) % 40
				b, _, err := cold.ReadFile(ctx, a, 1, fmt.Sprint("f", n))
				if err != nil || string(b) != fmt.Sprint("content ", n) {
					t.Errorf("read f%d: %q %v", n, b, err)
					return
				}
				if g == 0 && i%8 == 0 {
					if _, err := cold.PutFiles(ctx, tester, a, 1, []quire.FileContent{{Path: fmt.Sprint("new", i), Content: []byte{byte(i)}}}, "", ""); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	gitCLI(t, s.RepoPath(a), "fsck", "--strict")
}
