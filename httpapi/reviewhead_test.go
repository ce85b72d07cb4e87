package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// TestReviewHeadMoves: every new commit of a reviewed draft -- an API
// upsert, a file delete, a whole-tree PUT, a git push, a prompt PATCH -- appends a "head
// moved" commit to its open review, authored by who moved it, so `git log
// -p refs/reviews/N` reads as the conversation; approvals of the old head
// go stale. A draft with no open review (none yet, or closed) gets no
// such commit, and deleting the draft closes the review with a
// review.closed event.
func TestReviewHeadMoves(t *testing.T) {
	f := newReviewFixture(t, map[string]any{"required_approvals": 1})
	e, g := f.e, f.g
	git := func(args ...string) string { return testenv.Git(t, f.repo(), args...) }
	reviewLog := func() string { return git("log", "--format=%ae %s", "refs/reviews/1") }
	index := func() string { return git("for-each-ref", "--format=%(refname)", "refs/quire/open-review/") }
	commit := func(r *testenv.Response) string { return get(t, r.JSON(t), "version", "commit").(string) }
	short := func(c string) string { return c[:12] }

	n := f.draft(f.alice, map[string]string{"a.txt": "one\n"})
	files := fmt.Sprintf("/v1/skills/pdf/versions/%d/files", n)
	if got := index(); got != "" {
		t.Errorf("open-review index before any review: %q", got)
	}
	head1 := get(t, e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.alice, map[string]string{"title": "moves"}).JSON(t), "review", "head", "commit").(string)
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/approve", f.bob, nil)

	// API upsert, file delete (alice), git push (bob).
	head2 := commit(e.Must(200, "POST", files, f.alice, map[string]string{"file_path": "b.txt", "content": "two\n"}))
	head3 := commit(e.Must(200, "DELETE", files+"/b.txt", f.alice, nil))
	// A whole-tree replace (PUT files, as quire push sends), by alice: the
	// draft's files as they are, a.txt changed.
	var tree []string
	for _, p := range strings.Fields(git("ls-tree", "-r", "--name-only", fmt.Sprintf("refs/heads/draft/%d", n))) {
		content := git("show", fmt.Sprintf("refs/heads/draft/%d:%s", n, p)) + "\n"
		if p == "a.txt" {
			content = "one\nthree\n"
		}
		tree = append(tree, p, content)
	}
	headPut := commit(e.Must(200, "PUT", files, f.alice, zipOf(t, tree...), "Content-Type: application/zip"))
	w := f.clone(f.bob)
	g.must(w, "checkout", "-q", fmt.Sprintf("draft/%d", n))
	head4 := g.commitFile(w, "a.txt", "one\nfour\n")
	g.must(w, "push", "-q", "origin", fmt.Sprintf("draft/%d", n))
	// Writing what is there already is no commit, so no head move.
	e.Must(200, "POST", files, f.alice, map[string]string{"file_path": "a.txt", "content": "one\nfour\n"})

	wantLog := []string{
		fmt.Sprintf("bob@example.com Move head of review 1 from %s to %s", short(headPut), short(head4)),
		fmt.Sprintf("alice@example.com Move head of review 1 from %s to %s", short(head3), short(headPut)),
		fmt.Sprintf("alice@example.com Move head of review 1 from %s to %s", short(head2), short(head3)),
		fmt.Sprintf("alice@example.com Move head of review 1 from %s to %s", short(head1), short(head2)),
		"bob@example.com Approve review 1",
		"alice@example.com Open review 1 of draft 3: moves",
	}
	if got := reviewLog(); got != strings.Join(wantLog, "\n") {
		t.Errorf("review log:\n%s\nwant\n%s", got, strings.Join(wantLog, "\n"))
	}
	if p := git("log", "-p", "-1", "refs/reviews/1"); !strings.Contains(p, `-    "commit": "`+headPut+`"`) || !strings.Contains(p, `+    "commit": "`+head4+`"`) || !strings.Contains(p, "Head: "+head4) {
		t.Errorf("head move's patch:\n%s", p)
	}
	got := f.review(1)
	if h := get(t, got, "review", "head", "commit"); h != head4 {
		t.Errorf("review head %v, want %s", h, head4)
	}
	if v := get(t, got, "verdicts", "0").(map[string]any); v["stale"] != true || v["commit"] != head1 {
		t.Errorf("approval of the first head: %v", v)
	}
	if m := get(t, got, "mergeable").(map[string]any); m["ok"] != false || m["stale"].(float64) != 1 {
		t.Errorf("mergeable %v", m)
	}
	if got := index(); got != "refs/quire/open-review/3" {
		t.Errorf("open-review index %q", got)
	}
	f.fsck()

	// Closed: a new commit is not recorded; reopened: it is again.
	e.Must(200, "POST", "/v1/skills/pdf/reviews/1/close", f.alice, nil)
	if got := index(); got != "" {
		t.Errorf("open-review index of a closed review: %q", got)
	}
	before := reviewLog()
	e.Must(200, "POST", files, f.alice, map[string]string{"file_path": "c.txt", "content": "five\n"})
	if got := reviewLog(); got != before {
		t.Errorf("a closed review recorded a head move:\n%s", got)
	}
	// A stale index (a crash before its removal) names a closed review:
	// still no head move.
	git("update-ref", "refs/quire/open-review/3", git("rev-parse", "refs/reviews/1"))
	head5 := commit(e.Must(200, "POST", files, f.alice, map[string]string{"file_path": "c.txt", "content": "five and a half\n"}))
	if got := reviewLog(); got != before {
		t.Errorf("a stale index made a closed review record a head move:\n%s", got)
	}
	e.Must(200, "POST", "/v1/skills/pdf/reviews/1/reopen", f.alice, nil)
	head6 := commit(e.Must(200, "POST", files, f.bob, map[string]string{"file_path": "c.txt", "content": "six\n"}))
	if got := git("log", "-1", "--format=%ae %s", "refs/reviews/1"); got != fmt.Sprintf("bob@example.com Move head of review 1 from %s to %s", short(head5), short(head6)) {
		t.Errorf("head move after reopen: %s", got)
	}

	// Deleting the draft closes the review, through reviewDone.
	e.Must(204, "DELETE", fmt.Sprintf("/v1/skills/pdf/versions/%d", n), f.alice, nil)
	if rv := get(t, f.review(1), "review").(map[string]any); rv["state"] != "closed" || get(t, rv, "closed_by", "email") != "alice@example.com" {
		t.Errorf("review of the deleted draft: %v", rv)
	}
	if got := git("log", "-1", "--format=%ae %s", "refs/reviews/1"); got != "alice@example.com Close review 1: draft 3 is gone" {
		t.Errorf("close commit: %s", got)
	}
	if got := index(); got != "" {
		t.Errorf("open-review index after the delete: %q", got)
	}
	evs := e.Must(200, "GET", "/v1/projects/"+f.pid+"/events?types=review.closed", e.Admin, nil, "Accept: application/json").JSON(t)["events"].([]any)
	if len(evs) != 2 || get(t, evs[1], "review").(float64) != 1 || get(t, evs[1], "actor", "email") != "alice@example.com" ||
		get(t, evs[1], "data", "state") != "closed" || get(t, evs[1], "version").(float64) != float64(n) {
		t.Errorf("review.closed events: %v", evs)
	}
	f.fsck()

	// An archived draft's review is closed the same way.
	n = f.draft(f.alice, map[string]string{"d.txt": "d\n"})
	e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.alice, map[string]string{"title": "archived"})
	e.Must(200, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/archive", n), f.bob, nil)
	if rv := get(t, f.review(2), "review").(map[string]any); rv["state"] != "closed" || get(t, rv, "closed_by", "email") != "bob@example.com" {
		t.Errorf("review of the archived draft: %v", rv)
	}
	evs = e.Must(200, "GET", "/v1/projects/"+f.pid+"/events?types=review.closed", e.Admin, nil, "Accept: application/json").JSON(t)["events"].([]any)
	if len(evs) != 3 || get(t, evs[2], "review").(float64) != 2 || get(t, evs[2], "actor", "email") != "bob@example.com" {
		t.Errorf("review.closed events: %v", evs)
	}

	// A prompt PATCH moves its review's head too.
	pid := e.CreatePrompt(e.Admin, f.pid, "greet")
	e.Must(201, "POST", "/v1/prompts/greet/versions", f.alice, map[string]any{"template": "Hello {{name}}"})
	e.Must(201, "POST", "/v1/prompts/greet/versions/1/reviews", f.alice, map[string]string{"title": "greeting"})
	e.Must(200, "PATCH", "/v1/prompts/greet/versions/1", f.bob, map[string]any{"template": "Hi {{name}}"})
	prepo := e.RepoPath(quire.KindPrompt, pid)
	if got := testenv.Git(t, prepo, "log", "-1", "--format=%ae %s", "refs/reviews/1"); !strings.HasPrefix(got, "bob@example.com Move head of review 1 from ") {
		t.Errorf("prompt review after a PATCH: %s", got)
	}
	testenv.Git(t, prepo, "fsck", "--strict", "--no-dangling")
}

// TestReviewHeadCatchUp: a draft moved without its head move recorded (a
// crash between the two, or a review older than head-move records) is
// still read right -- the head is the draft's, its approval stale -- and
// the review's next event first appends the missing head move, credited
// to the new head's author.
func TestReviewHeadCatchUp(t *testing.T) {
	f := newReviewFixture(t, nil)
	e := f.e
	git := func(args ...string) string { return testenv.Git(t, f.repo(), args...) }
	n := f.draft(f.alice, map[string]string{"a.txt": "one\n"})
	head1 := get(t, e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.alice, map[string]string{"title": "t"}).JSON(t), "review", "head", "commit").(string)
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/approve", f.bob, nil)

	// The draft moves behind the review's back, as a crash would leave it.
	tree := git("rev-parse", head1+"^{tree}")
	head2 := git("-c", "user.name=Dee", "-c", "user.email=dee@example.com", "commit-tree", tree, "-p", head1, "-m", "moved behind the review's back")
	git("update-ref", fmt.Sprintf("refs/heads/draft/%d", n), head2, head1)

	got := f.review(1)
	if get(t, got, "review", "head", "commit") != head2 || get(t, got, "verdicts", "0", "stale") != true {
		t.Errorf("review after an unrecorded move: %v", got)
	}
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/comments", f.bob, map[string]any{"body": "noted"})
	want := fmt.Sprintf("bob@example.com Comment on review 1\ndee@example.com Move head of review 1 from %s to %s", head1[:12], head2[:12])
	if got := git("log", "-2", "--format=%ae %s", "refs/reviews/1"); got != want {
		t.Errorf("review log:\n%s\nwant\n%s", got, want)
	}
	f.fsck()
}
