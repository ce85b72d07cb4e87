package httpapi_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkGitManyRefs times git commands that need one ref of a
// repository holding many (the fixture plus 500 draft branches and 500
// annotated tags, as loose refs the way quire writes them), over protocol
// v0 (every ref advertised, every tag peeled) and v2 (ls-refs lists what
// the client's ref-prefixes name). Run outside -race:
//
//	go test ./httpapi -run '^$' -bench GitManyRefs -benchtime 20x
func BenchmarkGitManyRefs(b *testing.B) {
	const n = 500
	f := newGitFixture(b)
	repo := f.repo()
	var script strings.Builder
	script.WriteString("set -e\n")
	fmt.Fprintf(&script, "for i in $(seq 1000 %d); do echo \"create refs/heads/draft/$i refs/heads/draft/2\"; done | git update-ref --stdin\n", 1000+n-1)
	fmt.Fprintf(&script, "for i in $(seq 1000 %d); do git tag -a -m \"v$i\" \"v$i\" refs/heads/main; done\n", 1000+n-1)
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = repo
	cmd.Env = f.g.env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	// The server's part alone: one HTTP exchange, no git process.
	b.Run("http info/refs/v0", func(b *testing.B) {
		for b.Loop() {
			if r := f.e.Do("GET", "/git/demo/skills/pdf.git/info/refs?service=git-upload-pack", f.e.Admin, nil); r.Status != 200 {
				b.Fatal(r.Status)
			}
		}
	})
	b.Run("http ls-refs main/v2", func(b *testing.B) {
		body := pkt("command=ls-refs\n", "0001", "peel\n", "symrefs\n", "ref-prefix refs/heads/main\n", "0000")
		for b.Loop() {
			if r := f.e.Do("POST", "/git/demo/skills/pdf.git/git-upload-pack", f.e.Admin, body, "Git-Protocol: version=2", "Content-Type: application/x-git-upload-pack-request"); r.Status != 200 {
				b.Fatal(r.Status)
			}
		}
	})
	url := f.g.url(f.e.Admin, "demo/skills/pdf.git")
	for _, proto := range []string{"0", "2"} {
		g := f.g.withProtocol(proto)
		w := filepath.Join(b.TempDir(), "w")
		g.must(filepath.Dir(w), "clone", "-q", "--bare", url, w)
		for _, c := range []struct {
			name string
			args []string
		}{
			{"ls-remote main", []string{"ls-remote", url, "refs/heads/main"}},
			{"ls-remote --heads", []string{"ls-remote", "--heads", url}},
			{"fetch main", []string{"fetch", "-q", "origin", "main"}},
			{"fetch --no-tags main", []string{"fetch", "-q", "--no-tags", "origin", "main"}},
		} {
			b.Run(c.name+"/v"+proto, func(b *testing.B) {
				for b.Loop() {
					g.must(w, c.args...)
				}
			})
		}
	}
}
