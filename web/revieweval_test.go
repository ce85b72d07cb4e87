package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/quire/quire/internal/testenv"
)

// evalFixture is runFixture with two payloads of "greeting" (one whose
// contains assertion passes on v1 and fails on the draft v2), the
// project evaluating its prompt reviews, and review 1 open on v2 with
// its evaluation finished.
func evalFixture(t *testing.T) *fixture {
	f, _ := runFixture(t)
	e := f.e
	pr := "/v1/prompts/" + f.promptID
	e.Must(201, "POST", pr+"/payloads", e.Admin, map[string]any{"name": "ann", "variables": map[string]any{"name": "Ann"},
		"assertions": []any{map[string]any{"type": "contains", "value": "Hello"}}})
	e.Must(201, "POST", pr+"/payloads", e.Admin, map[string]any{"name": "<b>bo</b>", "variables": map[string]any{"name": "Bo"},
		"assertions": []any{map[string]any{"type": "max_length", "value": 100}}})
	e.Must(200, "PATCH", "/v1/projects/demo", e.Admin, map[string]any{"review_policy": map[string]any{"evaluate": true}})
	e.Must(201, "POST", pr+"/versions/2/reviews", e.Admin, map[string]any{"title": "Say hi"})
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := e.Must(200, "GET", pr+"/reviews/1", e.Admin, nil).JSON(t)
		if ev, ok := r["evaluation"].(map[string]any); ok && ev["state"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("review 1 has no completed evaluation: %v", r["evaluation"])
		}
		time.Sleep(20 * time.Millisecond)
	}
	return f
}

// A prompt review's page shows its head's evaluation against the base:
// the summary line and state, each case's base and head outputs as a
// word diff, escaped, and each assertion's result, the newly failing one
// marked.
func TestReviewEvaluation(t *testing.T) {
	f := evalFixture(t)
	b := newBrowser(t, f.e.URL)
	b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	p := b.get("/ui/p/demo/prompts/greeting/reviews/1")
	wantPage(t, p, 200, `<h2 id="eval-h">Evaluation <span class="state state-eval-completed">completed</span></h2>`,
		"<strong>2 of 2 outputs changed, 1 assertion newly failing, 1 case failing</strong>",
		"(v2) against v1",
		// the payload names, escaped
		`>ann <span class="status status-modified">changed</span></h3>`, "&lt;b&gt;bo&lt;/b&gt;",
		// base and head, the words that differ marked; the base's <script> is text
		`<th scope="col">Base (v1)</th><th scope="col">Head (v2)</th>`,
		`<td class="output del"><span class="sr">base output: </span>gpt-<mark>test</mark> says: <mark>Hello</mark> Ann<mark> &lt;script&gt;</mark></td>`,
		`<td class="output add"><span class="sr">head output: </span>gpt-<mark>two</mark> says: <mark>Hi</mark> Ann<mark>!</mark></td>`,
		// assertions: passing on the base, newly failing on the head, with details
		`<li class="pass"><strong>passed</strong> <code>contains</code>`,
		`<li class="fail"><strong>failed</strong> <code>contains</code> <span class="state">newly failing</span>: does not contain &#34;Hello&#34;</li>`,
		`<li class="pass"><strong>passed</strong> <code>max_length</code>`)
	if strings.Contains(p.body, "Ann <script>") || strings.Contains(p.body, "<b>bo</b>") {
		t.Errorf("an output or a payload name is served as HTML:\n%s", p.body)
	}
	// A skill's review has no evaluation section.
	f.e.Must(201, "POST", "/v1/skills/"+f.skillID+"/versions/2/reviews", f.e.Admin, map[string]any{"title": "Skill"})
	if s := b.get("/ui/p/demo/skills/pdf-tools/reviews/1"); strings.Contains(s.body, `id="eval-h"`) {
		t.Errorf("a skill's review shows an evaluation:\n%s", s.body)
	}
}

// The review page's evaluation in headless Chromium: the outputs'
// <script> is text, the page passes axe-core, and it is saved as
// review-evaluation.png (docs/ui has it).
func TestBrowserReviewEvaluation(t *testing.T) {
	driverHeavy(t)
	f := evalFixture(t)
	c := newChrome(t)
	c.signIn(f.e.URL, testenv.AdminEmail, testenv.AdminPassword)
	c.step("open the review",
		chromedp.Navigate(f.e.URL+"/ui/p/demo/prompts/greeting/reviews/1"),
		chromedp.WaitVisible(css("#eval-h")),
	)
	// the evaluation at the top of the screenshot
	c.eval(`window.scrollTo(0, document.getElementById("eval-h").offsetTop - 16); ""`)
	if s := c.text(".eval-summary"); s != "2 of 2 outputs changed, 1 assertion newly failing, 1 case failing" {
		t.Errorf("summary %q", s)
	}
	if out := c.text("td.output.del"); !strings.HasSuffix(out, "\ngpt-test says: Hello Ann <script>") {
		t.Errorf("base output %q", out)
	}
	c.check("review evaluation")
	c.shot("review-evaluation")
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.alarms) > 0 {
		t.Errorf("script ran in the page: %v", c.alarms)
	}
}
