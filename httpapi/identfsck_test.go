package httpapi_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// TestHostileNamesMakeCleanCommits gives a user and an API key names
// (and the user an email) with a newline, CR, NUL, '<' and '>', stored
// through the store as if the API had let them through, then has them
// write: every commit and tag quire makes must pass git fsck --strict, in
// the skill's repository and in the system repository, with exactly one
// author and one committer line each.
func TestHostileNamesMakeCleanCommits(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	e := testenv.NewWith(t, testenv.Options{Root: root})
	pid := e.CreateProject(e.Admin, "demo")
	sid := e.CreateSkill(e.Admin, pid, "pdf")
	uid, tok := e.CreateUser("eve@example.com")
	e.Must(200, "POST", "/v1/projects/"+pid+"/members", e.Admin, map[string]string{"user_id": uid, "role": "owner"})
	key := e.CreateKey(tok, "write")

	const forged = "committer Mallory <mallory@example.com> 1 +0000"
	u, err := e.Store.User(ctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	u.Name = "Eve\n" + forged + "\r\x00 <x> "
	u.Email = "eve@example.com>\nauthor <m>"
	hostile := quire.Actor{Name: u.Name, Email: u.Email}
	if err := e.Store.UpdateUser(ctx, hostile, u); err != nil {
		t.Fatal(err)
	}
	keys, err := e.Store.APIKeys(ctx, uid)
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %v, %v", keys, err)
	}
	k := keys[0]
	k.Name = "ci\n" + forged + "\x00<"
	if err := e.Store.UpdateAPIKey(ctx, hostile, k); err != nil {
		t.Fatal(err)
	}

	// The user writes with a session, and with the key; then publishes.
	e.Must(201, "POST", "/v1/skills/pdf/versions", tok, nil)
	e.Must(200, "POST", "/v1/skills/pdf/versions/1/files", tok, map[string]string{"file_path": "SKILL.md", "content": testenv.SkillManifest("pdf")})
	e.Must(200, "POST", "/v1/skills/pdf/versions/1/files", key, map[string]string{"file_path": "notes.md", "content": "by key\n"})
	e.Must(200, "POST", "/v1/skills/pdf/versions/1/publish", tok, nil)

	skill := e.RepoPath(quire.KindSkill, sid)
	system := filepath.Join(root, "_system.git")
	for _, repo := range []string{skill, system} {
		testenv.Git(t, repo, "fsck", "--strict", "--no-dangling")
		for _, id := range strings.Fields(testenv.Git(t, repo, "rev-list", "--all")) {
			header, _, _ := strings.Cut(testenv.Git(t, repo, "cat-file", "commit", id), "\n\n")
			var authors, committers int
			for _, line := range strings.Split(header, "\n") {
				switch {
				case strings.HasPrefix(line, "author "):
					authors++
				case strings.HasPrefix(line, "committer "):
					committers++
				}
			}
			if authors != 1 || committers != 1 || strings.Contains(header, "Mallory <") {
				t.Errorf("%s commit %s has %d author and %d committer lines:\n%s", filepath.Base(repo), id, authors, committers, header)
			}
		}
	}
	// What the user's commits carry: the names and email, cleaned.
	name := "Eve committer Mallory mallory@example.com 1 +0000 x"
	email := "eve@example.com author m"
	for ref, want := range map[string]string{
		"refs/heads/main":   name + " (key ci committer Mallory mallory@example.com 1 +0000 ) <" + email + ">",
		"refs/heads/main~1": name + " <" + email + ">",
	} {
		if got := testenv.Git(t, skill, "log", "-1", "--format=%an <%ae>", ref); got != want {
			t.Errorf("%s: author %q, want %q", ref, got, want)
		}
	}
	if got := testenv.Git(t, skill, "for-each-ref", "--format=%(taggername) %(taggeremail)", "refs/tags/v1"); got != name+" <"+email+">" {
		t.Errorf("tagger %q", got)
	}
}
