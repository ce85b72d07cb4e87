package web_test

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/server"
	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/pipeline"
)

// git runs git in repo and returns its output.
func git(t *testing.T, repo string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"--git-dir", repo}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// A newcomer creates a project, a skill (whose first draft starts with a
// SKILL.md) and a prompt (whose first draft opens in the editor), from
// the pages alone; the repositories hold what was made.
func TestCreateProjectAndAssets(t *testing.T) {
	e := testenv.New(t)
	b := newBrowser(t, e.URL)
	tok := b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	wantPage(t, b.get("/ui/"), 200, "New project", `id="project-name"`)

	r := b.do("POST", "/ui/projects", url.Values{"csrf": {tok}, "name": {"Support <bots>"}, "description": {"Help desk"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/p/support-bots" {
		t.Fatalf("create project: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	wantPage(t, b.get("/ui/p/support-bots"), 200, "Support &lt;bots&gt;", "New skill", "New prompt", "Settings")

	r = b.do("POST", "/ui/p/support-bots/skills", url.Values{"csrf": {tok}, "name": {"Refunds"}, "description": {"Handle refunds: politely"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/p/support-bots/skills/refunds/v/1" {
		t.Fatalf("create skill: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	wantPage(t, b.get("/ui/p/support-bots/skills/refunds/v/1"), 200, "SKILL.md", "Instructions for the agent.", "Publish v1")
	if r := b.do("POST", "/ui/p/support-bots/skills/refunds/v/1/publish", url.Values{"csrf": {tok}}); r.status != http.StatusSeeOther {
		t.Fatalf("publish the new skill: %d\n%s", r.status, r.body)
	}
	sk := e.Must(200, "GET", "/v1/projects/support-bots/skills/refunds", e.Admin, nil).JSON(t)
	repo := e.RepoPath(quire.KindSkill, sk["skill"].(map[string]any)["id"].(string))
	if got := git(t, repo, "show", "main:SKILL.md"); !strings.Contains(got, "name: refunds") || !strings.Contains(got, `description: "Handle refunds: politely"`) {
		t.Errorf("SKILL.md as made:\n%s", got)
	}
	git(t, repo, "fsck", "--strict")

	r = b.do("POST", "/ui/p/support-bots/prompts", url.Values{"csrf": {tok}, "name": {"Greeting"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/p/support-bots/prompts/greeting/v/1/edit" {
		t.Fatalf("create prompt: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	wantPage(t, b.get("/ui/p/support-bots/prompts/greeting/v/1/edit"), 200, "Hello {{name}}!")

	// Bad input is a clear 4xx page.
	for _, c := range []struct {
		path string
		form url.Values
		want int
	}{
		{"/ui/projects", url.Values{"name": {""}}, 422},
		{"/ui/p/support-bots/skills", url.Values{"name": {""}}, 422},
		{"/ui/p/support-bots/widgets", url.Values{"name": {"x"}}, 404},
		{"/ui/p/nope/skills", url.Values{"name": {"x"}}, 404},
	} {
		c.form.Set("csrf", tok)
		if r := b.do("POST", c.path, c.form); r.status != c.want && !(c.want == 422 && r.status == 400) {
			t.Errorf("POST %s %v: %d, want %d\n%s", c.path, c.form, r.status, c.want, r.body)
		}
	}
}

// Owners set the review policy, members and webhooks on the settings
// page; the API sees the policy; an editor is refused the page.
func TestProjectSettings(t *testing.T) {
	f := newFixture(t)
	f.e.CreateUser("ed@example.com")
	b := newBrowser(t, f.e.URL)
	tok := b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	wantPage(t, b.get("/ui/p/demo/settings"), 200, "Approvals required to publish", "Members", "Webhooks")

	r := b.do("POST", "/ui/p/demo/settings", url.Values{"csrf": {tok}, "name": {"Demo"}, "description": {"d"}, "visibility": {"private"},
		"required_approvals": {"2"}, "dismiss_stale": {"on"}, "protected_labels": {"production, staging"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("save settings: %d\n%s", r.status, r.body)
	}
	pr := f.e.Must(200, "GET", "/v1/projects/demo", f.e.Admin, nil).JSON(t)["project"].(map[string]any)
	pol := pr["review_policy"].(map[string]any)
	if pol["required_approvals"] != float64(2) || fmt.Sprint(pol["protected_labels"]) != "[production staging]" || pr["name"] != "Demo" {
		t.Errorf("project after settings: %v", pr)
	}
	if r := b.do("POST", "/ui/p/demo/settings", url.Values{"csrf": {tok}, "name": {"Demo"}, "required_approvals": {"11"}}); r.status != 422 {
		t.Errorf("11 approvals: %d", r.status)
	}
	if r := b.do("POST", "/ui/p/demo/settings", url.Values{"csrf": {tok}, "name": {"Demo"}, "required_approvals": {"x"}}); r.status != 400 {
		t.Errorf("approvals x: %d", r.status)
	}

	if r := b.do("POST", "/ui/p/demo/members", url.Values{"csrf": {tok}, "email": {"ed@example.com"}, "role": {"editor"}}); r.status != http.StatusSeeOther {
		t.Fatalf("add member: %d\n%s", r.status, r.body)
	}
	if r := b.do("POST", "/ui/p/demo/members", url.Values{"csrf": {tok}, "email": {"nobody@example.com"}, "role": {"editor"}}); r.status < 400 || r.status >= 500 {
		t.Errorf("add an unknown member: %d", r.status)
	}
	wantPage(t, b.get("/ui/p/demo/settings"), 200, "ed@example.com", "editor")

	ed := newBrowser(t, f.e.URL)
	ed.signIn("ed@example.com", "password-ed@example.com")
	if p := ed.get("/ui/p/demo/settings"); p.status != http.StatusForbidden {
		t.Errorf("editor opens settings: %d", p.status)
	}
	if p := ed.get("/ui/p/demo"); p.status != 200 || strings.Contains(p.body, "/settings") {
		t.Errorf("editor's project page links to settings (%d)", p.status)
	}

}

// An owner adds a webhook (its secret shown once) and deletes it.
func TestWebhookSettings(t *testing.T) {
	e := testenv.NewWith(t, testenv.Options{Webhooks: server.WebhookOptions{AllowPrivate: true}})
	e.CreateProject(e.Admin, "hooks")
	b := newBrowser(t, e.URL)
	tok := b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	wantPage(t, b.get("/ui/p/hooks/settings"), 200, `id="webhook-url"`, "No webhooks.")
	r := b.do("POST", "/ui/p/hooks/webhooks", url.Values{"csrf": {tok}, "url": {"http://127.0.0.1:9/hook"}, "events": {"*"}, "description": {"<b>ci</b>"}})
	wantPage(t, r, 200, "whsec_", "http://127.0.0.1:9/hook", "&lt;b&gt;ci&lt;/b&gt;")
	if p := b.get("/ui/p/hooks/settings"); strings.Contains(p.body, "whsec_") {
		t.Errorf("the secret shows again")
	}
	if r := b.do("POST", "/ui/p/hooks/webhooks", url.Values{"csrf": {tok}, "url": {"http://127.0.0.1:9/hook"}}); r.status != 422 {
		t.Errorf("webhook without events: %d", r.status)
	}
	hooks := e.Must(200, "GET", "/v1/projects/hooks/webhooks", e.Admin, nil).JSON(t)
	list := hooks["webhooks"].([]any)
	if len(list) != 1 {
		t.Fatalf("webhooks: %v", hooks)
	}
	id := list[0].(map[string]any)["id"].(string)
	if r := b.do("POST", "/ui/p/hooks/webhooks/"+id+"/delete", url.Values{"csrf": {tok}}); r.status != http.StatusSeeOther {
		t.Fatalf("delete webhook: %d\n%s", r.status, r.body)
	}
	wantPage(t, b.get("/ui/p/hooks/settings"), 200, "No webhooks.")
}

// A draft whose project needs an approval shows its publish button
// disabled, with the reason, until the review is approved.
func TestPublishDisabledWithReason(t *testing.T) {
	f := newFixture(t)
	f.e.Must(200, "PATCH", "/v1/projects/demo", f.e.Admin, map[string]any{"review_policy": map[string]any{"required_approvals": 1}})
	b := newBrowser(t, f.e.URL)
	b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	wantPage(t, b.get("/ui/p/demo/skills/pdf-tools/v/2"), 200, `disabled aria-describedby="publish-why"`, "Publishing is blocked: the draft has no open review.")
	f.e.Must(201, "POST", "/v1/skills/"+f.skillID+"/versions/2/reviews", f.e.Admin, map[string]string{"title": "t"})
	wantPage(t, b.get("/ui/p/demo/skills/pdf-tools/v/2"), 200, "Publishing is blocked: 1 approval(s) required, 0 counting.", "Open review: ")

	f.e.Must(200, "PATCH", "/v1/projects/demo", f.e.Admin, map[string]any{"review_policy": map[string]any{"required_approvals": 0}})
	p := b.get("/ui/p/demo/skills/pdf-tools/v/2")
	wantPage(t, p, 200, "Publish v2")
	if strings.Contains(p.body, "publish-why") {
		t.Errorf("publish still disabled with no approvals required")
	}
}

// Files of any bytes are uploaded into a draft through a multipart form,
// into a folder; git holds the exact bytes.
func TestUploadBinaryFiles(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, f.e.URL)
	tok := b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	commit := regexpValue(t, b.get("/ui/p/demo/skills/pdf-tools/v/2").body, "commit")
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\xff\xfe")

	upload := func(commit string, files map[string][]byte) page {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("csrf", tok)
		mw.WriteField("commit", commit)
		mw.WriteField("dir", "assets")
		for name, content := range files {
			w, _ := mw.CreateFormFile("files", name)
			w.Write(content)
		}
		mw.Close()
		return b.raw("POST", "/ui/p/demo/skills/pdf-tools/v/2/upload", mw.FormDataContentType(), body.Bytes())
	}
	r := upload(commit, map[string][]byte{"logo.png": png})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/p/demo/skills/pdf-tools/v/2/f/assets/logo.png" {
		t.Fatalf("upload: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	wantPage(t, b.get("/ui/p/demo/skills/pdf-tools/v/2/f/assets/logo.png"), 200, "binary", "Delete assets/logo.png")
	repo := f.e.RepoPath(quire.KindSkill, f.skillID)
	if got := git(t, repo, "show", "refs/heads/draft/2:assets/logo.png"); got != string(png) {
		t.Errorf("uploaded bytes: %q", got)
	}
	git(t, repo, "fsck", "--strict")
	if r := upload(commit, map[string][]byte{"again.png": png}); r.status != http.StatusPreconditionFailed {
		t.Errorf("upload over a newer change: %d", r.status)
	}
	if r := upload(commit, nil); r.status != http.StatusBadRequest {
		t.Errorf("upload of nothing: %d", r.status)
	}
}

// The request limit covers the UI: past it a signed-in page is 429 with
// Retry-After.
func TestUIRateLimited(t *testing.T) {
	e := testenv.NewWith(t, testenv.Options{RateLimits: &pipeline.RateLimits{Request: quire.Limit{Rate: 5, Period: 60 * 1e9}}})
	b := newBrowser(t, e.URL)
	b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	var last page
	for i := 0; i < 8; i++ {
		if last = b.get("/ui/"); last.status == http.StatusTooManyRequests {
			break
		}
	}
	wantPage(t, last, http.StatusTooManyRequests, "too many requests")
	if last.header.Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After")
	}
}

// Lists longer than a page have a next page.
func TestProjectPagination(t *testing.T) {
	e := testenv.New(t)
	pid := e.CreateProject(e.Admin, "big")
	for i := 0; i < 27; i++ {
		e.CreateSkill(e.Admin, pid, fmt.Sprintf("s%03d", i))
	}
	b := newBrowser(t, e.URL)
	b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	p := b.get("/ui/p/big")
	wantPage(t, p, 200, "/skills/s024", "Next page")
	skills, _, _ := strings.Cut(p.body, `id="activity-h"`) // the activity links to any skill it names
	if strings.Contains(skills, "/skills/s025") {
		t.Errorf("first page shows the 26th skill")
	}
	next := regexpHref(t, p.body, "Next page")
	wantPage(t, b.get(next), 200, "/skills/s025", "/skills/s026", "First page")
}

// raw posts body with its content type.
func (b *browser) raw(method, path, contentType string, body []byte) page {
	b.t.Helper()
	req, err := http.NewRequest(method, b.u+path, bytes.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return page{status: res.StatusCode, header: res.Header, body: string(out)}
}

// regexpHref is the href of the link whose text starts with text.
func regexpHref(t *testing.T, body, text string) string {
	t.Helper()
	m := regexp.MustCompile(`<a href="([^"]+)">` + regexp.QuoteMeta(text)).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no link %q:\n%s", text, body)
	}
	return html.UnescapeString(m[1])
}
