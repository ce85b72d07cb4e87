package web_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// fixture is a server (with opts, when given) with a project holding a
// published skill (two versions) and a published, labelled prompt.
type fixture struct {
	e                  *testenv.Env
	projectID, skillID string
	promptID           string
}

func newFixture(t *testing.T, opts ...testenv.Options) *fixture {
	t.Helper()
	var o testenv.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	e := testenv.NewWith(t, o)
	f := &fixture{e: e}
	f.projectID = e.CreateProject(e.Admin, "demo")
	f.skillID = e.CreateSkill(e.Admin, f.projectID, "pdf-tools")
	sk := "/v1/skills/" + f.skillID
	e.Must(201, "POST", sk+"/versions", e.Admin, nil)
	e.Must(200, "POST", sk+"/versions/1/files", e.Admin, map[string]string{"file_path": "SKILL.md", "content": testenv.SkillManifest("pdf-tools") + "\nUse **bold** moves.\n\n<script>alert(1)</script>\n\n[x](javascript:alert(2))\n"})
	e.Must(200, "POST", sk+"/versions/1/files", e.Admin, map[string]string{"file_path": "scripts/run.py", "content": "print('hello')\n"})
	e.Must(200, "POST", sk+"/versions/1/files", e.Admin, map[string]string{"file_path": "notes/<img src=x onerror=alert(3)>.txt", "content": "<b>not bold</b>\n"})
	e.Must(200, "POST", sk+"/versions/1/publish", e.Admin, nil)
	e.Must(201, "POST", sk+"/versions", e.Admin, nil)
	e.Must(200, "POST", sk+"/versions/2/files", e.Admin, map[string]string{"file_path": "scripts/run.py", "content": "print('hello, world')\n"})

	f.promptID = e.CreatePrompt(e.Admin, f.projectID, "greeting")
	e.Must(201, "POST", "/v1/prompts/"+f.promptID+"/versions", e.Admin, map[string]any{"template": "Hello {{name}} <script>", "model": "gpt-test"})
	e.Must(200, "POST", "/v1/prompts/"+f.promptID+"/versions/1/publish", e.Admin, nil)
	e.Must(200, "PUT", "/v1/prompts/"+f.promptID+"/labels/production", e.Admin, map[string]any{"version": 1})
	return f
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, so a test sees each answer.
type browser struct {
	t *testing.T
	c *http.Client
	u string
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, u: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(method, path string, form url.Values, headers ...string) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.u+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return page{status: res.StatusCode, header: res.Header, body: string(raw)}
}

func (b *browser) get(path string) page { b.t.Helper(); return b.do("GET", path, nil) }

var hidden = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, p page) string {
	t.Helper()
	m := hidden.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no csrf field in page:\n%s", p.body)
	}
	return m[1]
}

// signIn signs in through the form and returns the CSRF token of the
// signed-in pages.
func (b *browser) signIn(email, password string) string {
	b.t.Helper()
	lp := b.get("/ui/login")
	r := b.do("POST", "/ui/login", url.Values{"email": {email}, "password": {password}, "csrf": {csrfOf(b.t, lp)}, "next": {"/ui/"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/" {
		b.t.Fatalf("sign in: %d %s\n%s", r.status, r.header.Get("Location"), r.body)
	}
	return csrfOf(b.t, b.get("/ui/"))
}

func wantPage(t *testing.T, p page, status int, contains ...string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d\n%s", p.status, status, p.body)
	}
	for _, c := range contains {
		if !strings.Contains(p.body, c) {
			t.Errorf("page lacks %q:\n%s", c, p.body)
		}
	}
}

func TestSignInCookieAndSecurityHeaders(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, f.e.URL)

	// Signed out, a page sends the browser to sign in and back.
	r := b.get("/ui/p/demo")
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/login?next=%2Fui%2Fp%2Fdemo" {
		t.Fatalf("signed out: %d %q", r.status, r.header.Get("Location"))
	}
	// / leads to the UI.
	if r := b.get("/"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/" {
		t.Fatalf("/: %d %q", r.status, r.header.Get("Location"))
	}

	lp := b.get("/ui/login?next=/ui/p/demo")
	wantPage(t, lp, 200, "Sign in to quire", `value="/ui/p/demo"`)
	csp := lp.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP allows inline: %q", csp)
	}
	if lp.header.Get("X-Content-Type-Options") != "nosniff" || lp.header.Get("Referrer-Policy") == "" {
		t.Errorf("headers: %v", lp.header)
	}

	// A wrong password: the form again, with the reason, no session.
	bad := b.do("POST", "/ui/login", url.Values{"email": {testenv.AdminEmail}, "password": {"nope"}, "csrf": {csrfOf(t, lp)}})
	wantPage(t, bad, 401, "Wrong email or password.")
	if strings.Contains(bad.header.Get("Set-Cookie"), "quire_session=sess_") {
		t.Fatal("a failed sign-in set a session cookie")
	}

	lp = b.get("/ui/login")
	ok := b.do("POST", "/ui/login", url.Values{"email": {testenv.AdminEmail}, "password": {testenv.AdminPassword}, "csrf": {csrfOf(t, lp)}, "next": {"//evil.example/"}})
	if ok.status != http.StatusSeeOther || ok.header.Get("Location") != "/ui/" {
		t.Fatalf("sign in: %d %q (an off-site next must not be followed)", ok.status, ok.header.Get("Location"))
	}
	var sess *http.Cookie
	for _, c := range ok.header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "quire_session=") {
			sess, _ = http.ParseSetCookie(c)
		}
	}
	if sess == nil || !strings.HasPrefix(sess.Value, "sess_") || !sess.HttpOnly || sess.SameSite != http.SameSiteLaxMode || sess.Secure {
		t.Fatalf("session cookie over plain http: %+v", sess)
	}
	// The cookie is an API session like any other: the API lists it.
	if r := f.e.Do("GET", "/v1/auth/me", sess.Value, nil); r.Status != 200 {
		t.Fatalf("the UI's session is not an API session: %d", r.Status)
	}

	home := b.get("/ui/")
	wantPage(t, home, 200, "Projects", "Project demo", "Sign out")
	if home.header.Get("Cache-Control") != "no-store" {
		t.Errorf("signed-in page Cache-Control %q", home.header.Get("Cache-Control"))
	}

	// Sign out ends the session for the API too.
	out := b.do("POST", "/ui/logout", url.Values{"csrf": {csrfOf(t, home)}})
	if out.status != http.StatusSeeOther || out.header.Get("Location") != "/ui/login" {
		t.Fatalf("sign out: %d %q", out.status, out.header.Get("Location"))
	}
	if r := f.e.Do("GET", "/v1/auth/me", sess.Value, nil); r.Status != 401 {
		t.Fatalf("session alive after sign out: %d", r.Status)
	}
	if r := b.get("/ui/"); r.status != http.StatusSeeOther {
		t.Fatalf("after sign out: %d", r.status)
	}
}

func TestSecureCookieBehindTrustedProxy(t *testing.T) {
	e := testenv.NewWith(t, testenv.Options{TrustedProxies: []string{"127.0.0.1/8", "::1"}})
	b := newBrowser(t, e.URL)
	lp := b.get("/ui/login")
	r := b.do("POST", "/ui/login", url.Values{"email": {testenv.AdminEmail}, "password": {testenv.AdminPassword}, "csrf": {csrfOf(t, lp)}}, "X-Forwarded-Proto", "https")
	if r.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", r.status)
	}
	var found bool
	for _, c := range r.header.Values("Set-Cookie") {
		if sc, _ := http.ParseSetCookie(c); sc != nil && sc.Name == "quire_session" {
			found = true
			if !sc.Secure || !sc.HttpOnly {
				t.Fatalf("behind an https proxy: %q", c)
			}
		}
	}
	if !found {
		t.Fatal("no session cookie")
	}
}

func TestForgedRequestsRefused(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, f.e.URL)
	token := b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	for _, tc := range []struct {
		name    string
		form    url.Values
		headers []string
	}{
		{"no token", url.Values{}, nil},
		{"wrong token", url.Values{"csrf": {"AAAA" + token[4:]}}, nil},
		{"token of another session", url.Values{"csrf": {newBrowser(t, f.e.URL).signIn(testenv.AdminEmail, testenv.AdminPassword)}}, nil},
		{"cross-site, right token", url.Values{"csrf": {token}}, []string{"Sec-Fetch-Site", "cross-site"}},
		{"other origin, right token", url.Values{"csrf": {token}}, []string{"Origin", "https://evil.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := b.do("POST", "/ui/logout", tc.form, tc.headers...)
			if r.status != http.StatusForbidden {
				t.Fatalf("forged sign-out: %d\n%s", r.status, r.body)
			}
			if r := b.get("/ui/"); r.status != 200 {
				t.Fatalf("the forged request signed the user out: %d", r.status)
			}
		})
	}
	// A sign-in form post without its cookie token is refused too.
	fresh := newBrowser(t, f.e.URL)
	r := fresh.do("POST", "/ui/login", url.Values{"email": {testenv.AdminEmail}, "password": {testenv.AdminPassword}, "csrf": {"guess"}})
	if r.status != http.StatusForbidden {
		t.Fatalf("forged sign-in: %d", r.status)
	}
}

func TestPages(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t, f.e.URL)
	b.signIn(testenv.AdminEmail, testenv.AdminPassword)

	proj := b.get("/ui/p/demo")
	wantPage(t, proj, 200, "Skill pdf-tools", "Prompt greeting", "v1", "production → v1", `Admin <span class="muted small">admin@example.com</span>`, "owner", "Recent activity",
		// each activity entry names what it changed and links to it
		`<a class="small" href="/ui/p/demo/skills/pdf-tools">Skill pdf-tools</a> <span class="kind">skill</span>`,
		`<a class="small" href="/ui/p/demo/prompts/greeting">Prompt greeting</a> <span class="kind">prompt</span>`)

	asset := b.get("/ui/p/demo/skills/pdf-tools")
	wantPage(t, asset, 200, `href="/ui/p/demo/skills/pdf-tools/v/1"`, "v1</a> <span class=\"live\">live</span>", "state-draft", "published", "vs base", "No open reviews.")

	pa := b.get("/ui/p/demo/prompts/greeting")
	wantPage(t, pa, 200, "production", "History of production")

	ver := b.get("/ui/p/demo/skills/pdf-tools/v/1")
	wantPage(t, ver, 200, "SKILL.md", "scripts/run.py", "<strong>bold</strong>",
		"git clone "+f.e.URL+"/git/demo/skills/pdf-tools.git", `data-copy="clone-url"`,
		`href="/ui/p/demo/skills/pdf-tools/v/1/zip"`, `href="/ui/p/demo/skills/pdf-tools/v/1/raw/SKILL.md"`,
		"notes/&lt;img src=x onerror=alert(3)&gt;.txt")
	for _, bad := range []string{"<script>alert(1)", "javascript:alert", "<img src=x"} {
		if strings.Contains(ver.body, bad) {
			t.Errorf("version page carries active content %q", bad)
		}
	}

	code := b.get("/ui/p/demo/skills/pdf-tools/v/1/f/scripts/run.py")
	wantPage(t, code, 200, `class="chroma"`, "hello")
	txt := b.get("/ui/p/demo/skills/pdf-tools/v/1/f/" + url.PathEscape("notes/<img src=x onerror=alert(3)>.txt"))
	wantPage(t, txt, 200, "&lt;b&gt;not bold&lt;/b&gt;")

	raw := b.get("/ui/p/demo/skills/pdf-tools/v/1/raw/SKILL.md")
	if raw.status != 200 || raw.header.Get("Content-Type") != "text/plain; charset=utf-8" || !strings.Contains(raw.header.Get("Content-Security-Policy"), "sandbox") || !strings.Contains(raw.body, "<script>alert(1)</script>") {
		t.Fatalf("raw: %d %v\n%s", raw.status, raw.header, raw.body)
	}
	zip := b.get("/ui/p/demo/skills/pdf-tools/v/1/zip")
	if zip.status != 200 || zip.header.Get("Content-Type") != "application/zip" || !strings.HasPrefix(zip.body, "PK") {
		t.Fatalf("zip: %d %v", zip.status, zip.header)
	}

	pv := b.get("/ui/p/demo/prompts/greeting/v/1")
	wantPage(t, pv, 200, "Hello {{name}} &lt;script&gt;", "gpt-test", "/git/demo/prompts/greeting.git")

	diff := b.get("/ui/p/demo/skills/pdf-tools/diff?from=1&to=2")
	wantPage(t, diff, 200, "scripts/run.py", `<tr class="del">`, "print(&#39;hello&#39;)", `<tr class="add">`,
		// word-level: only what changed on the line is marked
		"print(&#39;hello<mark>, world</mark>&#39;)")
	split := b.get("/ui/p/demo/skills/pdf-tools/diff?from=1&to=2&view=split")
	wantPage(t, split, 200, `class="split"`, `<td class="del">`, `<td class="add">`, "print(&#39;hello<mark>, world</mark>&#39;)")

	for _, path := range []string{"/ui/p/nope", "/ui/p/demo/skills/nope", "/ui/p/demo/widgets/pdf-tools", "/ui/p/demo/skills/pdf-tools/v/9", "/ui/p/demo/skills/pdf-tools/v/x", "/ui/p/demo/skills/pdf-tools/v/1/f/missing.md", "/ui/nowhere"} {
		if r := b.get(path); r.status != 404 {
			t.Errorf("%s: %d, want 404", path, r.status)
		}
	}
}

// A user outside the project sees none of it: every page of it is 404, as
// in the API; a member sees it.
func TestAccessRules(t *testing.T) {
	f := newFixture(t)
	f.e.CreateUser("stranger@example.com")
	b := newBrowser(t, f.e.URL)
	b.signIn("stranger@example.com", "password-stranger@example.com")
	home := b.get("/ui/")
	wantPage(t, home, 200, "not a member of any project")
	for _, path := range []string{
		"/ui/p/demo", "/ui/p/" + f.projectID, "/ui/p/demo/skills/pdf-tools", "/ui/p/demo/skills/pdf-tools/v/1",
		"/ui/p/demo/skills/pdf-tools/v/1/f/SKILL.md", "/ui/p/demo/skills/pdf-tools/v/1/raw/SKILL.md",
		"/ui/p/demo/skills/pdf-tools/v/1/zip", "/ui/p/demo/skills/pdf-tools/diff?from=1&to=2", "/ui/p/demo/prompts/greeting/v/1",
	} {
		r := b.get(path)
		if r.status != 404 || strings.Contains(r.body, "pdf-tools") && !strings.Contains(path, "pdf-tools") {
			t.Errorf("%s: %d, want 404\n%s", path, r.status, r.body)
		}
	}
	f.e.Must(200, "POST", "/v1/projects/"+f.projectID+"/members", f.e.Admin, map[string]string{"email": "stranger@example.com", "role": "viewer"})
	wantPage(t, b.get("/ui/p/demo/skills/pdf-tools/v/1"), 200, "SKILL.md")
	wantPage(t, b.get("/ui/"), 200, fmt.Sprintf(`href="/ui/p/%s"`, "demo"))
}
