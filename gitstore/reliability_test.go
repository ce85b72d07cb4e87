package gitstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quire/quire"
)

// A reader that read main before a write landed must not roll the shared
// metadata index back to that older commit: the next writer would fail
// its compare-and-swap (409 "metadata changed concurrently") and readers
// would miss records already acknowledged.
func TestMetaIndexNeverGoesBack(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	const writers, each = 4, 6
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for i := 0; i < 4; i++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Projects(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				p := &quire.Project{Name: "P", Slug: fmt.Sprintf("p-%d-%d", w, i)}
				if err := s.CreateProject(ctx, tester, p); err != nil {
					t.Errorf("create project: %v", err)
					return
				}
				if _, err := s.Project(ctx, p.ID); err != nil {
					t.Errorf("project %s just created: %v", p.Slug, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	all, err := s.Projects(ctx)
	if err != nil || len(all) != writers*each {
		t.Fatalf("%d projects (%v), want %d", len(all), err, writers*each)
	}
}

// refNames lists the refs go-git's own listing reports, the way the git
// smart-HTTP handler advertises them.
func refNames(t testing.TB, r *repo) []string {
	t.Helper()
	it, err := r.st.IterReferences()
	if err != nil {
		t.Fatalf("list refs: %v", err)
	}
	var names []string
	it.ForEach(func(ref *plumbing.Reference) error {
		names = append(names, ref.Name().String())
		return nil
	})
	return names
}

// A writer killed between creating a ref's staging file and renaming it
// leaves that file behind; so may C git (<ref>.lock). Neither may break
// ref listing or later writes once the repository is opened again.
func TestLeftoversOfKilledWriterAreCleared(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, err := Open(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	a := newTestSkill(t, s)
	for range 3 {
		if _, err := s.CreateVersion(ctx, tester, a, quire.Base{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	put := func(s *Store, n int) {
		t.Helper()
		if _, err := s.PutFiles(ctx, tester, a, n, []quire.FileContent{{Path: "SKILL.md", Content: []byte(manifestFor(a.Slug))}}, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	put(s, 1)
	put(s, 2)
	if _, err := s.PublishVersion(ctx, tester, a, 1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ArchiveVersion(ctx, tester, a, 2); err != nil {
		t.Fatal(err)
	}
	repoPath := s.RepoPath(a)
	tip := gitCLI(t, repoPath, "rev-parse", "refs/tags/v1^{commit}")
	// The crash: an empty and a full <ref>.lock, a staged ref file, and the
	// branches of drafts 1 and 2 still there although their tags were written.
	files := map[string]string{
		"refs/heads/draft/3.lock": "",
		"refs/heads/main.lock":    tip + "\n",
		"refs/tags/v9.lock":       tip + "\n",
		refTempPrefix + "12345":   tip + "\n",
		"refs/heads/draft/1":      tip + "\n",
		"refs/heads/draft/2":      gitCLI(t, repoPath, "rev-parse", "refs/tags/archive/v2^{commit}") + "\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(repoPath, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	s2, err := Open(Options{Root: root}) // the restarted process
	if err != nil {
		t.Fatal(err)
	}
	r, err := s2.assetRepo(a)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(refNames(t, r), " ")
	for _, bad := range []string{".lock", "draft/1", "draft/2"} {
		if strings.Contains(got, bad) {
			t.Errorf("refs after reopening: %s; want no %s", got, bad)
		}
	}
	if !strings.Contains(got, "refs/heads/draft/3") {
		t.Errorf("refs after reopening: %s; want draft/3 kept", got)
	}
	for name := range files {
		if strings.HasSuffix(name, ".lock") || strings.HasPrefix(name, refTempPrefix) {
			if _, err := os.Stat(filepath.Join(repoPath, name)); err == nil {
				t.Errorf("%s left in place", name)
			}
		}
	}
	for n, want := range map[int]quire.VersionState{1: quire.StatePublished, 2: quire.StateArchived, 3: quire.StateDraft} {
		if v, err := s2.Version(ctx, a, n); err != nil || v.State != want {
			t.Errorf("version %d: %v %v, want %s", n, v, err, want)
		}
	}
	put(s2, 3)
	gitCLI(t, repoPath, "fsck", "--strict")
}

// While refs are written, go-git's ref listing (what a clone sees) must
// never fail or show a staging file as a ref.
func TestRefListingDuringWrites(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{}, nil); err != nil {
		t.Fatal(err)
	}
	r, err := s.assetRepo(a)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 60 {
			f := quire.FileContent{Path: "f.txt", Content: []byte(strconv.Itoa(i))}
			if _, err := s.PutFiles(ctx, tester, a, 1, []quire.FileContent{f}, "", ""); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() { <-done }()
	for {
		select {
		case <-done:
			return
		default:
		}
		it, err := r.st.IterReferences()
		if err != nil {
			t.Errorf("list refs during a write: %v", err)
			return
		}
		it.ForEach(func(ref *plumbing.Reference) error {
			if strings.HasSuffix(ref.Name().String(), ".lock") {
				t.Errorf("listing shows %s", ref.Name())
			}
			return nil
		})
		if t.Failed() {
			return
		}
	}
}

func TestSweepLeftoversByAge(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-2 * leftoverAge)
	dirs := map[string]bool{ // path -> removed
		".init-old": true, ".init-new": false, ".trash-old": true,
		"p1/skills/.init-old": true, "p1/skills/.trash-old": true, "p1/prompts/.trash-new": false,
		"p1/skills/s.git": false,
	}
	for d, removed := range dirs {
		p := filepath.Join(root, d)
		if err := os.MkdirAll(filepath.Join(p, "objects"), 0o755); err != nil {
			t.Fatal(err)
		}
		if removed || strings.HasSuffix(d, ".git") {
			os.Chtimes(p, old, old)
		}
	}
	sweepLeftovers(root, time.Now())
	for d, removed := range dirs {
		_, err := os.Stat(filepath.Join(root, d))
		if gone := err != nil; gone != removed {
			t.Errorf("%s: removed=%v, want %v", d, gone, removed)
		}
	}
}

func manifestFor(slug string) string {
	return "---\nname: " + slug + "\ndescription: test\n---\n"
}

func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// Listing files reads each object's size. go-git's size lookup leaves the
// loose object file open until the garbage collector finalizes it, so a
// busy server listing large versions ran out of descriptors (and a data
// root could not be unmounted); the store must close what it opens.
func TestNoFileDescriptorLeak(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	var files []quire.FileContent
	for i := range 40 {
		files = append(files, quire.FileContent{Path: fmt.Sprintf("f/%d.txt", i), Content: []byte(strconv.Itoa(i))})
	}
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{}, files); err != nil {
		t.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no finalizer may close them for us
	before := openFDs(t)
	for i := range 10 {
		if _, err := s.Files(ctx, a, 1); err != nil {
			t.Fatal(err)
		}
		f := quire.FileContent{Path: "f/0.txt", Content: []byte("edit " + strconv.Itoa(i))}
		if _, err := s.PutFiles(ctx, tester, a, 1, []quire.FileContent{f}, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	if after := openFDs(t); after > before+5 {
		t.Fatalf("%d descriptors open after listing 40 files 10 times, %d before", after, before)
	}
}

// Opening a repository (for instance after the pool of open repositories
// evicted it) while its lock is held must not wait for that lock.
func TestOpenWhileLocked(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{}, nil); err != nil {
		t.Fatal(err)
	}
	path := s.RepoPath(a)
	unlock, err := s.locks.lock(path)
	if err != nil {
		t.Fatal(err)
	}
	s.forget(path)
	done := make(chan error, 1)
	go func() {
		_, err := s.Version(ctx, a, 1)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("opening a locked repository waited for its lock")
	}
	unlock()
}
