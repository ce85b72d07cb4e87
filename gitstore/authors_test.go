package gitstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/quire/quire"
)

// TestDraftAuthors: every kind of draft write records its principal, by
// user id, whatever email it carries; a write that changes nothing
// records no one; a draft opened before authors were recorded also
// counts its commits' author emails.
func TestDraftAuthors(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	a := newTestSkill(t, s)
	by := func(id string) quire.Actor {
		return quire.Actor{Name: id, Email: "same@example.com", UserID: id} // one email: ids decide
	}
	file := func(path, content string) []quire.FileContent {
		return []quire.FileContent{{Path: path, Content: []byte(content)}}
	}
	if _, err := s.CreateVersion(ctx, by("opener"), a, quire.Base{}, file("SKILL.md", "one\n")); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		who string
		do  func(quire.Actor) error
	}{
		{"putter", func(b quire.Actor) error {
			_, err := s.PutFiles(ctx, b, a, 1, file("a.txt", "a\n"), "", "")
			return err
		}},
		{"deleter", func(b quire.Actor) error { _, err := s.DeleteFile(ctx, b, a, 1, "a.txt", ""); return err }},
		{"replacer", func(b quire.Actor) error {
			_, err := s.ReplaceFiles(ctx, b, a, 1, file("SKILL.md", "two\n"), "", "")
			return err
		}},
		{"putter", func(b quire.Actor) error {
			_, err := s.PutFiles(ctx, b, a, 1, file("b.txt", "b\n"), "", "")
			return err
		}},
	}
	for _, st := range steps {
		if err := st.do(by(st.who)); err != nil {
			t.Fatalf("%s: %v", st.who, err)
		}
	}
	// Writes that change nothing record no one.
	if _, err := s.PutFiles(ctx, by("idle"), a, 1, file("b.txt", "b\n"), "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReplaceFiles(ctx, by("idle"), a, 1, []quire.FileContent{{Path: "SKILL.md", Content: []byte("two\n")}, {Path: "b.txt", Content: []byte("b\n")}}, "", ""); err != nil {
		t.Fatal(err)
	}
	rt, err := s.OpenReview(ctx, by("reviewer"), a, &quire.Review{Version: 1, Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"opener", "putter", "deleter", "replacer"}
	if !slices.Equal(rt.Authors, want) || len(rt.AuthorEmails) != 0 {
		t.Errorf("authors %v (emails %v), want %v", rt.Authors, rt.AuthorEmails, want)
	}
	// The record is quire's own: only refs/quire/versions holds it, and
	// each new author is one commit there.
	r, err := s.assetRepo(a)
	if err != nil {
		t.Fatal(err)
	}
	log, _, err := r.readLog()
	if err != nil {
		t.Fatal(err)
	}
	if info := log.Versions["1"]; !info.Tracked || !slices.Equal(info.Authors, want) {
		t.Errorf("versions log entry %+v", info)
	}
	if n := gitCLI(t, s.RepoPath(a), "log", "--oneline", "--grep=as an author of draft 1", string(versionsRef)); len(strings.Split(n, "\n")) != 3 {
		t.Errorf("author records on the versions log:\n%s", n)
	}

	// A draft from before the record: its commits' emails count too.
	v2, err := s.CreateVersion(ctx, quire.Actor{Name: "Old", Email: "old@example.com", UserID: "old"}, a, quire.Base{}, file("SKILL.md", "x\n"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.begin(a)
	if err != nil {
		t.Fatal(err)
	}
	log, tip, err := w.r.readLog()
	if err != nil {
		t.Fatal(err)
	}
	key := strconv.Itoa(v2.Number)
	log.Versions[key].Authors, log.Versions[key].Tracked = nil, false
	if err := w.r.writeLog(tester, s.opts.Now(), log, tip, "as an older server left it\n"); err != nil {
		t.Fatal(err)
	}
	w.done()
	rt2, err := s.OpenReview(ctx, tester, a, &quire.Review{Version: v2.Number, Title: "old"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rt2.Authors) != 0 || !slices.Equal(rt2.AuthorEmails, []string{"old@example.com"}) {
		t.Errorf("untracked draft: authors %v, emails %v", rt2.Authors, rt2.AuthorEmails)
	}
}
