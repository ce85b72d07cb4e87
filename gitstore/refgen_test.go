package gitstore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire/quire"
)

// publishNext opens a draft of a, writes its SKILL.md and publishes it,
// returning the new live commit.
func publishNext(t testing.TB, s *Store, a *quire.Asset) string {
	t.Helper()
	ctx := context.Background()
	v, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := manifestFor(a.Slug) + "version " + time.Now().String() + "\n"
	if _, err := s.PutFiles(ctx, tester, a, v.Number, []quire.FileContent{{Path: "SKILL.md", Content: []byte(body)}}, "", ""); err != nil {
		t.Fatal(err)
	}
	pv, err := s.PublishVersion(ctx, tester, a, v.Number, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pv.Commit
}

// liveCommit is what s answers for a's live commit in a new request.
func liveCommit(t testing.TB, s *Store, a *quire.Asset) string {
	t.Helper()
	c, err := s.LiveCommit(quire.WithReadScope(context.Background()), a)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRecentRefSeesEveryWrite: a store that remembers the refs it read
// still answers, on the very next read, with what another store on the
// same data root wrote: live commits and metadata alike.
func TestRecentRefSeesEveryWrite(t *testing.T) {
	s1, s2 := twoStores(t)
	if s1.gen.host == nil || s2.gen.host == nil {
		t.Fatal("the ref counter is not mapped")
	}
	seesEveryWrite(t, s1, s2)
}

// seesEveryWrite has two stores write in turn and each read, at once,
// what the other wrote: live commits, promotes and metadata.
func seesEveryWrite(t *testing.T, s1, s2 *Store) {
	t.Helper()
	ctx := context.Background()
	a := newTestSkill(t, s1)
	for i := 0; i < 10; i++ {
		w, r := s1, s2
		if i%2 == 1 {
			w, r = s2, s1
		}
		liveCommit(t, r, a) // remembered
		liveCommit(t, r, a)
		want := publishNext(t, w, a)
		if got := liveCommit(t, r, a); got != want {
			t.Fatalf("round %d: live commit %q, want %q just published by the other store", i, got, want)
		}
		// A promote and a metadata write each move one ref, nothing else.
		if i > 0 {
			liveCommit(t, r, a)
			pv, err := w.PromoteVersion(ctx, tester, a, i)
			if err != nil {
				t.Fatal(err)
			}
			if got := liveCommit(t, r, a); got != pv.Commit {
				t.Fatalf("round %d: live commit %q, want %q just promoted by the other store", i, got, pv.Commit)
			}
		}
		if _, err := r.Projects(quire.WithReadScope(ctx)); err != nil {
			t.Fatal(err)
		}
		p := &quire.Project{Name: "P", Slug: "p-" + string(rune('a'+i))}
		if err := w.CreateProject(ctx, tester, p); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Project(quire.WithReadScope(ctx), p.ID); err != nil {
			t.Fatalf("round %d: project just made by the other store: %v", i, err)
		}
	}
}

// TestRecentRefAcrossProcesses: another process's promote, which moves
// main and nothing else, is seen at once. The test binary runs itself as
// that process, which promotes the versions it reads from its input.
func TestRecentRefAcrossProcesses(t *testing.T) {
	if root := os.Getenv("QUIRE_REFGEN_CHILD_ROOT"); root != "" {
		s, err := Open(Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		a, err := s.Asset(ctx, quire.KindSkill, os.Getenv("QUIRE_REFGEN_CHILD_ASSET"))
		if err != nil {
			t.Fatal(err)
		}
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			n, _ := strconv.Atoi(in.Text())
			v, err := s.PromoteVersion(ctx, tester, a, n)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Printf("commit=%s\n", v.Commit)
		}
		return
	}
	s := newTestStore(t)
	a := newTestSkill(t, s)
	commits := []string{"", publishNext(t, s, a), publishNext(t, s, a)}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRecentRefAcrossProcesses$")
	cmd.Env = append(os.Environ(), "QUIRE_REFGEN_CHILD_ROOT="+s.Root(), "QUIRE_REFGEN_CHILD_ASSET="+a.ID)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	out := bufio.NewScanner(stdout)
	for _, n := range []int{1, 2, 1, 2} {
		liveCommit(t, s, a) // remembered
		fmt.Fprintln(stdin, n)
		if !out.Scan() || out.Text() != "commit="+commits[n] {
			t.Fatalf("child did not promote %d: %q", n, out.Text())
		}
		if got := liveCommit(t, s, a); got != commits[n] {
			t.Fatalf("live commit %s after another process promoted version %d (%s)", got, n, commits[n])
		}
	}
}

// TestRecentRefOutOfBand: a ref moved without the counter (git run by
// hand on the data root) is seen within refSeenFor.
func TestRecentRefOutOfBand(t *testing.T) {
	s := newTestStore(t)
	a := newTestSkill(t, s)
	first := publishNext(t, s, a)
	second := publishNext(t, s, a)
	liveCommit(t, s, a)
	gitCLI(t, s.RepoPath(a), "update-ref", "refs/heads/main", first)
	deadline := time.Now().Add(refSeenFor + 2*time.Second)
	for liveCommit(t, s, a) != first {
		if time.Now().After(deadline) {
			t.Fatalf("main moved by git to %s is still read as %s after %v", first, second, refSeenFor+2*time.Second)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWithoutRefCounter: when the counter cannot be made, every read goes
// to the ref file, and an out-of-band move is seen at once.
func TestWithoutRefCounter(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, refGenFile), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if s.gen.host != nil {
		t.Fatal("a directory was mapped as the counter")
	}
	a := newTestSkill(t, s)
	first := publishNext(t, s, a)
	publishNext(t, s, a)
	liveCommit(t, s, a)
	gitCLI(t, s.RepoPath(a), "update-ref", "refs/heads/main", first)
	if got := liveCommit(t, s, a); got != first {
		t.Fatalf("live commit %s, want %s", got, first)
	}
}

// TestRefCounterCounts: every ref change bumps the counter, and opening a
// store bumps it once.
func TestRefCounterCounts(t *testing.T) {
	s := newTestStore(t)
	a := newTestSkill(t, s)
	count := func() uint64 {
		n, ok := s.gen.load()
		if !ok {
			t.Fatal("the ref counter is not mapped")
		}
		return n
	}
	g := count()
	publishNext(t, s, a) // versions log, draft, tag, main, draft removed: at least 4
	if d := count() - g; d < 4 {
		t.Fatalf("a publish bumped the counter %d times", d)
	}
	g = count()
	s2, err := Open(Options{Root: s.Root()})
	if err != nil {
		t.Fatal(err)
	}
	if count() != g+1 {
		t.Fatalf("counter %d after another store opened, want %d", count(), g+1)
	}
	// Closed, a store reads refs from their files, and others still count.
	s2.Close()
	a2, err := s2.Asset(context.Background(), quire.KindSkill, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	liveCommit(t, s2, a2)
	want := publishNext(t, s, a)
	if got := liveCommit(t, s2, a2); got != want {
		t.Fatalf("closed store reads live commit %s, want %s", got, want)
	}
	publishNext(t, s2, a2)
	if count() < g+5 {
		t.Fatalf("a closed store's writes do not bump the counter")
	}
}

// memFeed is a change feed between stores in one test, standing for Redis
// pub/sub between hosts. With lossy set, Publish reaches nobody.
type memFeed struct {
	n     *atomic.Uint64
	lossy bool
}

func (f memFeed) Publish() {
	if !f.lossy {
		f.n.Add(1)
	}
}

func (f memFeed) Generation() (uint64, bool) { return f.n.Load(), true }

// twoHosts opens two stores on one data root as processes on two hosts
// would: each with a counter of its own (a mapped page is not shared
// between NFS clients), joined by feed.
func twoHosts(t *testing.T, feed ChangeFeed) (*Store, *Store) {
	t.Helper()
	root := t.TempDir()
	var out []*Store
	for i := range 2 {
		s, err := Open(Options{Root: root, Changes: feed, HostCounter: filepath.Join(t.TempDir(), fmt.Sprintf("host%d-refgen", i))})
		if err != nil {
			t.Fatal(err)
		}
		if s.gen.host == nil {
			t.Fatal("the host counter is not mapped")
		}
		t.Cleanup(func() { s.Close() })
		out = append(out, s)
	}
	return out[0], out[1]
}

// TestRecentRefAcrossHosts: stores that share no counter, only a change
// feed, still read at once what the other wrote.
func TestRecentRefAcrossHosts(t *testing.T) {
	s1, s2 := twoHosts(t, memFeed{n: new(atomic.Uint64)})
	seesEveryWrite(t, s1, s2)
}

// TestLostChangeMessage: when the feed loses a message, a host reads the
// old live commit for at most refSeenFor, then the new one. Without the
// bound it would read the old one until something else moved.
func TestLostChangeMessage(t *testing.T) {
	s1, s2 := twoHosts(t, memFeed{n: new(atomic.Uint64), lossy: true})
	a := newTestSkill(t, s1)
	old := publishNext(t, s1, a)
	if got := liveCommit(t, s2, a); got != old {
		t.Fatalf("live commit %s, want %s", got, old)
	}
	start := time.Now()
	want := publishNext(t, s1, a)
	stale := false
	for {
		got := liveCommit(t, s2, a)
		if got == want {
			break
		}
		stale = true
		if time.Since(start) > refSeenFor+time.Second {
			t.Fatalf("still reading %s %s after the publish of %s", got, time.Since(start), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !stale && time.Since(start) < refSeenFor/2 {
		// The remembered value may have aged out already on a slow
		// machine; on a normal run the lost message shows.
		t.Logf("the lost message did not show (%s after the publish)", time.Since(start))
	}
	t.Logf("a lost message left the other host behind for %s (bound %s)", time.Since(start).Round(time.Millisecond), refSeenFor)
}
