package httpapi_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// The review gate attacked as a hostile editor would (docs/security.md,
// "Who wrote a draft"). Each case is alice, an editor, trying to publish
// her own change under required_approvals: 1 with nobody else's
// approval; each failed on the code before authorship was recorded.

// refused tries to publish draft n as token; it must be refused with
// review_required, its message containing want.
func (f *reviewFixture) refused(token string, n int, want string) map[string]any {
	f.t.Helper()
	r := wantError(f.t, f.e.Do("POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/publish", n), token, nil), 409, want)
	if r["code"] != "review_required" {
		f.t.Errorf("code %v, want review_required", r["code"])
	}
	return r
}

// verdictOf is user email's verdict in review view rv.
func verdictOf(t *testing.T, rv map[string]any, email string) map[string]any {
	t.Helper()
	for _, v := range arr(t, rv, "verdicts") {
		if get(t, v, "user", "email") == email {
			return v.(map[string]any)
		}
	}
	t.Fatalf("no verdict by %s in %v", email, rv["verdicts"])
	return nil
}

// TestReviewForgedPushAuthor: bob opens the draft; alice pushes a commit
// whose author line claims bob, and approves. The pusher is an author
// whatever the commits say, so her approval does not count.
func TestReviewForgedPushAuthor(t *testing.T) {
	f := newReviewFixture(t, map[string]any{"required_approvals": 1})
	e, g := f.e, f.g
	n := f.draft(f.bob, map[string]string{"notes.md": "bob's start\n"})
	e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.bob, map[string]string{"title": "Bob's draft"})

	w := f.clone(f.alice)
	g.must(w, "checkout", "-q", fmt.Sprintf("draft/%d", n))
	g.commitFile(w, "scripts/run.py", "import os; os.system('curl evil')\n")
	g.must(w, "commit", "-q", "--amend", "--no-edit", "--author=Bob <bob@example.com>")
	if got := g.must(w, "log", "-1", "--format=%ae"); got != "bob@example.com" {
		t.Fatalf("forged author %q", got)
	}
	g.must(w, "push", "-q", "origin", fmt.Sprintf("draft/%d", n))

	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/approve", f.alice, nil)
	rv := f.review(1)
	if v := verdictOf(t, rv, "alice@example.com"); v["counts"] != false || v["reason"] != "self_approval" {
		t.Errorf("alice's approval after her push: %v", v)
	}
	if m := get(t, rv, "mergeable").(map[string]any); m["ok"] != false || !strings.Contains(fmt.Sprint(m["reasons"]), "self_approval") {
		t.Errorf("mergeable %v", m)
	}
	f.refused(f.alice, n, "self_approval")

	// Bob opened the draft: his approval does not count either. The
	// owner, who wrote none of it, is a reviewer whose approval does.
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/approve", f.bob, nil)
	f.refused(f.alice, n, "the approval by bob@example.com does not count: self_approval")
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/approve", e.Admin, nil)
	e.Must(200, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/publish", n), f.alice, nil)
	f.fsck()
}

// TestReviewAuthorDilution: alice writes her change through the API, then
// pushes 1,001 empty commits claiming another author on top. The authors
// are recorded per write, so no number of commits hides hers.
func TestReviewAuthorDilution(t *testing.T) {
	f := newReviewFixture(t, map[string]any{"required_approvals": 1})
	e, g := f.e, f.g
	n := f.draft(f.bob, map[string]string{"notes.md": "bob's start\n"})
	e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.bob, map[string]string{"title": "Bob's draft"})
	e.Must(200, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/files", n), f.alice, map[string]string{"file_path": "scripts/run.py", "content": "print('alice')\n"})

	w := f.clone(f.alice)
	g.must(w, "checkout", "-q", fmt.Sprintf("draft/%d", n))
	// 1,001 empty commits by "dan" in one git fast-import.
	var stream strings.Builder
	parent := g.must(w, "rev-parse", "HEAD")
	for i := range 1001 {
		fmt.Fprintf(&stream, "commit refs/heads/draft/%d\ncommitter Dan <dan@example.com> %d +0000\ndata 6\nempty\n", n, 1700000000+i)
		if i == 0 {
			fmt.Fprintf(&stream, "from %s\n", parent)
		}
		stream.WriteString("\n")
	}
	cmd := exec.Command("git", "fast-import", "--quiet", "--force")
	cmd.Dir, cmd.Env, cmd.Stdin = w, g.env, strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	g.must(w, "reset", "-q", "--hard", fmt.Sprintf("draft/%d", n))
	if c := g.must(w, "rev-list", "--count", parent+"..HEAD"); c != "1001" {
		t.Fatalf("%s commits made", c)
	}
	g.must(w, "push", "-q", "origin", fmt.Sprintf("draft/%d", n))

	// The pusher is an author as well as the API writer; dan, who no
	// quire principal is, is not.
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/approve", f.alice, nil)
	if v := verdictOf(t, f.review(1), "alice@example.com"); v["counts"] != false || v["reason"] != "self_approval" {
		t.Errorf("alice's approval: %v", v)
	}
	f.refused(f.alice, n, "self_approval")
	f.fsck()
}

// TestReviewEmailRename: alice writes through the API, renames her email,
// and approves. Authors are user ids, so the rename changes nothing.
func TestReviewEmailRename(t *testing.T) {
	f := newReviewFixture(t, map[string]any{"required_approvals": 1})
	e := f.e
	n := f.draft(f.bob, map[string]string{"notes.md": "bob's start\n"})
	e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.bob, map[string]string{"title": "Bob's draft"})
	e.Must(200, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/files", n), f.alice, map[string]string{"file_path": "scripts/run.py", "content": "print('alice')\n"})
	e.Must(200, "PATCH", "/v1/users/me", f.alice, map[string]string{"email": "someone-new@example.com"})
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/approve", f.alice, nil)
	if v := verdictOf(t, f.review(1), "someone-new@example.com"); v["counts"] != false || v["reason"] != "self_approval" {
		t.Errorf("approval after the rename: %v", v)
	}
	f.refused(f.alice, n, "self_approval")

	// An API key acts as its user: a key of alice's is an author too.
	key := e.CreateKey(f.alice, "write")
	n2 := f.draft(f.bob, map[string]string{"notes.md": "second\n"})
	e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n2), f.bob, map[string]string{"title": "Second"})
	e.Must(200, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/files", n2), key, map[string]string{"file_path": "a.md", "content": "by key\n"})
	e.Must(201, "POST", "/v1/skills/pdf/reviews/2/approve", f.alice, nil)
	f.refused(f.alice, n2, "self_approval")

	// With self-approval allowed the same approval counts.
	e.Must(200, "PATCH", "/v1/projects/demo", e.Admin, map[string]any{"review_policy": map[string]any{"required_approvals": 1, "allow_self_approval": true}})
	if v := verdictOf(t, f.review(2), "someone-new@example.com"); v["counts"] != true || v["reason"] != nil {
		t.Errorf("approval under allow_self_approval: %v", v)
	}
	e.Must(200, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/publish", n2), f.alice, nil)
}

// TestReviewNoWriteAccess: an approval stops counting when its user is
// removed from the project, demoted to viewer or disabled; it stays
// listed with the reason. A request for changes by such a user no longer
// blocks.
func TestReviewNoWriteAccess(t *testing.T) {
	f := newReviewFixture(t, map[string]any{"required_approvals": 1})
	e := f.e
	n := f.draft(f.alice, map[string]string{"notes.md": "alice's change\n"})
	e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.alice, map[string]string{"title": "Alice's draft"})
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/approve", f.bob, nil)
	if m := get(t, f.review(1), "mergeable").(map[string]any); m["ok"] != true {
		t.Fatalf("bob's approval does not count: %v", m)
	}
	member := "/v1/projects/demo/members/" + f.bobID
	for _, step := range []struct {
		name string
		do   func()
	}{
		{"removed", func() { e.Must(204, "DELETE", member, e.Admin, nil) }},
		{"viewer", func() { e.Must(200, "PUT", member, e.Admin, map[string]string{"role": "viewer"}) }},
		{"disabled", func() {
			e.Must(200, "PUT", member, e.Admin, map[string]string{"role": "editor"})
			e.Must(200, "PATCH", "/v1/users/"+f.bobID, e.Admin, map[string]any{"disabled": true})
		}},
	} {
		step.do()
		rv := f.review(1)
		if v := verdictOf(t, rv, "bob@example.com"); v["counts"] != false || v["reason"] != "no_write_access" {
			t.Errorf("%s: bob's approval %v", step.name, v)
		}
		if m := get(t, rv, "mergeable").(map[string]any); m["ok"] != false || m["approvals"].(float64) != 0 {
			t.Errorf("%s: mergeable %v", step.name, m)
		}
		f.refused(f.alice, n, "no_write_access")
	}
	// Back in good standing, the approval counts again.
	e.Must(200, "PATCH", "/v1/users/"+f.bobID, e.Admin, map[string]any{"disabled": false})
	if v := verdictOf(t, f.review(1), "bob@example.com"); v["counts"] != true {
		t.Errorf("re-enabled: %v", v)
	}

	// Bob requests changes, then loses write access: it stops blocking.
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/request-changes", f.bob, map[string]string{"body": "no"})
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/approve", e.Admin, nil)
	f.refused(f.alice, n, "changes requested by bob@example.com")
	e.Must(200, "PUT", member, e.Admin, map[string]string{"role": "viewer"})
	rv := f.review(1)
	if v := verdictOf(t, rv, "bob@example.com"); v["counts"] != false || v["reason"] != "no_write_access" {
		t.Errorf("demoted reviewer's request for changes: %v", v)
	}
	if m := get(t, rv, "mergeable").(map[string]any); m["ok"] != true {
		t.Errorf("mergeable once the request stops counting: %v", m)
	}
	e.Must(200, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/publish", n), f.alice, nil)
}

// TestReviewVerdictPinnedToHead: a verdict that names the head the
// reviewer read is refused once the head moved (409 head_moved with the
// new head), and the bad inputs get 400.
func TestReviewVerdictPinnedToHead(t *testing.T) {
	f := newReviewFixture(t, map[string]any{"required_approvals": 1})
	e, g := f.e, f.g
	n := f.draft(f.alice, map[string]string{"notes.md": "v1\n"})
	e.Must(201, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/reviews", n), f.alice, map[string]string{"title": "Pinned"})
	read := get(t, f.review(1), "review", "head", "commit").(string)

	// Alice pushes after bob read the review.
	w := f.clone(f.alice)
	g.must(w, "checkout", "-q", fmt.Sprintf("draft/%d", n))
	head := g.commitFile(w, "notes.md", "v2, unseen\n")
	g.must(w, "push", "-q", "origin", fmt.Sprintf("draft/%d", n))

	for _, action := range []string{"approve", "request-changes"} {
		r := wantError(t, e.Do("POST", "/v1/skills/pdf/reviews/1/"+action, f.bob, map[string]string{"commit": read, "body": "seen"}), 409, "head")
		if r["code"] != "head_moved" || get(t, r, "details", "head") != head {
			t.Errorf("%s on the old head: %v", action, r)
		}
	}
	if l := arr(t, f.review(1), "verdicts"); len(l) != 0 {
		t.Errorf("a refused verdict was recorded: %v", l)
	}
	for _, bad := range []string{"abc", strings.Repeat("g", 40), strings.ToUpper(head), head + "0"} {
		wantError(t, e.Do("POST", "/v1/skills/pdf/reviews/1/approve", f.bob, map[string]string{"commit": bad}), 400, "commit")
	}
	r := e.Must(201, "POST", "/v1/skills/pdf/reviews/1/approve", f.bob, map[string]string{"commit": head})
	if get(t, r.JSON(t), "verdict", "commit") != head {
		t.Errorf("verdict %v", r.JSON(t))
	}
	// Without commit the API keeps approving whatever the head is.
	e.Must(201, "POST", "/v1/skills/pdf/reviews/1/approve", f.bob, nil)
	e.Must(200, "POST", fmt.Sprintf("/v1/skills/pdf/versions/%d/publish", n), f.alice, nil)
}

// TestProtectedLabelDelete: deleting a protected label needs the owner's
// override with a reason, kept in the label's history; other labels are
// deleted by any editor as before.
func TestProtectedLabelDelete(t *testing.T) {
	f := newReviewFixture(t, map[string]any{"protected_labels": []string{"production"}})
	e := f.e
	e.Must(200, "PUT", "/v1/skills/pdf/labels/production", e.Admin, map[string]any{"version": 1, "override": true, "reason": "first release"})
	e.Must(200, "PUT", "/v1/skills/pdf/labels/staging", f.alice, map[string]any{"version": 1})

	r := wantError(t, e.Do("DELETE", "/v1/skills/pdf/labels/production", f.alice, nil), 409, "protected")
	if r["code"] != "label_protected" || get(t, r, "details", "label") != "production" {
		t.Errorf("editor's delete: %v", r)
	}
	wantError(t, e.Do("DELETE", "/v1/skills/pdf/labels/production", f.alice, map[string]any{"override": true, "reason": "I say so"}), 403, "owner")
	wantError(t, e.Do("DELETE", "/v1/skills/pdf/labels/production", e.Admin, nil), 409, "protected")
	wantError(t, e.Do("DELETE", "/v1/skills/pdf/labels/production", e.Admin, map[string]any{"override": true}), 422, "reason")
	wantError(t, e.Do("DELETE", "/v1/skills/pdf/labels/production", e.Admin, map[string]any{"override": "yes"}), 400)
	wantError(t, e.Do("DELETE", "/v1/skills/pdf/labels/production", e.Admin, map[string]any{"overide": true}), 400)
	if l := arr(t, e.Must(200, "GET", "/v1/skills/pdf/labels", f.carol, nil).JSON(t), "labels"); len(l) != 2 {
		t.Fatalf("labels after refused deletes: %v", l)
	}
	e.Must(204, "DELETE", "/v1/skills/pdf/labels/production", e.Admin, map[string]any{"override": true, "reason": "withdrawn: bad answers"})
	h := arr(t, e.Must(200, "GET", "/v1/skills/pdf/labels/production/history", f.carol, nil).JSON(t), "history")
	if len(h) != 2 || get(t, h[0], "action") != "delete" || get(t, h[0], "override") != "withdrawn: bad answers" || get(t, h[1], "override") != "first release" {
		t.Errorf("history %v", h)
	}
	e.Must(204, "DELETE", "/v1/skills/pdf/labels/staging", f.alice, nil)
	f.fsck()
}
