package httpapi_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// reviewFixture is the git fixture (skill pdf: v1 live, draft 2) with a
// review policy and three members: alice (editor, the draft's author),
// bob (editor, the reviewer), carol (viewer). The admin owns the project.
type reviewFixture struct {
	*gitFixture
	alice, bob, carol string // session tokens
	aliceID, bobID    string
}

func newReviewFixture(t *testing.T, policy map[string]any) *reviewFixture {
	t.Helper()
	f := &reviewFixture{gitFixture: newGitFixture(t)}
	e := f.e
	t.Cleanup(func() { no5xx(t, e) })
	var carolID string
	f.aliceID, f.alice = e.CreateUser("alice@example.com")
	f.bobID, f.bob = e.CreateUser("bob@example.com")
	carolID, f.carol = e.CreateUser("carol@example.com")
	for id, role := range map[string]string{f.aliceID: "editor", f.bobID: "editor", carolID: "viewer"} {
		e.Must(200, "PUT", "/v1/projects/demo/members/"+id, e.Admin, map[string]string{"role": role})
	}
	if policy != nil {
		e.Must(200, "PATCH", "/v1/projects/demo", e.Admin, map[string]any{"review_policy": policy})
	}
	return f
}

// draft opens a draft as token from v1 and writes files into it.
func (f *reviewFixture) draft(token string, files map[string]string) int {
	f.t.Helper()
	r := f.e.Must(201, "POST", "/v1/skills/pdf/versions", token, map[string]any{"from": 1})
	n := int(get(f.t, r.JSON(f.t), "version", "version").(float64))
	for p, c := range files {
		f.e.Must(200, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/files", n), token, map[string]string{"file_path": p, "content": c})
	}
	return n
}

func (f *reviewFixture) review(num int) map[string]any {
	f.t.Helper()
	return f.e.Must(200, "GET", fmt.Sprintf("/v1/skills/pdf/reviews/%d", num), f.carol, nil).JSON(f.t)
}

// TestReviewFlow is the whole flow through the API and git: open
// a review, comment on a line, request changes, push a fix by git,
// approve, publish blocked then allowed, move the production label, and
// the repository state that records it.
func TestReviewFlow(t *testing.T) {
	f := newReviewFixture(t, map[string]any{"required_approvals": 1, "protected_labels": []string{"production"}})
	e, g := f.e, f.g

	n := f.draft(f.alice, map[string]string{"scripts/run.py": "print(1)\nprint(2)\n", "README.md": "hello\n"})
	open := e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.alice, map[string]string{"title": "Second print", "description": "adds a line"}).JSON(t)
	rv := get(t, open, "review").(map[string]any)
	if rv["number"].(float64) != 1 || rv["state"] != "open" || rv["version"].(float64) != float64(n) {
		t.Fatalf("opened review %v", rv)
	}
	if got := get(t, rv, "base", "version"); got.(float64) != 1 {
		t.Errorf("base version %v, want 1", got)
	}
	if got := get(t, rv, "author", "email"); got != "alice@example.com" {
		t.Errorf("author %v", got)
	}
	head1 := get(t, rv, "head", "commit").(string)
	wantError(t, e.Do("POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.bob, map[string]string{"title": "again"}), 409, "open review")
	wantError(t, e.Do("POST", "/v1/skills/pdf/versions/1/reviews", f.bob, map[string]string{"title": "published"}), 409, "draft")
	wantError(t, e.Do("POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.carol, map[string]string{"title": "viewer"}), 403)

	got := f.review(1)
	files := fmt.Sprint(got["files"])
	if !strings.Contains(files, "path:README.md") || !strings.Contains(files, "status:added") ||
		!strings.Contains(files, "additions:1 deletions:0 path:scripts/run.py status:modified") {
		t.Errorf("files %s", files)
	}
	if ok := get(t, got, "mergeable", "ok"); ok != false {
		t.Errorf("mergeable with no approval: %v", got["mergeable"])
	}
	for _, k := range []string{"comments", "verdicts"} {
		if l, ok := got[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s = %#v, want []", k, got[k])
		}
	}

	// Bob comments on line 2 and asks for changes.
	cm := e.Must(201, "POST", "/v1/skills/pdf/reviews/1/comments", f.bob, map[string]any{"body": "print 3?", "path": "scripts/run.py", "line": 2}).JSON(t)
	commentID := get(t, cm, "comment", "id").(string)
	if c := get(t, cm, "comment").(map[string]any); c["side"] != "head" || c["commit"] != head1 || c["outdated"] != false || c["resolved"] != false {
		t.Errorf("comment %v", c)
	}
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/comments", f.alice, map[string]any{"body": "will do", "in_reply_to": commentID})
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/request-changes", f.bob, map[string]any{"body": "needs print 3"})

	// Publishing is blocked: no approval, and changes requested.
	r := wantError(t, e.Do("POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/publish", n), f.alice, nil), 409)
	if r["code"] != "review_required" {
		t.Errorf("code %v, want review_required", r["code"])
	}
	if d := fmt.Sprint(r["details"]); !strings.Contains(d, "changes_requested_by:[bob@example.com]") || !strings.Contains(d, "required:1") || !strings.Contains(d, "approvals:0") {
		t.Errorf("details %s", d)
	}
	// Alice's own approval is recorded but does not count.
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/approve", f.alice, nil)
	wantError(t, e.Do("POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/publish", n), f.alice, nil), 409)

	// Alice pushes the fix by git: the review's head moves, her approval
	// goes stale, bob's line comment is outdated.
	w := f.clone(f.alice)
	g.must(w, "checkout", "-q", fmt.Sprintf("draft/%d", n))
	g.commitFile(w, "scripts/run.py", "print(1)\nprint(3)\n")
	g.must(w, "push", "-q", "origin", fmt.Sprintf("draft/%d", n))
	got = f.review(1)
	head2 := get(t, got, "review", "head", "commit").(string)
	if head2 == head1 {
		t.Fatalf("head did not move after the push")
	}
	c0 := get(t, got, "comments", "0").(map[string]any)
	if c0["outdated"] != true || c0["commit"] != head1 || c0["line"].(float64) != 2 {
		t.Errorf("line comment after the push: %v", c0)
	}
	for _, v := range got["verdicts"].([]any) {
		v := v.(map[string]any)
		if v["stale"] != true {
			t.Errorf("verdict on the old head not stale: %v", v)
		}
	}
	if l := got["comments"].([]any); len(l) != 2 || get(t, l[1], "in_reply_to") != commentID {
		t.Errorf("comments %v", l)
	}
	e.Must(200, "PATCH", "/v1/skills/pdf/reviews/1/comments/"+commentID, f.alice, map[string]any{"resolved": true})
	wantError(t, e.Do("PATCH", "/v1/skills/pdf/reviews/1/comments/"+commentID, f.alice, map[string]any{"body": "not mine"}), 403)

	// Bob approves the new head: his request for changes is replaced.
	v := e.Must(201, "POST", "/v1/skills/pdf/reviews/1/approve", f.bob, map[string]any{"body": "lgtm"}).JSON(t)
	if get(t, v, "verdict", "commit") != head2 || get(t, v, "verdict", "stale") != false || get(t, v, "verdict", "kind") != "approve" {
		t.Errorf("verdict %v", v)
	}
	if m := get(t, f.review(1), "mergeable").(map[string]any); m["ok"] != true {
		t.Fatalf("not mergeable after approval: %v", m)
	}
	pub := e.Must(200, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/publish", n), f.alice, nil).JSON(t)
	if get(t, pub, "version", "state") != "published" {
		t.Errorf("publish %v", pub)
	}
	got = f.review(1)
	if rv := got["review"].(map[string]any); rv["state"] != "merged" || get(t, rv, "merged_by", "email") != "alice@example.com" || rv["merged_at"] == nil {
		t.Errorf("merged review %v", rv)
	}
	wantError(t, e.Do("POST", "/v1/skills/pdf/reviews/1/approve", f.bob, nil), 409, "merged")
	list := e.Must(200, "GET", "/v1/skills/pdf/reviews?state=merged", f.carol, nil).JSON(t)
	if l := list["reviews"].([]any); len(l) != 1 {
		t.Errorf("merged reviews %v", l)
	}

	// Labels: production takes the reviewed version; v1, published with
	// no review, only by an owner's override.
	e.Must(200, "PUT", "/v1/skills/pdf/labels/staging", f.alice, map[string]any{"version": 1})
	l := e.Must(200, "PUT", "/v1/skills/pdf/labels/production", f.alice, map[string]any{"version": n}).JSON(t)
	if get(t, l, "label", "version").(float64) != float64(n) || get(t, l, "label", "moved_by") != "alice@example.com" {
		t.Errorf("label %v", l)
	}
	r = wantError(t, e.Do("PUT", "/v1/skills/pdf/labels/production", f.alice, map[string]any{"version": 1}), 409, "protected")
	if r["code"] != "review_required" {
		t.Errorf("code %v", r["code"])
	}
	wantError(t, e.Do("PUT", "/v1/skills/pdf/labels/production", f.alice, map[string]any{"version": 1, "override": true, "reason": "rollback"}), 403)
	wantError(t, e.Do("PUT", "/v1/skills/pdf/labels/production", e.Admin, map[string]any{"version": 1, "override": true}), 422, "reason")
	e.Must(200, "PUT", "/v1/skills/pdf/labels/production", e.Admin, map[string]any{"version": 1, "override": true, "reason": "rollback"})
	hist := e.Must(200, "GET", "/v1/skills/pdf/labels/production/history", f.carol, nil).JSON(t)["history"].([]any)
	if len(hist) != 2 || get(t, hist[0], "version").(float64) != 1 || get(t, hist[0], "from_version").(float64) != float64(n) ||
		get(t, hist[0], "moved_by") != testenv.AdminEmail || get(t, hist[1], "moved_by") != "alice@example.com" {
		t.Errorf("history %v", hist)
	}
	labels := e.Must(200, "GET", "/v1/skills/pdf/labels", f.carol, nil).JSON(t)["labels"].([]any)
	if len(labels) != 2 || get(t, labels[0], "name") != "production" || get(t, labels[1], "name") != "staging" {
		t.Errorf("labels %v", labels)
	}

	// The repository: review and label refs, strict fsck, the review's
	// log authored by who acted.
	refs := f.serverRefs()
	v1 := f.version(1)["commit"].(string)
	for _, want := range []string{" refs/reviews/1", " refs/meta/labels", v1 + " refs/labels/production", v1 + " refs/labels/staging"} {
		if !strings.Contains(refs, want) {
			t.Errorf("refs lack %q:\n%s", want, refs)
		}
	}
	f.fsck()
	authors := testenv.Git(t, f.repo(), "log", "--format=%ae %s", "refs/reviews/1")
	for _, want := range []string{
		"alice@example.com Merge review 1: publish version 3",
		"bob@example.com Approve review 1",
		"alice@example.com Resolve comment",
		"alice@example.com Approve review 1",
		"bob@example.com Request changes on review 1",
		"bob@example.com Comment on review 1 at scripts/run.py:2",
		"alice@example.com Open review 1 of draft 3: Second print",
	} {
		if !strings.Contains(authors, want) {
			t.Errorf("review log lacks %q:\n%s", want, authors)
		}
	}
	if got := testenv.Git(t, f.repo(), "log", "--format=%ae", "refs/meta/labels"); got != testenv.AdminEmail+"\nalice@example.com\nalice@example.com" {
		t.Errorf("label log authors:\n%s", got)
	}

	// Clients fetch them on request, a mirror carries them; nobody pushes them.
	w2 := f.clone(f.carol)
	if out := g.must(w2, "for-each-ref", "--format=%(refname)"); strings.Contains(out, "refs/reviews") || strings.Contains(out, "refs/labels") {
		t.Errorf("a plain clone fetched review or label refs:\n%s", out)
	}
	g.must(w2, "fetch", "-q", "origin", "refs/reviews/*:refs/reviews/*", "refs/labels/*:refs/labels/*")
	if out := g.must(w2, "log", "--format=%s", "-1", "refs/reviews/1"); !strings.HasPrefix(out, "Merge review 1") {
		t.Errorf("fetched review tip %q", out)
	}
	if out := g.must(w2, "show", "refs/reviews/1:review.json"); !strings.Contains(out, `"state": "merged"`) {
		t.Errorf("review.json:\n%s", out)
	}
	if got := g.must(w2, "rev-parse", "refs/labels/production"); got != v1 {
		t.Errorf("fetched production label %s, want %s", got, v1)
	}
	mirror := filepath.Join(t.TempDir(), "m.git")
	g.must(t.TempDir(), "clone", "-q", "--mirror", g.url(f.carol, "demo/skills/pdf.git"), mirror)
	if out := g.must(mirror, "for-each-ref", "--format=%(refname)"); !strings.Contains(out, "refs/reviews/1") || !strings.Contains(out, "refs/meta/labels") {
		t.Errorf("mirror lacks review refs:\n%s", out)
	}
	g.must(mirror, "fsck", "--strict")
	g.must(w2, "commit", "-q", "--allow-empty", "-m", "forged")
	before := f.serverRefs()
	for _, ref := range []string{"refs/reviews/1", "refs/labels/production", "refs/meta/labels", "refs/reviews/9"} {
		out := g.fails(w2, "push", g.url(e.Admin, "demo/skills/pdf.git"), "+HEAD:"+ref)
		if !strings.Contains(out, "rejected") {
			t.Errorf("push to %s: %s", ref, out)
		}
	}
	if after := f.serverRefs(); after != before {
		t.Errorf("refused pushes changed refs:\n%s\nwas\n%s", after, before)
	}
}
