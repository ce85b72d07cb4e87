package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/quire/quire/internal/bench"
)

// report collects the tables of a run and writes them as markdown.
type report struct {
	log        io.Writer
	start      time.Time
	loadStart  string
	body       bytes.Buffer
	includes   [][]byte
	passed     int
	failed     int
	goalsTotal int
}

func newReport(log io.Writer) *report {
	return &report{log: log, start: time.Now(), loadStart: bench.LoadAvg()}
}

func (r *report) logf(format string, args ...any) {
	fmt.Fprintf(r.log, "quire-bench: "+format+"\n", args...)
}

// section starts a section: a heading and what it measures.
func (r *report) section(title, text string) {
	fmt.Fprintf(&r.body, "\n## %s\n\n%s\n\n", title, strings.TrimSpace(text))
}

// row is one line of a figures table.
type row struct {
	figure          string
	quire, baseline string
	// ratio is quire / baseline, written as "0.42x"; goal is "≥ 0.50x" and
	// such, empty when the figure has none.
	ratio float64
	goal  string
	pass  bool
}

// table writes rows under the baseline's name.
func (r *report) table(baseline string, rows []row) {
	fmt.Fprintf(&r.body, "| figure | quire | %s | ratio | goal | result |\n|---|---:|---:|---:|---|---|\n", baseline)
	for _, x := range rows {
		result := ""
		if x.goal != "" {
			r.goalsTotal++
			if x.pass {
				result = "pass"
				r.passed++
			} else {
				result = "**miss**"
				r.failed++
			}
		}
		fmt.Fprintf(&r.body, "| %s | %s | %s | %.2fx | %s | %s |\n", x.figure, x.quire, x.baseline, x.ratio, x.goal, result)
		r.logf("  %-44s quire %-12s base %-12s %.2fx %s %s", x.figure, x.quire, x.baseline, x.ratio, x.goal, result)
	}
	r.body.WriteString("\n")
}

func (r *report) text(s string) { r.body.WriteString(strings.TrimSpace(s) + "\n\n") }

func (r *report) include(b []byte) { r.includes = append(r.includes, b) }

func (r *report) markdown(c *config) []byte {
	var b bytes.Buffer
	host, _ := os.Hostname()
	fmt.Fprintf(&b, `# Benchmarks

Written by `+"`make bench`"+` (`+"`go run ./cmd/quire-bench`"+`); do not edit by hand.
Every figure stands beside a baseline measured in the same run, and the
ratio between them is what to read: absolute numbers on a shared machine
drift with its other load, ratios taken minutes apart on the same cores
hold far better.

| | |
|---|---|
| date | %s |
| machine | %s, %d CPUs (runtime.NumCPU), %s/%s |
| Go | %s |
| load average at start | %s |
| load average at end | %s |
| duration | %s |
| goals | %d met, %d missed |
`, r.start.UTC().Format("2006-01-02 15:04 MST"), host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH,
		runtime.Version(), r.loadStart, bench.LoadAvg(), time.Since(r.start).Round(time.Second), r.passed, r.failed)
	fmt.Fprintf(&b, "| data roots | %s |\n", dataRootFS())
	fmt.Fprintf(&b, "| settings | hot path %s per run after %s warm-up, %d rounds; in-process benchtime %s; write runs %s, %d upserts per latency; git repository %d files, %d commits, %d rounds |\n",
		c.dur, c.warm, c.rounds, c.benchtime, c.writeDur, c.upserts, c.files, c.commits, c.gitRounds)
	b.Write(r.body.Bytes())
	for _, inc := range r.includes {
		b.WriteString("\n")
		b.Write(bytes.TrimSpace(inc))
		b.WriteString("\n")
	}
	return b.Bytes()
}

// dataRootFS names the file system the benchmarks' data roots (and the
// git CLI's) are made on, the temporary directory: creating a file, which
// every object and ref write does, costs far more on some than on others.
func dataRootFS() string {
	dir := os.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return dir + " (file system unknown)"
	}
	names := map[int64]string{0xef53: "ext4", 0x01021994: "tmpfs", 0x58465342: "xfs", 0x9123683e: "btrfs", 0x794c7630: "overlayfs"}
	name, ok := names[int64(st.Type)]
	if !ok {
		name = fmt.Sprintf("file system type %#x", st.Type)
	}
	return fmt.Sprintf("under %s (%s; TMPDIR moves them)", dir, name)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
