package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// The review flow in the UI: with one approval required, the author opens
// a review on draft 2, a line comment gets a reply and is resolved, the
// page says the draft is not ready and publishing is refused with the
// reason; a second user approves and the author publishes.
func TestReviewFlow(t *testing.T) {
	f := newFixture(t)
	f.e.Must(200, "PATCH", "/v1/projects/demo", f.e.Admin, map[string]any{"review_policy": map[string]any{"required_approvals": 1}})
	f.e.CreateUser("rev@example.com")
	f.e.Must(200, "POST", "/v1/projects/"+f.projectID+"/members", f.e.Admin, map[string]string{"email": "rev@example.com", "role": "editor"})
	author := newBrowser(t, f.e.URL)
	atok := author.signIn(testenv.AdminEmail, testenv.AdminPassword)
	base := "/ui/p/demo/skills/pdf-tools"

	wantPage(t, author.get(base+"/v/2"), 200, "Open a review")
	r := author.do("POST", base+"/v/2/reviews", url.Values{"csrf": {atok}, "title": {"Greet <the> world"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != base+"/reviews/1" {
		t.Fatalf("open review: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	page := author.get(base + "/reviews/1")
	if n := strings.Count(page.body, "approval(s)"); n != 1 {
		t.Errorf("the page says how many approvals %d times, want once", n)
	}
	wantPage(t, page, 200, "#1 Greet &lt;the&gt; world", "Not ready to publish", "1 approval(s) required, 0 counting", "scripts/run.py", `<tr class="add">`,
		// each line number is a button that opens a comment on that line
		`<button type="button" class="lnc" data-path="scripts/run.py" data-line="1" data-side="head" aria-label="Comment on line 1 of scripts/run.py">1</button>`,
		`data-side="base" aria-label="Comment on removed line 1 of scripts/run.py"`)

	r = author.do("POST", base+"/reviews/1/comments", url.Values{"csrf": {atok}, "body": {"Why <this>?"}, "path": {"scripts/run.py"}, "line": {"1"}, "side": {"head"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("comment: %d\n%s", r.status, r.body)
	}
	page = author.get(base + "/reviews/1")
	wantPage(t, page, 200, "Why &lt;this&gt;?", "on <code>scripts/run.py</code> line 1 (head)")
	// and it shows under the line it is on
	if !regexp.MustCompile(`print\(&#39;hello<mark>, world</mark>&#39;\)</code></td></tr>\s*<tr class="note"><td colspan="3"><a href="#c-[^"]+"><strong>Admin</strong>: Why &lt;this&gt;\?</a>`).MatchString(page.body) {
		t.Errorf("the line comment is not under its line:\n%s", page.body)
	}
	id := regexp.MustCompile(`name="in_reply_to" value="([^"]+)"`).FindStringSubmatch(page.body)[1]

	reviewer := newBrowser(t, f.e.URL)
	rtok := reviewer.signIn("rev@example.com", "password-rev@example.com")
	if r := reviewer.do("POST", base+"/reviews/1/comments", url.Values{"csrf": {rtok}, "body": {"To greet."}, "in_reply_to": {id}}); r.status != http.StatusSeeOther {
		t.Fatalf("reply: %d\n%s", r.status, r.body)
	}
	if r := author.do("POST", base+"/reviews/1/comments/"+id+"/resolve", url.Values{"csrf": {atok}, "resolved": {"true"}}); r.status != http.StatusSeeOther {
		t.Fatalf("resolve: %d\n%s", r.status, r.body)
	}
	wantPage(t, author.get(base+"/reviews/1"), 200, `<div class="reply">`, "To greet.", `<span class="state">resolved</span>`, "Unresolve")

	// Not approved: publishing is refused, with the reason.
	pub := author.do("POST", base+"/v/2/publish", url.Values{"csrf": {atok}})
	if pub.status != http.StatusConflict || !strings.Contains(pub.body, "approv") {
		t.Fatalf("publish without approval: %d\n%s", pub.status, pub.body)
	}
	// The verdict form carries the head its page showed.
	head := regexp.MustCompile(`name="commit" value="([0-9a-f]{40})"`).FindStringSubmatch(reviewer.get(base + "/reviews/1").body)[1]
	wantPage(t, reviewer.do("POST", base+"/reviews/1/verdict", url.Values{"csrf": {rtok}, "verdict": {"request_changes"}, "commit": {head}}), 400)
	wantPage(t, reviewer.do("POST", base+"/reviews/1/verdict", url.Values{"verdict": {"approve"}, "commit": {head}}), http.StatusForbidden)
	wantPage(t, reviewer.do("POST", base+"/reviews/1/verdict", url.Values{"csrf": {rtok}, "verdict": {"approve"}}), 400, "reload the page")
	if r := reviewer.do("POST", base+"/reviews/1/verdict", url.Values{"csrf": {rtok}, "verdict": {"approve"}, "body": {"Looks good"}, "commit": {head}}); r.status != http.StatusSeeOther {
		t.Fatalf("approve: %d\n%s", r.status, r.body)
	}
	wantPage(t, author.get(base+"/reviews/1"), 200, "Ready to publish", "<strong>approved</strong>", "Looks good")
	if r := author.do("POST", base+"/v/2/publish", url.Values{"csrf": {atok}}); r.status != http.StatusSeeOther {
		t.Fatalf("publish after approval: %d\n%s", r.status, r.body)
	}
	wantPage(t, author.get(base+"/reviews/1"), 200, `<span class="state">merged</span>`)
}
