package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// Editing through the UI: open a draft, add, change and delete files,
// publish; the repository holds exactly what the pages said, and passes
// git fsck.
func TestEditDraftAndPublish(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, f.e.URL)
	token := b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	base := "/ui/p/demo/skills/pdf-tools"

	wantPage(t, b.get(base), 200, `action="/ui/p/demo/skills/pdf-tools/drafts"`, "New draft")
	r := b.do("POST", base+"/drafts", url.Values{"csrf": {token}, "from": {"live"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != base+"/v/3" {
		t.Fatalf("new draft: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	draft := b.get(base + "/v/3")
	wantPage(t, draft, 200, "Publish v3", "Add a file", `href="/ui/p/demo/skills/pdf-tools/v/3/edit/SKILL.md"`)
	commit := regexpValue(t, b.get(base+"/v/3/new").body, "commit")

	r = b.do("POST", base+"/v/3/files", url.Values{"csrf": {token}, "commit": {commit}, "path": {"docs/guide.md"}, "content": {"# Guide\r\nline two\r\n"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != base+"/v/3/f/docs/guide.md" {
		t.Fatalf("add file: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	wantPage(t, b.get(base+"/v/3/f/docs/guide.md"), 200, "<h1>Guide</h1>", "Delete docs/guide.md")

	// A save from a form older than the draft is refused, not applied.
	r = b.do("POST", base+"/v/3/files", url.Values{"csrf": {token}, "commit": {commit}, "path": {"docs/guide.md"}, "content": {"stale"}})
	wantPage(t, r, http.StatusPreconditionFailed)

	edit := b.get(base + "/v/3/edit/docs/guide.md")
	wantPage(t, edit, 200, "# Guide\nline two")
	r = b.do("POST", base+"/v/3/files", url.Values{"csrf": {token}, "commit": {regexpValue(t, edit.body, "commit")}, "path": {"docs/guide.md"}, "content": {"# Guide v2\n"}, "message": {"Rewrite the guide"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("edit: %d\n%s", r.status, r.body)
	}
	// The executable box: ticked, the file is git mode 100755; the edit
	// page shows it ticked; unticked, it is regular again.
	for _, exec := range []bool{true, false} {
		edit := b.get(base + "/v/3/edit/scripts/run.py")
		if got := strings.Contains(edit.body, `name="executable" type="checkbox" checked`); got == exec {
			t.Fatalf("edit page: box ticked %v before the save that sets it %v", got, exec)
		}
		form := url.Values{"csrf": {token}, "commit": {regexpValue(t, edit.body, "commit")}, "path": {"scripts/run.py"}, "content": {"print('hello')\n"}}
		if exec {
			form.Set("executable", "on")
		}
		if r := b.do("POST", base+"/v/3/files", form); r.status != http.StatusSeeOther {
			t.Fatalf("save with executable=%v: %d\n%s", exec, r.status, r.body)
		}
		want := map[bool]string{true: "100755 ", false: "100644 "}[exec]
		if got := testenv.Git(t, f.e.RepoPath(quire.KindSkill, f.skillID), "ls-tree", "refs/heads/draft/3", "scripts/run.py"); !strings.HasPrefix(got, want) {
			t.Errorf("executable=%v: %s", exec, got)
		}
		if exec && !strings.Contains(b.get(base+"/v/3/edit/scripts/run.py").body, `name="executable" type="checkbox" checked`) {
			t.Errorf("the edit page does not show the file executable")
		}
	}
	del := b.get(base + "/v/3/f/notes/" + url.PathEscape("<img src=x onerror=alert(3)>.txt"))
	r = b.do("POST", base+"/v/3/delete", url.Values{"csrf": {token}, "commit": {regexpValue(t, del.body, "commit")}, "path": {"notes/<img src=x onerror=alert(3)>.txt"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != base+"/v/3" {
		t.Fatalf("delete: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	// Bad input is a clear 400 page, nothing written.
	wantPage(t, b.do("POST", base+"/v/3/files", url.Values{"csrf": {token}, "path": {"../escape"}, "content": {"x"}}), http.StatusBadRequest)
	// Writes without the form token are refused.
	wantPage(t, b.do("POST", base+"/v/3/files", url.Values{"path": {"x.md"}, "content": {"x"}}), http.StatusForbidden)
	wantPage(t, b.do("POST", base+"/v/3/publish", url.Values{}), http.StatusForbidden)

	r = b.do("POST", base+"/v/3/publish", url.Values{"csrf": {token}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("publish: %d\n%s", r.status, r.body)
	}
	wantPage(t, b.get(base+"/v/3"), 200, "state-published", `<span class="live">live</span>`)

	repo := f.e.RepoPath(quire.KindSkill, f.skillID)
	if got := testenv.Git(t, repo, "show", "v3:docs/guide.md"); got != "# Guide v2" {
		t.Errorf("git show v3:docs/guide.md = %q", got)
	}
	if files := testenv.Git(t, repo, "ls-tree", "-r", "--name-only", "v3"); strings.Contains(files, "notes/") || !strings.Contains(files, "SKILL.md") {
		t.Errorf("v3 files: %q", files)
	}
	if log := testenv.Git(t, repo, "log", "--format=%an|%s", "v3"); !strings.Contains(log, "Admin|Rewrite the guide") {
		t.Errorf("git log: %q", log)
	}
	testenv.Git(t, repo, "fsck", "--strict")
}

// A viewer reads but cannot write: the app's rule, shown as a page.
func TestViewerCannotEdit(t *testing.T) {
	f := newFixture(t)
	f.e.CreateUser("viewer@example.com")
	f.e.Must(200, "POST", "/v1/projects/"+f.projectID+"/members", f.e.Admin, map[string]string{"email": "viewer@example.com", "role": "viewer"})
	b := newBrowser(t, f.e.URL)
	token := b.signIn("viewer@example.com", "password-viewer@example.com")
	for _, post := range []struct {
		path string
		form url.Values
	}{
		{"/ui/p/demo/skills/pdf-tools/drafts", url.Values{"csrf": {token}}},
		{"/ui/p/demo/skills/pdf-tools/v/2/files", url.Values{"csrf": {token}, "path": {"x.md"}, "content": {"x"}}},
		{"/ui/p/demo/skills/pdf-tools/v/2/delete", url.Values{"csrf": {token}, "path": {"SKILL.md"}}},
		{"/ui/p/demo/skills/pdf-tools/v/2/publish", url.Values{"csrf": {token}}},
	} {
		if r := b.do("POST", post.path, post.form); r.status != http.StatusForbidden {
			t.Errorf("viewer POST %s: %d\n%s", post.path, r.status, r.body)
		}
	}
}

func regexpValue(t *testing.T, body, name string) string {
	t.Helper()
	i := strings.Index(body, `name="`+name+`" value="`)
	if i < 0 {
		t.Fatalf("no %s field:\n%s", name, body)
	}
	rest := body[i+len(`name="`+name+`" value="`):]
	return rest[:strings.IndexByte(rest, '"')]
}

func TestPlayground(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, f.e.URL)
	token := b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	play := "/ui/p/demo/prompts/greeting/play"
	wantPage(t, b.get("/ui/p/demo/prompts/greeting"), 200, `href="`+play+`"`)
	form := b.get(play)
	wantPage(t, form, 200, `<label for="var-name">name <span class="req">(required)</span></label>`, `name="var.name"`)
	r := b.do("POST", play+"?version=0", url.Values{"csrf": {token}, "var.name": {"<b>Ada</b>"}})
	wantPage(t, r, 200, `<pre class="source" tabindex="0" id="rendered">Hello &lt;b&gt;Ada&lt;/b&gt; &lt;script&gt;</pre>`, "Result (v1)")
	// A missing variable is reported beside the form.
	r = b.do("POST", play+"?version=1", url.Values{"csrf": {token}})
	if r.status < 400 || r.status >= 500 || !strings.Contains(r.body, `class="error"`) || !strings.Contains(r.body, "name") {
		t.Fatalf("missing variable: %d\n%s", r.status, r.body)
	}
	wantPage(t, b.do("POST", play, url.Values{"csrf": {token}, "extra": {"[1"}}), 400, "more variables must be a JSON object")
	wantPage(t, b.do("POST", play, url.Values{"var.name": {"x"}}), http.StatusForbidden)
}

func TestLabelsAndPromptEdit(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, f.e.URL)
	token := b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	base := "/ui/p/demo/prompts/greeting"

	// A draft of the prompt, edited through the form, published, labelled.
	if r := b.do("POST", base+"/drafts", url.Values{"csrf": {token}}); r.status != http.StatusSeeOther || r.header.Get("Location") != base+"/v/2" {
		t.Fatalf("new draft: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	wantPage(t, b.get(base+"/v/2"), 200, `href="`+base+`/v/2/edit"`)
	form := b.get(base + "/v/2/edit")
	wantPage(t, form, 200, "Hello {{name}} &lt;script&gt;</textarea>", `value="gpt-test"`)
	commit := regexpValue(t, form.body, "commit")
	wantPage(t, b.do("POST", base+"/v/2/edit", url.Values{"csrf": {token}, "commit": {commit}, "template": {"x"}, "model_params": {"{oops"}}), 400, "model parameters must be JSON")
	r := b.do("POST", base+"/v/2/edit", url.Values{"csrf": {token}, "commit": {commit}, "template": {"Bonjour {{name}}\r\n"}, "model": {"gpt-next"}, "model_params": {`{"temperature": 0.2}`}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("save prompt: %d\n%s", r.status, r.body)
	}
	wantPage(t, b.get(base+"/v/2"), 200, "Bonjour {{name}}", "gpt-next", "&#34;temperature&#34;: 0.2")
	if r := b.do("POST", base+"/v/2/edit", url.Values{"csrf": {token}, "commit": {commit}, "template": {"stale"}}); r.status != http.StatusPreconditionFailed {
		t.Fatalf("stale save: %d", r.status)
	}
	if r := b.do("POST", base+"/v/2/publish", url.Values{"csrf": {token}}); r.status != http.StatusSeeOther {
		t.Fatalf("publish: %d\n%s", r.status, r.body)
	}
	if r := b.do("POST", base+"/labels", url.Values{"csrf": {token}, "name": {"staging"}, "version": {"2"}}); r.status != http.StatusSeeOther {
		t.Fatalf("set label: %d\n%s", r.status, r.body)
	}
	wantPage(t, b.get(base), 200, "staging</span> → <a href=\""+base+"/v/2\">v2</a>", "Delete label staging")
	api := f.e.Must(200, "GET", "/v1/prompts/"+f.promptID+"/labels", f.e.Admin, nil)
	if !strings.Contains(string(api.Body), `"staging"`) {
		t.Fatalf("the API does not see the label: %s", api.Body)
	}
	wantPage(t, b.do("POST", base+"/labels", url.Values{"csrf": {token}, "name": {"bad label!"}, "version": {"2"}}), 422, "label name must match")
	if r := b.do("POST", base+"/labels/staging/delete", url.Values{"csrf": {token}}); r.status != http.StatusSeeOther {
		t.Fatalf("delete label: %d", r.status)
	}
	if strings.Contains(string(f.e.Must(200, "GET", "/v1/prompts/"+f.promptID+"/labels", f.e.Admin, nil).Body), `"staging"`) {
		t.Fatal("label still there after delete")
	}
}
