package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/quire/quire/internal/testenv"
)

// payloadIDs maps the names of the fixture prompt's payloads to their ids.
func payloadIDs(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	out := map[string]string{}
	r := f.e.Must(200, "GET", "/v1/prompts/"+f.promptID+"/payloads", f.e.Admin, nil).JSON(t)
	for _, p := range r["payloads"].([]any) {
		p := p.(map[string]any)
		out[p["name"].(string)] = p["id"].(string)
	}
	return out
}

// caseSection is the part of a review page that shows the case of
// payload id: from its section's start to its end.
func caseSection(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `id="case-`+id+`"`)
	if i < 0 {
		t.Fatalf("the page has no case section of payload %s:\n%s", id, body)
	}
	j := strings.Index(body[i:], "</section>")
	if j < 0 {
		t.Fatalf("the case section of %s does not end", id)
	}
	return body[i : i+j]
}

// A reviewer comments on a case from the form under it: the comment is
// stored with the case anchor, shown under that case (and no other) and
// in the conversation naming the case; its body is text. The form keeps
// the page's rules: the session's CSRF token, POST then redirect (to the
// case), an unknown payload refused, no form once the review is closed.
func TestReviewCaseComment(t *testing.T) {
	f := evalFixture(t)
	ids := payloadIDs(t, f)
	ann, bo := ids["ann"], ids["<b>bo</b>"]
	b := newBrowser(t, f.e.URL)
	tok := b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	rv := "/ui/p/demo/prompts/greeting/reviews/1"

	p := b.get(rv)
	wantPage(t, p, 200)
	for _, id := range []string{ann, bo} {
		sec := caseSection(t, p.body, id)
		for _, want := range []string{`<summary>Comment on this case</summary>`, `<input type="hidden" name="case" value="` + id + `">`,
			`<form method="post" action="/ui/p/demo/prompts/greeting/reviews/1/comments"`, `<textarea id="case-body-` + id + `" name="body"`} {
			if !strings.Contains(sec, want) {
				t.Errorf("the case of %s lacks %q:\n%s", id, want, sec)
			}
		}
	}
	if !strings.Contains(caseSection(t, p.body, bo), `<label for="case-body-`+bo+`">Comment on &lt;b&gt;bo&lt;/b&gt;</label>`) {
		t.Errorf("the form's label does not name the payload as text:\n%s", caseSection(t, p.body, bo))
	}

	body := "The greeting lost its <script>alert('case')</script> Hello"
	// Without the session's token: refused, nothing stored.
	if r := b.do("POST", rv+"/comments", url.Values{"case": {ann}, "body": {body}}); r.status != http.StatusForbidden {
		t.Fatalf("a case comment without the CSRF token: %d", r.status)
	}
	// An unknown payload: the API's 422, shown as a page.
	wantPage(t, b.do("POST", rv+"/comments", url.Values{"csrf": {tok}, "case": {"00000000-0000-0000-0000-000000000000"}, "body": {"x"}}), 422, "not found")
	if cs := f.e.Must(200, "GET", "/v1/prompts/"+f.promptID+"/reviews/1", f.e.Admin, nil).JSON(t)["comments"].([]any); len(cs) != 0 {
		t.Fatalf("refused comments were stored: %v", cs)
	}

	r := b.do("POST", rv+"/comments", url.Values{"csrf": {tok}, "case": {ann}, "body": {body}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != rv+"#case-"+ann {
		t.Fatalf("case comment: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	cs := f.e.Must(200, "GET", "/v1/prompts/"+f.promptID+"/reviews/1", f.e.Admin, nil).JSON(t)["comments"].([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["case"] != ann || cs[0].(map[string]any)["body"] != body {
		t.Fatalf("stored comments: %v", cs)
	}
	// A reply from the conversation stays in the thread under the case.
	cid := cs[0].(map[string]any)["id"].(string)
	if r := b.do("POST", rv+"/comments", url.Values{"csrf": {tok}, "in_reply_to": {cid}, "body": {"Agreed & fixed"}}); r.status != http.StatusSeeOther || r.header.Get("Location") != rv {
		t.Fatalf("reply: %d %q", r.status, r.header.Get("Location"))
	}

	p = b.get(rv)
	wantPage(t, p, 200)
	escaped := "The greeting lost its &lt;script&gt;alert(&#39;case&#39;)&lt;/script&gt; Hello"
	sec := caseSection(t, p.body, ann)
	for _, want := range []string{`<ul class="case-notes" aria-label="Comments on ann">`, `<strong>Admin</strong>`, `<a href="#c-` + cid + `">in the conversation</a>`,
		`<p class="body">` + escaped + `</p>`, `<p class="body">Agreed &amp; fixed</p>`} {
		if !strings.Contains(sec, want) {
			t.Errorf("the case of ann lacks %q:\n%s", want, sec)
		}
	}
	if other := caseSection(t, p.body, bo); strings.Contains(other, "case-notes") || strings.Contains(other, "lost its") {
		t.Errorf("the comment on ann shows under bo:\n%s", other)
	}
	if !strings.Contains(p.body, ` on case <a href="#case-`+ann+`">ann</a>`) {
		t.Errorf("the conversation does not say the comment is on ann:\n%s", p.body)
	}
	if strings.Contains(p.body, "<script>alert('case')") {
		t.Errorf("a comment is served as HTML:\n%s", p.body)
	}

	// Closed: the comments stay under the case, the form goes.
	f.e.Must(200, "POST", "/v1/prompts/"+f.promptID+"/reviews/1/close", f.e.Admin, nil)
	p = b.get(rv)
	wantPage(t, p, 200)
	if sec := caseSection(t, p.body, ann); !strings.Contains(sec, escaped) || strings.Contains(sec, `name="case"`) {
		t.Errorf("the case of ann on a closed review:\n%s", sec)
	}
}

// In Chromium: a reviewer opens the form under a case, comments, and
// lands back on the review with the comment under that case, shown as
// text.
func TestBrowserReviewCaseComment(t *testing.T) {
	driverHeavy(t)
	f := evalFixture(t)
	ann := payloadIDs(t, f)["ann"]
	revID, _ := f.e.CreateUser("rev@example.com")
	f.e.Must(200, "PATCH", "/v1/users/"+revID, f.e.Admin, map[string]string{"name": "Grace Hopper"})
	f.e.Must(200, "PUT", "/v1/projects/demo/members/"+revID, f.e.Admin, map[string]string{"role": "editor"})
	c := newChrome(t)
	c.signIn(f.e.URL, "rev@example.com", "password-rev@example.com")
	form := "#case-" + ann + " details.case-comment"
	c.step("open the review and the case's form",
		chromedp.Navigate(f.e.URL+"/ui/p/demo/prompts/greeting/reviews/1"),
		chromedp.WaitVisible(css("#eval-h")),
		chromedp.Click(css(form+" summary")),
		chromedp.WaitVisible(css("#case-body-"+ann)),
	)
	c.step("comment on the case",
		chromedp.SendKeys(css("#case-body-"+ann), "Hello went missing <img src=x onerror=alert('c')>"),
		submit(chromedp.Click(css(form+" button[type=submit]"))),
		chromedp.WaitVisible(css("#case-"+ann+" ul.case-notes")),
	)
	if loc := c.location(); !strings.HasSuffix(loc, "/reviews/1#case-"+ann) {
		t.Errorf("after the comment the browser is at %s", loc)
	}
	if got := c.text("#case-" + ann + " ul.case-notes"); !strings.Contains(got, "Grace Hopper") || !strings.Contains(got, "Hello went missing <img src=x onerror=alert('c')>") {
		t.Errorf("under the case: %q", got)
	}
	if n := c.eval(`String(document.querySelectorAll("ul.case-notes").length)`); n != "1" {
		t.Errorf("%s cases show comments, want 1", n)
	}
	// the evaluation, with the comment under its case, at the top of the
	// screenshot
	c.eval(`window.scrollTo(0, document.getElementById("eval-h").offsetTop - 16); ""`)
	c.check("review with a case comment")
	c.shot("review-case-comment")
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.alarms) > 0 {
		t.Errorf("script ran in the page: %v", c.alarms)
	}
}
