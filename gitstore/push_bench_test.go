package gitstore

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"testing"

	"github.com/quire/quire"
)

// BenchmarkPushReceive measures what a push costs the server before any
// ref moves: the pack read into quarantine, its object sizes checked and
// its index built (GitPush.Receive), then fsck of its commits and trees
// (Fsck). The pack is what `git push` of a 1,000-file draft with 20
// revisions sends: every object of the draft, deltas included.
//
//	go test ./gitstore -run xxx -bench PushReceive -benchtime 20x
func BenchmarkPushReceive(b *testing.B) {
	ctx := context.Background()
	s, a := benchDraft(b, 1000, false)
	for c := 1; c < 20; c++ {
		files := make([]quire.FileContent, 0, 50)
		for i := c; i < 1000; i += 20 {
			files = append(files, quire.FileContent{Path: benchPath(i), Content: []byte(fmt.Sprintf("file %d revision %d\n%s", i, c, bytes.Repeat([]byte("text "), 50)))})
		}
		if _, err := s.PutFiles(ctx, tester, a, 1, files, "", ""); err != nil {
			b.Fatal(err)
		}
	}
	cmd := exec.Command("git", "-C", s.RepoPath(a), "pack-objects", "--stdout", "--revs", "-q")
	cmd.Stdin = bytes.NewBufferString("refs/heads/draft/1\n")
	pack, err := cmd.Output()
	if err != nil {
		b.Fatal(err)
	}
	g := NewGit(s, GitOptions{})
	defer g.Close()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		p, err := g.OpenPush(a)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Receive(bytes.NewReader(pack)); err != nil {
			b.Fatal(err)
		}
		if bad, err := p.Fsck(ctx); bad != nil || err != nil {
			b.Fatal(bad, err)
		}
		p.Close()
	}
	b.StopTimer()
	reportCPU(b, cpu)
	b.ReportMetric(float64(len(pack)), "pack-bytes")
}
