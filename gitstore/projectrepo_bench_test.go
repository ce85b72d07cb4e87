package gitstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quire/quire"
)

// BenchmarkProjectViewChange is the project view's side of a publish
// (quire-bench -only project measures the whole): one skill of a
// project of 20 ten-file skills gets a new live version with one file
// changed, and ApplyProjectChange records it in the view. Only the
// apply is timed; with and without fsync, and with the background
// repacker running as on a server or not at all.
func BenchmarkProjectViewChange(b *testing.B) {
	for _, fsync := range []bool{false, true} {
		for _, repack := range []bool{false, true} {
			b.Run(fmt.Sprintf("fsync=%v/repack=%v", fsync, repack), func(b *testing.B) { benchViewChange(b, fsync, repack) })
		}
	}
}

func benchViewChange(b *testing.B, fsync, repack bool) {
	ctx := context.Background()
	s, err := Open(Options{Root: b.TempDir(), Fsync: fsync})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if repack {
		g := NewGit(s, GitOptions{RepackDelay: 10 * time.Millisecond})
		defer g.Close()
	}
	first := newTestSkill(b, s)
	pr, err := s.Project(ctx, first.ProjectID)
	if err != nil {
		b.Fatal(err)
	}
	var skills []*quire.Asset
	for i := range 20 {
		a := &quire.Asset{ProjectID: pr.ID, Kind: quire.KindSkill, Name: fmt.Sprintf("S%02d", i), Slug: fmt.Sprintf("s%02d", i)}
		if err := s.CreateAsset(ctx, tester, a); err != nil {
			b.Fatal(err)
		}
		files := []quire.FileContent{{Path: "SKILL.md", Content: fmt.Appendf(nil, "---\nname: %s\ndescription: skill %d\n---\n", a.Slug, i)}}
		for f := range 9 {
			files = append(files, quire.FileContent{Path: fmt.Sprintf("file-%02d.md", f), Content: fmt.Appendf(nil, "file %d of %s\n", f, a.Slug)})
		}
		v, err := s.CreateVersion(ctx, tester, a, quire.Base{}, files)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.PublishVersion(ctx, tester, a, v.Number, nil); err != nil {
			b.Fatal(err)
		}
		skills = append(skills, a)
	}
	if _, err := s.SyncProject(ctx, tester, pr, skills, "first"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		a := skills[i%len(skills)]
		v, err := s.CreateVersion(ctx, tester, a, quire.Base{}, []quire.FileContent{{Path: "file-05.md", Content: fmt.Appendf(nil, "round %d\n", i)}})
		if err != nil {
			b.Fatal(err)
		}
		if v, err = s.PublishVersion(ctx, tester, a, v.Number, nil); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if c, err := s.ApplyProjectChange(ctx, tester, pr, skills, quire.ProjectChange{Skill: a, Slug: a.Slug, Commit: v.Commit}, "Publish"); err != nil || c == "" {
			b.Fatalf("apply: %q %v", c, err)
		}
	}
}
