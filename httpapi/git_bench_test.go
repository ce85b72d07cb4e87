package httpapi_test

import (
	"context"
	"fmt"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/gitstore"
	"github.com/quire/quire/internal/bench"
	"github.com/quire/quire/internal/testenv"
)

// benchSkill builds the benchmark repository through the store: a skill
// whose version 1 holds files small files, written in commits commits,
// then published. It returns the skill.
func benchSkill(tb testing.TB, e *testenv.Env, files, commits int) *quire.Asset {
	tb.Helper()
	ctx := context.Background()
	pid := e.CreateProject(e.Admin, "bench")
	id := e.CreateSkill(e.Admin, pid, "big")
	a, err := e.Store.Asset(ctx, quire.KindSkill, id)
	if err != nil {
		tb.Fatal(err)
	}
	by := quire.Actor{Name: "Bench", Email: "bench@example.com"}
	if _, err := e.Store.CreateVersion(ctx, by, a, quire.Base{Empty: true}, bench.SkillFiles("big", files)); err != nil {
		tb.Fatal(err)
	}
	for c := 1; c < commits; c++ {
		if _, err := e.Store.PutFiles(ctx, by, a, 1, bench.Revision(files, c), "", fmt.Sprintf("Revision %d", c)); err != nil {
			tb.Fatal(err)
		}
	}
	e.Must(200, "POST", "/v1/skills/"+id+"/versions/1/publish", e.Admin, nil)
	return a
}

// cgitServer serves the repositories under root with C git's http-backend.
func cgitServer(tb testing.TB, root string) *httptest.Server {
	tb.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		tb.Skip("git binary not found")
	}
	h := &cgi.Handler{
		Path: gitPath,
		Args: []string{"http-backend"},
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	s := httptest.NewServer(h)
	tb.Cleanup(s.Close)
	return s
}

func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			n, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return n
		}
	}
	return -1
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// BenchmarkGitClone compares cloning a 1,000-file, 50-commit skill from
// quire and from C git's http-backend serving the same repository, bare
// and with a checkout, with the repository packed (as the background
// repacker leaves it) and loose (as API writes leave it). Every iteration
// clones once from each server, in rotating order, so disk and cache noise
// hits all of them alike; the medians and ratios are reported as metrics:
//
//	cgit-ms, quire-cold-ms (pack cache dropped first), quire-repeated-ms,
//	cold-ratio and repeated-ratio (quire / C git).
//
// C git has no pack cache, so its cold and repeated clones are the same.
// QUIRE_BENCH_TMP sets where clones go (a tmpfs keeps the disk out of it).
//
// Wall time suffers from other load on the machine, so the servers' CPU
// time per clone is reported too (*-cpu-ms): quire serves in this process
// (RUSAGE_SELF); C git serves in child processes, whose CPU is what the
// children used during its clone less what the git client alone used
// (measured during quire's clones, where the client is the only child).
//
//	go test ./httpapi -run '^$' -bench GitClone -benchtime 15x
func BenchmarkGitClone(b *testing.B) {
	for _, state := range []string{"packed", "loose"} {
		b.Run(state, func(b *testing.B) {
			e := testenv.NewWith(b, testenv.Options{Git: gitstoreOptionsNoRepack()})
			g := newGitClient(b, e)
			a := benchSkill(b, e, 1000, 50)
			repo := e.Store.RepoPath(a)
			if state == "packed" {
				if err := e.Git.Repack(repo); err != nil {
					b.Fatal(err)
				}
			}
			cg := cgitServer(b, filepath.Dir(repo))
			servers := []struct{ name, url string }{
				{"cgit", cg.URL + "/" + filepath.Base(repo)},
				{"quire-cold", g.url(e.Admin, "bench/skills/big.git")},
				{"quire-repeated", g.url(e.Admin, "bench/skills/big.git")},
			}
			for _, mode := range []string{"bare", "checkout"} {
				b.Run(mode, func(b *testing.B) {
					dir, err := os.MkdirTemp(os.Getenv("QUIRE_BENCH_TMP"), "quire-bench-")
					if err != nil {
						b.Fatal(err)
					}
					defer os.RemoveAll(dir)
					clone := func(url string) (wall, self, children time.Duration) {
						args := []string{"clone", "-q"}
						if mode == "bare" {
							args = append(args, "--bare")
						}
						s0, c0 := cpuTime(syscall.RUSAGE_SELF), cpuTime(syscall.RUSAGE_CHILDREN)
						start := time.Now()
						g.must(dir, append(args, url, "c")...)
						wall = time.Since(start)
						self, children = cpuTime(syscall.RUSAGE_SELF)-s0, cpuTime(syscall.RUSAGE_CHILDREN)-c0
						os.RemoveAll(filepath.Join(dir, "c"))
						return wall, self, children
					}
					clone(servers[2].url) // fill the pack cache once
					times := make([][]time.Duration, len(servers))
					cpu := make([][]time.Duration, len(servers))
					var client []time.Duration
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						for k := range servers {
							s := (i + k) % len(servers)
							if servers[s].name == "quire-cold" {
								e.Git.DropCaches()
							}
							wall, self, children := clone(servers[s].url)
							times[s] = append(times[s], wall)
							if s == 0 {
								cpu[s] = append(cpu[s], children)
							} else {
								cpu[s] = append(cpu[s], self)
								client = append(client, children)
							}
						}
					}
					b.StopTimer()
					med := make([]float64, len(servers))
					for s := range servers {
						med[s] = median(times[s])
						b.ReportMetric(med[s], servers[s].name+"-ms")
					}
					b.ReportMetric(med[1]/med[0], "cold-ratio")
					b.ReportMetric(med[2]/med[0], "repeated-ratio")
					cgitCPU := median(cpu[0]) - median(client)
					b.ReportMetric(cgitCPU, "cgit-cpu-ms")
					b.ReportMetric(median(cpu[1]), "quire-cold-cpu-ms")
					b.ReportMetric(median(cpu[2]), "quire-repeated-cpu-ms")
				})
			}
		})
	}
}

// cpuTime is the user and system time of who (RUSAGE_SELF or RUSAGE_CHILDREN).
func cpuTime(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// median returns the median of ds in milliseconds.
func median(ds []time.Duration) float64 {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}

// TestGitCloneMemory clones a 1,000-file skill 100 times in a row and
// checks the server's memory does not keep growing.
func TestGitCloneMemory(t *testing.T) {
	if testing.Short() || os.Getenv("QUIRE_GIT_MEMORY") == "" {
		t.Skip("set QUIRE_GIT_MEMORY=1 to run (100 clones)")
	}
	e := testenv.NewWith(t, testenv.Options{Git: gitstoreOptionsNoRepack()})
	g := newGitClient(t, e)
	a := benchSkill(t, e, 1000, 50)
	if err := e.Git.Repack(e.Store.RepoPath(a)); err != nil {
		t.Fatal(err)
	}
	url := g.url(e.Admin, "bench/skills/big.git")
	dir := t.TempDir()
	clone := func(i int) {
		dst := fmt.Sprintf("c%d", i)
		g.must(dir, "clone", "-q", "--bare", url, dst)
		os.RemoveAll(filepath.Join(dir, dst))
	}
	clone(-1) // warm up: caches filled once
	rss0, heap0 := rssKiB(), heapInUse()
	start := time.Now()
	var mid uint64
	for i := range 100 {
		if i%10 == 0 {
			e.Git.DropCaches() // every tenth clone is cold
		}
		clone(i)
		if i == 49 {
			mid = heapInUse()
		}
	}
	rss1, heap1 := rssKiB(), heapInUse()
	t.Logf("100 clones in %v; RSS %d KiB -> %d KiB; heap in use %.1f MiB -> %.1f MiB (after 50: %.1f MiB)",
		time.Since(start).Round(time.Millisecond), rss0, rss1, float64(heap0)/(1<<20), float64(heap1)/(1<<20), float64(mid)/(1<<20))
	if heap1 > mid+16<<20 {
		t.Errorf("heap grew from %d to %d bytes between clone 50 and 100", mid, heap1)
	}
}

// gitstoreOptionsNoRepack keeps the background repacker away from
// measurements: it repacks only when told.
func gitstoreOptionsNoRepack() gitstore.GitOptions {
	return gitstore.GitOptions{RepackPacks: 1 << 20, RepackLoose: 1 << 30}
}
