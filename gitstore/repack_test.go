package gitstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quire/quire/gitstore/odb"

	"github.com/quire/quire"
)

// TestRepackThreshold: objectCounts agrees with git count-objects, and a
// repository whose loose objects are few beside those packed is left
// alone until they reach an eighth of them.
func TestRepackThreshold(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	var files []quire.FileContent
	for i := range 400 {
		files = append(files, quire.FileContent{Path: fmt.Sprintf("f%03d.md", i), Content: []byte(fmt.Sprintf("file %d\n", i))})
	}
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, files); err != nil {
		t.Fatal(err)
	}
	dir := s.RepoPath(a)
	gitCLI(t, dir, "gc", "-q")
	counts := func() (packs, packed, loose int) {
		t.Helper()
		packs, packed, loose, err := odb.ObjectCounts(dir)
		if err != nil {
			t.Fatal(err)
		}
		return packs, packed, loose
	}
	git := map[string]int{}
	for _, line := range strings.Split(gitCLI(t, dir, "count-objects", "-v"), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		git[k], _ = strconv.Atoi(v)
	}
	if packs, packed, loose := counts(); packs != git["packs"] || packed != git["in-pack"] || loose != git["count"] || packed < 400 {
		t.Fatalf("objectCounts = %d packs, %d packed, %d loose; git count-objects says %v", packs, packed, loose, git)
	}
	g := NewGit(s, GitOptions{RepackLoose: 1, RepackPacks: 4, RepackDelay: time.Hour}) // no background repack
	defer g.Close()
	_, packed, _ := counts()
	for i := 0; ; i++ {
		if _, err := s.PutFiles(ctx, tester, a, 1, []quire.FileContent{{Path: "extra.md", Content: []byte(fmt.Sprint(i))}}, "", ""); err != nil {
			t.Fatal(err)
		}
		_, _, loose := counts()
		repacked, err := g.maybeRepack(dir)
		if err != nil {
			t.Fatal(err)
		}
		if repacked != (loose >= packed/8) {
			t.Fatalf("with %d loose beside %d packed, repacked = %v", loose, packed, repacked)
		}
		if repacked {
			break
		}
	}
	if packs, _, loose := counts(); packs != 1 || loose != 0 {
		t.Fatalf("after the repack: %d packs, %d loose", packs, loose)
	}
	gitCLI(t, dir, "fsck", "--strict")
	if got := gitCLI(t, dir, "show", "draft/1:f399.md"); got != "file 399" {
		t.Fatalf("f399.md = %q", got)
	}
}

// TestStreamedRepack: a repository past RepackDeltaBytes is repacked by
// streaming its objects into one pack: every object is there, the deltas
// git made are kept, and git fsck is clean.
func TestStreamedRepack(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	big := strings.Repeat("line of a longer file\n", 400)
	var files []quire.FileContent
	for i := range 30 {
		files = append(files, quire.FileContent{Path: fmt.Sprintf("f%02d.md", i), Content: []byte(big + fmt.Sprint(i))})
	}
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, files); err != nil {
		t.Fatal(err)
	}
	dir := s.RepoPath(a)
	gitCLI(t, dir, "repack", "-q", "-a", "-d", "-f", "--window=10") // similar blobs: deltas
	for i := range 5 {
		if _, err := s.PutFiles(ctx, tester, a, 1, []quire.FileContent{{Path: fmt.Sprintf("new%d.md", i), Content: []byte(big)}}, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	before := gitCLI(t, dir, "rev-list", "--objects", "--all")
	g := NewGit(s, GitOptions{RepackDeltaBytes: 1, RepackDelay: time.Hour})
	defer g.Close()
	if err := g.Repack(dir); err != nil {
		t.Fatal(err)
	}
	packs, _, loose, err := odb.ObjectCounts(dir)
	if err != nil || packs != 1 || loose != 0 {
		t.Fatalf("after the repack: %d packs, %d loose (%v)", packs, loose, err)
	}
	gitCLI(t, dir, "fsck", "--strict")
	if after := gitCLI(t, dir, "rev-list", "--objects", "--all"); after != before {
		t.Fatal("objects reachable before the repack differ from after it")
	}
	idx, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
	deltas := 0 // entries with a depth and a base: "<id> blob <size> <packed> <offset> <depth> <base>"
	for _, line := range strings.Split(gitCLI(t, dir, "verify-pack", "-v", idx[0]), "\n") {
		if len(strings.Fields(line)) == 7 {
			deltas++
		}
	}
	if deltas < 10 {
		t.Errorf("%d deltas in the streamed pack; git's were not kept", deltas)
	}
	fs, err := s.Files(ctx, a, 1)
	if err != nil || len(fs) != 35 {
		t.Fatalf("%d files after the repack (%v)", len(fs), err)
	}
}

// TestRepackRetiresOldPacks: the packs a repack replaces are moved aside,
// still readable (a reader on another host may have them mapped), with
// the time in their names, and a repack after retiredFor removes them.
func TestRepackRetiresOldPacks(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, []quire.FileContent{{Path: "a.md", Content: []byte("a\n")}}); err != nil {
		t.Fatal(err)
	}
	dir := s.RepoPath(a)
	gitCLI(t, dir, "gc", "-q")
	old, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.pack"))
	if len(old) != 1 {
		t.Fatalf("packs after git gc: %v", old)
	}
	if _, err := s.PutFiles(ctx, tester, a, 1, []quire.FileContent{{Path: "b.md", Content: []byte("b\n")}}, "", ""); err != nil {
		t.Fatal(err)
	}
	g := NewGit(s, GitOptions{RepackDelay: time.Hour})
	defer g.Close()
	if err := g.Repack(dir); err != nil {
		t.Fatal(err)
	}
	retired, _ := filepath.Glob(filepath.Join(dir, "quire-retired", "*-"+filepath.Base(old[0])))
	if len(retired) != 1 {
		t.Fatalf("the replaced pack %s is not in quire-retired: %v", filepath.Base(old[0]), retired)
	}
	if _, err := os.Stat(old[0]); !os.IsNotExist(err) {
		t.Fatalf("the replaced pack is still in objects/pack: %v", err)
	}
	gitCLI(t, dir, "fsck", "--strict")
	if got := gitCLI(t, dir, "show", "draft/1:a.md"); got != "a" {
		t.Fatalf("a.md = %q", got)
	}
	// Age the retirement past retiredFor by renaming it, and repack again.
	name := filepath.Base(retired[0])
	_, rest, _ := strings.Cut(name, "-")
	aged := filepath.Join(dir, "quire-retired", strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)+"-"+rest)
	if err := os.Rename(retired[0], aged); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutFiles(ctx, tester, a, 1, []quire.FileContent{{Path: "c.md", Content: []byte("c\n")}}, "", ""); err != nil {
		t.Fatal(err)
	}
	if err := g.Repack(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(aged); !os.IsNotExist(err) {
		t.Fatalf("a pack retired an hour ago is still there: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "quire-retired", "*.pack"))
	if len(left) != 1 {
		t.Fatalf("the pack the second repack replaced should be retired, the first removed: %v", left)
	}
}

// TestRepackDecidesByInflatedSize: whether a repository is delta-searched
// (which holds its objects in memory, inflated) is decided by what its
// objects inflate to, not by what they take on disk: eight near-identical
// 1 MiB files take a few KiB compressed but 8 MiB inflated, past a 4 MiB
// RepackDeltaBytes, so they are streamed (no delta computed) and fsck is
// clean.
func TestRepackDecidesByInflatedSize(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	var files []quire.FileContent
	for i := range 8 {
		files = append(files, quire.FileContent{Path: fmt.Sprintf("z%d.bin", i), Content: []byte(strings.Repeat("a", 1<<20-16) + fmt.Sprintf("%016d", i))})
	}
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, files); err != nil {
		t.Fatal(err)
	}
	dir := s.RepoPath(a)
	g := NewGit(s, GitOptions{RepackDeltaBytes: 4 << 20, RepackDelay: time.Hour})
	defer g.Close()
	if err := g.Repack(dir); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, dir, "fsck", "--strict")
	idx, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("%d packs after the repack", len(idx))
	}
	deltas := 0
	for _, line := range strings.Split(gitCLI(t, dir, "verify-pack", "-v", idx[0]), "\n") {
		if len(strings.Fields(line)) == 7 {
			deltas++
		}
	}
	if deltas != 0 {
		t.Errorf("%d deltas computed for a repository inflating past RepackDeltaBytes", deltas)
	}
}
