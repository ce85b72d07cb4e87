package httpapi_test

import (
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// TestGitHaveOracle: negotiation confirms no hidden object to a caller
// who may not read drafts (an anonymous reader of a public project): a
// have of a draft commit or one of its blobs is answered as unknown (no
// ACK), over protocol v0 and v2, while a have of a published commit is
// acknowledged. A member, who may read drafts, gets both acknowledged.
func TestGitHaveOracle(t *testing.T) {
	t.Parallel()
	e := publicFixture(t)
	e.Must(200, "PATCH", "/v1/projects/pub", e.Admin, map[string]string{"visibility": "public"})
	id := str(t, e.Must(200, "GET", "/v1/skills/pub-skill", e.Admin, nil).JSON(t), "skill", "id")
	repo := e.RepoPath(quire.KindSkill, id)
	git := func(args ...string) string { return testenv.Git(t, repo, args...) }
	live := git("rev-parse", "refs/heads/main")
	draft := git("rev-parse", "refs/heads/draft/2")
	blob := git("rev-parse", "refs/heads/draft/2:draft.md")
	url := "/git/pub/skills/pub-skill.git/git-upload-pack"
	v0 := func(token string, have string) string {
		body := pkt("want "+live+" multi_ack_detailed no-done side-band-64k ofs-delta\n", "0000", "have "+have+"\n", "0000")
		r := e.Do("POST", url, token, body, "Content-Type: application/x-git-upload-pack-request")
		if r.Status != 200 {
			t.Fatalf("v0 upload-pack: %d %s", r.Status, r.Body)
		}
		return string(r.Body)
	}
	v2 := func(token string, have string) string {
		body := pkt("command=fetch\n", "agent=test\n", "object-format=sha1\n", "0001", "want "+live+"\n", "have "+have+"\n", "0000")
		r := e.Do("POST", url, token, body, "Git-Protocol: version=2", "Content-Type: application/x-git-upload-pack-request")
		if r.Status != 200 {
			t.Fatalf("v2 upload-pack: %d %s", r.Status, r.Body)
		}
		return string(r.Body)
	}
	parent := git("rev-list", "--max-parents=0", "refs/heads/main") // published history
	for name, ask := range map[string]func(string, string) string{"v0": v0, "v2": v2} {
		for _, hidden := range []string{draft, blob} {
			if body := ask("", hidden); strings.Contains(body, "ACK "+hidden) {
				t.Errorf("%s: anonymous have of hidden %s acknowledged:\n%q", name, hidden, body)
			}
			if body := ask(e.Admin, hidden); hidden == draft && !strings.Contains(body, "ACK "+hidden) {
				t.Errorf("%s: a member's have of the draft not acknowledged:\n%q", name, body)
			}
		}
		if body := ask("", parent); !strings.Contains(body, "ACK "+parent) {
			t.Errorf("%s: anonymous have of a published commit not acknowledged:\n%q", name, body)
		}
	}
}
