package gitstore

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/gitcli"
)

// The benchmarks here measure one file upsert into a draft that holds 10
// or 1,000 files: through the store (what the API does), and the same
// change made with the git CLI's plumbing, the baseline quire must beat
// by 10x. Run them with
//
//	go test ./gitstore -run xxx -bench Upsert -benchtime 2000x
//
// (TMPDIR=/dev/shm puts the repositories on tmpfs, which takes the disk's
// cost of creating files out of both sides.) Each reports wall time and
// cpu-ns/op, the CPU used per upsert by the process and its git children.
//
// Durability: with Fsync off (the default) a write is on disk in the page
// cache before it is acknowledged (objects written, ref renamed into
// place): it survives a crash of quire, not of the machine. With Fsync on
// (--fsync), objects, the ref and their directories are fsynced first, so
// it survives power loss too. The git CLI baseline does not fsync (git's
// default core.fsync), so it compares with Fsync off.

var benchSizes = []int{10, 1000}

// cpuTime is the CPU time (user and system) used so far by this process
// and its waited-for children. The machine running benchmarks may be
// busy with other work; CPU per operation is the figure that load does
// not inflate, and the benchmarks report it beside the wall time.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		syscall.Getrusage(who, &ru)
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// benchDraft opens a store with a skill whose draft 1 holds n files.
func benchDraft(b *testing.B, n int, fsync bool) (*Store, *quire.Asset) {
	b.Helper()
	ctx := context.Background()
	s, err := Open(Options{Root: b.TempDir(), Fsync: fsync})
	if err != nil {
		b.Fatal(err)
	}
	a := newTestSkill(b, s)
	files := make([]quire.FileContent, n)
	for i := range files {
		files[i] = quire.FileContent{Path: benchPath(i), Content: []byte(fmt.Sprintf("file %d\n%s", i, strings.Repeat("text ", 50)))}
	}
	if _, err := s.CreateVersion(ctx, tester, a, quire.Base{Empty: true}, files); err != nil {
		b.Fatal(err)
	}
	// Flush the set-up's writes, so the kernel's writeback of a thousand
	// new files does not run inside the timed loop.
	syscall.Sync()
	return s, a
}

func benchPath(i int) string { return fmt.Sprintf("file-%04d.md", i) }

// upsertLoop times b.N upserts of path in draft 1 of a, reporting
// allocations and CPU time per upsert.
func upsertLoop(b *testing.B, s *Store, a *quire.Asset, path string) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		f := []quire.FileContent{{Path: path, Content: []byte(fmt.Sprintf("revision %d\n", i))}}
		if _, err := s.PutFiles(ctx, tester, a, 1, f, "", ""); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, cpu)
}

func BenchmarkUpsert(b *testing.B) {
	for _, n := range benchSizes {
		for _, fsync := range []bool{false, true} {
			b.Run(fmt.Sprintf("files=%d/fsync=%v", n, fsync), func(b *testing.B) {
				s, a := benchDraft(b, n, fsync)
				path := benchPath(n / 2)
				upsertLoop(b, s, a, path)
				if got := gitCLI(b, s.RepoPath(a), "rev-list", "--count", "refs/heads/draft/1"); got != fmt.Sprint(b.N+1) {
					b.Fatalf("%s commits after %d upserts", got, b.N)
				}
			})
		}
	}
}

// BenchmarkUpsertGitCLI makes the same change with git plumbing: the blob
// (hash-object -w), the new tree through a temporary index (read-tree,
// update-index --cacheinfo, write-tree), the commit (commit-tree) and the
// compare-and-swap of the branch (update-ref with the old value).
func BenchmarkUpsertGitCLI(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			s, a := benchDraft(b, n, false)
			dir := s.RepoPath(a)
			u, err := gitcli.NewUpserter(dir, "refs/heads/draft/1", b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			path := benchPath(n / 2)
			b.ResetTimer()
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				if err := u.Upsert(path, []byte(fmt.Sprintf("revision %d\n", i))); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportCPU(b, cpu)
			if got := gitCLI(b, dir, "rev-list", "--count", "refs/heads/draft/1"); got != fmt.Sprint(b.N+1) {
				b.Fatalf("%s commits after %d upserts", got, b.N)
			}
		})
	}
}
