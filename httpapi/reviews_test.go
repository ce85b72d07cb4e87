package httpapi_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
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
	if log := testenv.Git(t, f.repo(), "log", "-1", "--format=%B", "refs/meta/labels"); !strings.Contains(log, "Override: rollback") {
		t.Errorf("label move commit:\n%s", log)
	}
	hist := e.Must(200, "GET", "/v1/skills/pdf/labels/production/history", f.carol, nil).JSON(t)["history"].([]any)
	if len(hist) != 2 || get(t, hist[0], "version").(float64) != 1 || get(t, hist[0], "from_version").(float64) != float64(n) ||
		get(t, hist[0], "moved_by") != testenv.AdminEmail || get(t, hist[1], "moved_by") != "alice@example.com" {
		t.Errorf("history %v", hist)
	}
	labels := e.Must(200, "GET", "/v1/skills/pdf/labels", f.carol, nil).JSON(t)["labels"].([]any)
	if len(labels) != 2 || get(t, labels[0], "name") != "production" || get(t, labels[1], "name") != "staging" {
		t.Errorf("labels %v", labels)
	}

	// History and the project's activity feed show review events and
	// label moves with who acted.
	hist2 := fmt.Sprint(e.Must(200, "GET", "/v1/skills/pdf/history?limit=500", f.carol, nil).JSON(t)["commits"])
	for _, want := range []string{"email:bob@example.com id:", "message:Approve review 1", "message:Move label production to version 1 from version 3", "ref:refs/reviews/1", "ref:refs/meta/labels"} {
		if !strings.Contains(hist2, want) {
			t.Errorf("history lacks %q:\n%s", want, hist2)
		}
	}
	act := string(e.Must(200, "GET", "/v1/projects/demo/activity?limit=500", f.carol, nil).Body)
	if !strings.Contains(act, "Request changes on review 1") || !strings.Contains(act, "Move label staging to version 1") {
		t.Errorf("activity lacks review events:\n%s", act)
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
		fmt.Sprintf("alice@example.com Move head of review 1 from %s to %s", head1[:12], head2[:12]),
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

// TestReviewBadInput: every malformed or impossible request is a clear
// 4xx, and none writes to the repository.
func TestReviewBadInput(t *testing.T) {
	f := newReviewFixture(t, nil)
	e := f.e
	n := f.draft(f.alice, map[string]string{"a.txt": "one\ntwo\n"})
	e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.alice, map[string]string{"title": "t"})
	big := strings.Repeat("x", 64<<10+1)
	refs := f.serverRefs()
	rp := "/v1/skills/pdf/reviews/1"
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		msg                string
	}{
		{"version not a number", "POST", "/v1/skills/pdf/versions/abc/reviews", map[string]string{"title": "t"}, 400, "version"},
		{"no title", "POST", "/v1/skills/pdf/versions/2/reviews", map[string]string{}, 400, "title"},
		{"blank title", "POST", "/v1/skills/pdf/versions/2/reviews", map[string]string{"title": "  "}, 400, "title"},
		{"unknown version", "POST", "/v1/skills/pdf/versions/99/reviews", map[string]string{"title": "t"}, 404, "version"},
		{"description too large", "POST", "/v1/skills/pdf/versions/2/reviews", map[string]string{"title": "t", "description": big}, 413, "description"},
		{"malformed JSON", "POST", rp + "/comments", "{", 400, ""},
		{"unknown review", "GET", "/v1/skills/pdf/reviews/99", nil, 404, "review"},
		{"review not a number", "GET", "/v1/skills/pdf/reviews/x", nil, 400, "review number"},
		{"review zero", "GET", "/v1/skills/pdf/reviews/0", nil, 400, "review number"},
		{"bad state filter", "GET", "/v1/skills/pdf/reviews?state=done", nil, 400, "state"},
		{"comment on unknown review", "POST", "/v1/skills/pdf/reviews/99/comments", map[string]any{"body": "x"}, 404, "review"},
		{"comment without body", "POST", rp + "/comments", map[string]any{"path": "a.txt"}, 400, "body"},
		{"comment with empty body", "POST", rp + "/comments", map[string]any{"body": ""}, 400, "body"},
		{"comment too large", "POST", rp + "/comments", map[string]any{"body": big}, 413, "body"},
		{"comment on missing path", "POST", rp + "/comments", map[string]any{"body": "x", "path": "nope.txt", "line": 1}, 422, "nope.txt"},
		{"comment on missing line", "POST", rp + "/comments", map[string]any{"body": "x", "path": "a.txt", "line": 3}, 422, "line 3"},
		{"comment on missing base path", "POST", rp + "/comments", map[string]any{"body": "x", "path": "a.txt", "line": 1, "side": "base"}, 422, "a.txt"},
		{"negative line", "POST", rp + "/comments", map[string]any{"body": "x", "path": "a.txt", "line": -1}, 400, "line"},
		{"line without path", "POST", rp + "/comments", map[string]any{"body": "x", "line": 1}, 400, "path"},
		{"line as a string", "POST", rp + "/comments", map[string]any{"body": "x", "path": "a.txt", "line": "1"}, 400, "line"},
		{"bad side", "POST", rp + "/comments", map[string]any{"body": "x", "path": "a.txt", "line": 1, "side": "left"}, 400, "side"},
		{"bad path", "POST", rp + "/comments", map[string]any{"body": "x", "path": "../a.txt"}, 400, ""},
		{"reply to unknown comment", "POST", rp + "/comments", map[string]any{"body": "x", "in_reply_to": "nope"}, 422, "nope"},
		{"patch unknown comment", "PATCH", rp + "/comments/nope", map[string]any{"resolved": true}, 404, "comment"},
		{"patch nothing", "PATCH", rp + "/comments/nope", map[string]any{}, 400, "resolved"},
		{"request changes without body", "POST", rp + "/request-changes", nil, 400, "body"},
		{"verdict body too large", "POST", rp + "/approve", map[string]any{"body": big}, 413, "body"},
		{"reopen an open review", "POST", rp + "/reopen", nil, 409, "closed"},
		{"label live", "PUT", "/v1/skills/pdf/labels/live", map[string]any{"version": 1}, 422, "reserved"},
		{"label upper case", "PUT", "/v1/skills/pdf/labels/Prod", map[string]any{"version": 1}, 422, "label name"},
		{"label too long", "PUT", "/v1/skills/pdf/labels/" + strings.Repeat("a", 33), map[string]any{"version": 1}, 422, "label name"},
		{"label without version", "PUT", "/v1/skills/pdf/labels/prod", map[string]any{}, 400, "version"},
		{"label version zero", "PUT", "/v1/skills/pdf/labels/prod", map[string]any{"version": 0}, 400, "version"},
		{"label on a draft", "PUT", "/v1/skills/pdf/labels/prod", map[string]any{"version": 2}, 409, "published"},
		{"label on unknown version", "PUT", "/v1/skills/pdf/labels/prod", map[string]any{"version": 99}, 404, "version"},
		{"delete unknown label", "DELETE", "/v1/skills/pdf/labels/prod", nil, 404, "label"},
		{"history of unknown label", "GET", "/v1/skills/pdf/labels/prod/history", nil, 404, "label"},
		{"policy over 10", "PATCH", "/v1/projects/demo", map[string]any{"review_policy": map[string]any{"required_approvals": 11}}, 422, "required_approvals"},
		{"policy negative", "PATCH", "/v1/projects/demo", map[string]any{"review_policy": map[string]any{"required_approvals": -1}}, 422, "required_approvals"},
		{"policy bad label", "PATCH", "/v1/projects/demo", map[string]any{"review_policy": map[string]any{"protected_labels": []string{"Prod"}}}, 422, "protected_labels"},
		{"override without reason", "POST", "/v1/skills/pdf/versions/2/publish", map[string]any{"override": true}, 422, "reason"},
		{"publish body malformed", "POST", "/v1/skills/pdf/versions/2/publish", "{", 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.Do(tc.method, tc.path, e.Admin, tc.body), tc.status, tc.msg)
		})
	}
	if after := f.serverRefs(); after != refs {
		t.Errorf("refused requests changed refs:\n%s\nwas\n%s", after, refs)
	}
	f.fsck()
}

// TestReviewLifecycle: deleting a draft closes its review, a new review
// can then be opened on another draft, stale approvals count when the
// policy keeps them, self-approval counts when allowed, and an owner's
// override is recorded on the review.
func TestReviewLifecycle(t *testing.T) {
	f := newReviewFixture(t, map[string]any{"required_approvals": 1, "dismiss_stale": false, "allow_self_approval": true})
	e := f.e
	n := f.draft(f.alice, map[string]string{"a.txt": "one\n"})
	e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.alice, map[string]string{"title": "gone soon"})
	e.Must(204, "DELETE", fmt.Sprintf("/v1/skills/pdf/versions/%d", n), f.alice, nil)
	if rv := get(t, f.review(1), "review").(map[string]any); rv["state"] != "closed" || get(t, rv, "closed_by", "email") != "alice@example.com" {
		t.Errorf("review of a deleted draft: %v", rv)
	}
	wantError(t, e.Do("POST", "/v1/skills/pdf/reviews/1/reopen", f.alice, nil), 409, "draft")

	n = f.draft(f.alice, map[string]string{"a.txt": "one\n"})
	rv := get(t, e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.alice, map[string]string{"title": "second"}).JSON(t), "review").(map[string]any)
	if rv["number"].(float64) != 2 {
		t.Errorf("second review numbered %v", rv["number"])
	}
	// Self-approval counts here; with dismiss_stale off, so does an
	// approval of an older head.
	e.Must(201, "POST", "/v1/skills/pdf/reviews/2/approve", f.alice, nil)
	e.Must(200, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/files", n), f.alice, map[string]string{"file_path": "a.txt", "content": "two\n"})
	m := get(t, f.review(2), "mergeable").(map[string]any)
	if m["ok"] != true || m["approvals"].(float64) != 1 {
		t.Errorf("mergeable %v", m)
	}
	if v := get(t, f.review(2), "verdicts", "0").(map[string]any); v["stale"] != true {
		t.Errorf("verdict after a new commit: %v", v)
	}

	// With the default policy an approval of an old head stops counting;
	// the owner overrides, and the review says so.
	e.Must(200, "PATCH", "/v1/projects/demo", e.Admin, map[string]any{"review_policy": map[string]any{"required_approvals": 1}})
	r := wantError(t, e.Do("POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/publish", n), f.alice, nil), 409)
	if d := fmt.Sprint(r["details"]); !strings.Contains(d, "stale:1") || !strings.Contains(d, "approvals:0") {
		t.Errorf("details %s", d)
	}
	e.Must(200, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/publish", n), e.Admin, map[string]any{"override": true, "reason": "hotfix"})
	rv = get(t, f.review(2), "review").(map[string]any)
	if rv["state"] != "merged" || get(t, rv, "override", "reason") != "hotfix" || get(t, rv, "override", "by", "email") != testenv.AdminEmail {
		t.Errorf("overridden review %v", rv)
	}
	if log := testenv.Git(t, f.repo(), "log", "-1", "--format=%B", "refs/reviews/2"); !strings.Contains(log, "Override: hotfix") {
		t.Errorf("merge commit:\n%s", log)
	}
	if h := string(e.Must(200, "GET", "/v1/skills/pdf/history", f.carol, nil).Body); !strings.Contains(h, `Merge review 2: publish version 4\n\nOverride: hotfix`) {
		t.Errorf("history lacks the override:\n%.2000s", h)
	}
	// The project shows its policy with defaults filled.
	p := e.Must(200, "GET", "/v1/projects/demo", f.carol, nil).JSON(t)
	if get(t, p, "project", "review_policy", "required_approvals").(float64) != 1 {
		t.Errorf("project %v", p)
	}

	// Prompts have reviews too.
	e.CreatePrompt(e.Admin, f.pid, "greet")
	e.Must(201, "POST", "/v1/prompts/greet/versions", f.alice, nil)
	e.Must(201, "POST", "/v1/prompts/greet/versions/1/reviews", f.alice, map[string]string{"title": "first prompt"})
	if l := e.Must(200, "GET", "/v1/prompts/greet/reviews?state=open", f.carol, nil).JSON(t)["reviews"].([]any); len(l) != 1 {
		t.Errorf("prompt reviews %v", l)
	}
}

// TestReviewConcurrency: 64 comments and verdicts sent at once on one
// review all land, and two publishes racing one approved draft leave
// exactly one winner.
func TestReviewConcurrency(t *testing.T) {
	f := newReviewFixture(t, map[string]any{"required_approvals": 1})
	e := f.e
	n := f.draft(f.alice, map[string]string{"a.txt": "one\n"})
	e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.alice, map[string]string{"title": "busy"})
	// Eight reviewers give verdicts; the rest of the 64 are comments.
	var reviewers []string
	for i := 0; i < 8; i++ {
		id, tok := e.CreateUser(fmt.Sprintf("rev%d@example.com", i))
		e.Must(200, "PUT", "/v1/projects/demo/members/"+id, e.Admin, map[string]string{"role": "editor"})
		reviewers = append(reviewers, tok)
	}
	const total = 64
	statuses := make([]int, total)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < total; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var r *testenv.Response
			if i < len(reviewers) {
				r = e.Do("POST", "/v1/skills/pdf/reviews/1/approve", reviewers[i], nil)
			} else {
				r = e.Do("POST", "/v1/skills/pdf/reviews/1/comments", f.bob, map[string]any{"body": fmt.Sprintf("comment %d", i), "path": "a.txt", "line": 1})
			}
			statuses[i] = r.Status
		}()
	}
	close(start)
	wg.Wait()
	for i, s := range statuses {
		if s != 201 {
			t.Errorf("request %d answered %d", i, s)
		}
	}
	got := f.review(1)
	if c, v := len(got["comments"].([]any)), len(got["verdicts"].([]any)); c != total-len(reviewers) || v != len(reviewers) {
		t.Errorf("%d comments and %d verdicts landed, want %d and %d", c, v, total-len(reviewers), len(reviewers))
	}
	if commits := testenv.Git(t, f.repo(), "rev-list", "--count", "refs/reviews/1"); commits != fmt.Sprint(total+1) {
		t.Errorf("refs/reviews/1 has %s commits, want %d", commits, total+1)
	}

	// Two publishes race: one wins, the other is told the draft is gone.
	var pub [2]int
	start = make(chan struct{})
	for i := range pub {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			pub[i] = e.Do("POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/publish", n), f.alice, nil).Status
		}()
	}
	close(start)
	wg.Wait()
	if !(pub[0] == 200 && pub[1] == 409 || pub[0] == 409 && pub[1] == 200) {
		t.Errorf("racing publishes answered %v, want one 200 and one 409", pub)
	}
	if got := testenv.Git(t, f.repo(), "log", "--format=%s", "refs/reviews/1"); strings.Count(got, "Merge review 1") != 1 {
		t.Errorf("review log:\n%s", got)
	}
	f.fsck()
}

// TestReviewPushOptions: git push -o review opens a review of the pushed
// draft (or keeps its open one), -o review.title=… sets its title, and
// the push answers with the review's URL in git's remote: lines.
func TestReviewPushOptions(t *testing.T) {
	f := newReviewFixture(t, nil)
	e, g := f.e, f.g
	n := f.draft(f.alice, map[string]string{"a.txt": "one\n"})
	w := f.clone(f.alice)
	g.must(w, "checkout", "-q", fmt.Sprintf("draft/%d", n))
	g.commitFile(w, "a.txt", "two\n")
	out := g.must(w, "push", "-o", "review", "-o", "review.title=From the command line", "origin", fmt.Sprintf("draft/%d", n))
	want := fmt.Sprintf("remote: quire: review 1 of draft %d opened: %s/v1/skills/%s/reviews/1", n, e.URL, f.sid)
	if !strings.Contains(out, want) {
		t.Fatalf("push output lacks %q:\n%s", want, out)
	}
	rv := get(t, f.review(1), "review").(map[string]any)
	if rv["title"] != "From the command line" || get(t, rv, "author", "email") != "alice@example.com" || rv["version"].(float64) != float64(n) {
		t.Errorf("review %v", rv)
	}
	// A second push updates the open review: its head, and its title.
	g.commitFile(w, "a.txt", "three\n")
	out = g.must(w, "push", "-o", "review.title=Renamed", "origin", fmt.Sprintf("draft/%d", n))
	if !strings.Contains(out, fmt.Sprintf("review 1 of draft %d updated", n)) {
		t.Errorf("second push:\n%s", out)
	}
	rv = get(t, f.review(1), "review").(map[string]any)
	if rv["title"] != "Renamed" || get(t, rv, "head", "commit") != g.must(w, "rev-parse", "HEAD") {
		t.Errorf("review after the second push %v", rv)
	}
	// Without the option no review is touched; a push refused for other
	// reasons opens none.
	g.commitFile(w, "a.txt", "four\n")
	if out := g.must(w, "push", "origin", fmt.Sprintf("draft/%d", n)); strings.Contains(out, "review") {
		t.Errorf("plain push mentions a review:\n%s", out)
	}
	readKey := e.CreateKey(f.alice, "read")
	g.commitFile(w, "a.txt", "five\n")
	g.fails(w, "push", "-o", "review", g.url(readKey, "demo/skills/pdf.git"), fmt.Sprintf("draft/%d", n))
	if l := e.Must(200, "GET", "/v1/skills/pdf/reviews", f.carol, nil).JSON(t)["reviews"].([]any); len(l) != 1 {
		t.Errorf("reviews %v", l)
	}
	f.fsck()
}

// TestRenderByLabel: a prompt renders the version a label names, sees a
// move at once, and refuses a label it lacks or a label with a version.
func TestRenderByLabel(t *testing.T) {
	e := newEnv(t)
	pid := e.CreateProject(e.Admin, "demo")
	e.CreatePrompt(e.Admin, pid, "greet")
	for i, text := range []string{"Hello {{name}}", "Hi {{name}}"} {
		e.Must(201, "POST", "/v1/prompts/greet/versions", e.Admin, map[string]any{"template": text})
		e.Must(200, "POST", fmt.Sprintf("/v1/prompts/greet/versions/%d/publish", i+1), e.Admin, nil)
	}
	e.Must(200, "PUT", "/v1/prompts/greet/labels/staging", e.Admin, map[string]any{"version": 1})
	render := func(body map[string]any) *testenv.Response {
		body["variables"] = map[string]any{"name": "Ann"}
		return e.Do("POST", "/v1/prompts/greet/render", e.Admin, body)
	}
	for _, tc := range []struct {
		label, want string
		version     float64
	}{{"staging", "Hello Ann", 1}, {"live", "Hi Ann", 2}} {
		r := render(map[string]any{"label": tc.label})
		if r.Status != 200 {
			t.Fatalf("render %s: %d %s", tc.label, r.Status, r.Body)
		}
		m := r.JSON(t)
		if m["rendered"] != tc.want || m["version"].(float64) != tc.version {
			t.Errorf("render %s: %v", tc.label, m)
		}
	}
	// Renders by label come from the cache's label tier; a move is seen
	// by the next render.
	hits := e.Prompts.Stats().LabelHits
	render(map[string]any{"label": "staging"})
	if got := e.Prompts.Stats().LabelHits; got != hits+1 {
		t.Errorf("label hits %d, want %d", got, hits+1)
	}
	e.Must(200, "PUT", "/v1/prompts/greet/labels/staging", e.Admin, map[string]any{"version": 2})
	if m := render(map[string]any{"label": "staging"}).JSON(t); m["rendered"] != "Hi Ann" {
		t.Errorf("render after the move: %v", m)
	}
	if r := render(map[string]any{"label": "staging"}); r.Header.Get("ETag") != `"`+r.JSON(t)["commit"].(string)+`"` {
		t.Errorf("ETag %q of a render by label", r.Header.Get("ETag"))
	}
	r := e.Do("POST", "/v1/projects/demo/prompts/greet/render", e.Admin, map[string]any{"label": "staging", "variables": map[string]any{"name": "Bo"}})
	if r.Status != 200 || r.JSON(t)["rendered"] != "Hi Bo" {
		t.Errorf("project route: %d %s", r.Status, r.Body)
	}
	wantError(t, render(map[string]any{"label": "prod"}), 404, "label prod")
	wantError(t, render(map[string]any{"label": "Prod"}), 422, "label name")
	wantError(t, render(map[string]any{"label": "staging", "version": 1}), 400, "not both")
}
