package web_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/quire/quire/internal/testenv"
)

// axeSource is axe-core's script: QUIRE_TEST_AXE names it, else the copy
// .ci/run installs into its npm cache; "" when neither is there.
func axeSource(t *testing.T) string {
	t.Helper()
	paths := []string{os.Getenv("QUIRE_TEST_AXE")}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cache = filepath.Join(home, ".cache")
		}
	}
	if dir := os.Getenv("QUIRE_CI_NPM"); dir != "" {
		paths = append(paths, filepath.Join(dir, "node_modules/axe-core/axe.min.js"))
	}
	paths = append(paths, filepath.Join(cache, "quire-ci-npm/node_modules/axe-core/axe.min.js"))
	for _, p := range paths {
		if p == "" {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			return string(b)
		}
	}
	t.Log("axe-core is not installed (npm install --prefix ~/.cache/quire-ci-npm axe-core, or set QUIRE_TEST_AXE): skipping the accessibility checks")
	return ""
}

// chrome is a headless Chromium tab with alarms on anything a script
// probe could set off: a dialog, an uncaught exception, a console error.
type chrome struct {
	t      *testing.T
	ctx    context.Context
	mu     sync.Mutex
	alarms []string
	axe    string
	shots  string // where screenshots go
	pages  int    // pages checked by axe
}

func newChrome(t *testing.T) *chrome {
	bin := testenv.Chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("font-render-hinting", "none"),
		chromedp.NoDefaultBrowserCheck,
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	c := &chrome{t: t, axe: axeSource(t), shots: os.Getenv("QUIRE_UI_SCREENSHOTS")}
	if c.shots == "" {
		c.shots = t.TempDir()
	} else if err := os.MkdirAll(c.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	// Subscribing starts the browser (on a context without a deadline,
	// which would end the browser).
	dialogs := chromedp.Events(bctx, cdppage.JavascriptDialogOpening)
	exceptions := chromedp.Events(bctx, runtime.ExceptionThrown)
	console := chromedp.Events(bctx, runtime.ConsoleAPICalled)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			c.alarm("dialog: " + ev.Message)
			chromedp.Call(bctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			c.alarm("exception: " + ev.ExceptionDetails.Text)
		}
	}()
	go func() {
		for ev, err := range console {
			if err != nil {
				return
			}
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				c.alarm(fmt.Sprintf("console.%s: %d args", ev.Type, len(ev.Args)))
			}
		}
	}()
	ctx, cancelTime := context.WithTimeout(bctx, 150*time.Second)
	t.Cleanup(cancelTime)
	c.ctx = ctx
	c.step("viewport", chromedp.EmulateViewport(1280, 860))
	return c
}

// signIn signs in on the server at base; signOut signs out.
func (c *chrome) signIn(base, email, password string) {
	c.t.Helper()
	c.step("sign in as "+email,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(css("#email")),
		chromedp.SendKeys(css("#email"), email),
		chromedp.SendKeys(css("#password"), password),
		submit(chromedp.Submit(css("#password"))),
		chromedp.WaitVisible(css("a.who")),
	)
}

func (c *chrome) signOut() {
	c.t.Helper()
	c.step("sign out", submit(chromedp.Click(css(`form[action="/ui/logout"] button`))), chromedp.WaitVisible(css("#email")))
}

func (c *chrome) alarm(s string) { c.mu.Lock(); c.alarms = append(c.alarms, s); c.mu.Unlock() }

func (c *chrome) step(what string, steps ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		loc, _ := chromedp.Run(c.ctx, chromedp.Location())
		body, _ := chromedp.Run(c.ctx, chromedp.Text(css("main")))
		c.t.Fatalf("%s: %v\nat %s:\n%s", what, err, loc, body)
	}
}

func (c *chrome) text(sel string) string {
	c.t.Helper()
	s, err := chromedp.Run(c.ctx, chromedp.Text(css(sel)))
	if err != nil {
		c.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func (c *chrome) eval(js string) string {
	c.t.Helper()
	s, err := chromedp.Run(c.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		c.t.Fatalf("evaluate %s: %v", js, err)
	}
	return s
}

func (c *chrome) location() string {
	c.t.Helper()
	loc, err := chromedp.Run(c.ctx, chromedp.Location())
	if err != nil {
		c.t.Fatal(err)
	}
	return loc
}

// check runs the checks every main page gets: no element a probe could
// have injected (the CSP would stop a script from running, so look for
// the elements too), and no serious or critical axe-core violation.
func (c *chrome) check(name string) {
	c.t.Helper()
	injected := c.eval(`String(document.querySelectorAll('script:not([src="/ui/static/ui.js"]), [onerror], [onload], iframe, a[href^="javascript:"]').length)`)
	if injected != "0" {
		c.t.Errorf("%s: %s injected elements", name, injected)
	}
	if c.axe == "" {
		return
	}
	if _, err := chromedp.Run(c.ctx, chromedp.Evaluate[bool](c.axe+";true")); err != nil {
		c.t.Fatalf("load axe: %v", err)
	}
	found, err := chromedp.Run(c.ctx, chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
		.filter(v => v.impact === "serious" || v.impact === "critical")
		.map(v => v.impact + " " + v.id + ": " + v.help + " at " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", ")))`, chromedp.EvalAwaitPromise))
	if err != nil {
		c.t.Fatalf("axe on %s: %v", name, err)
	}
	c.pages++
	for _, v := range found {
		c.t.Errorf("axe, %s page: %s", name, v)
	}
}

// shot saves a screenshot of the viewport as name.png, in its 256 most
// frequent colours: a page of text and flat colours loses nothing a
// reader sees and the file shrinks to about a third (docs/ui holds some).
func (c *chrome) shot(name string) {
	c.t.Helper()
	raw, err := chromedp.Run(c.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		c.t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		c.t.Fatal(err)
	}
	var out bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, paletted(img)); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.shots, name+".png"), out.Bytes(), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// paletted maps img to a palette of its 256 most frequent colours
// (nearest match, no dithering).
func paletted(img image.Image) *image.Paletted {
	b := img.Bounds()
	rgb := func(x, y int) color.RGBA {
		r, g, bl, _ := img.At(x, y).RGBA()
		return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 255}
	}
	count := map[color.RGBA]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			count[rgb(x, y)]++
		}
	}
	cs := make([]color.RGBA, 0, len(count))
	for c := range count {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool { return count[cs[i]] > count[cs[j]] })
	pal := make(color.Palette, 0, 256)
	for _, c := range cs[:min(len(cs), 256)] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(b, pal)
	index := map[color.RGBA]uint8{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := rgb(x, y)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	return out
}

func css(s string) chromedp.CSS { return chromedp.CSS(s) }

// submit runs action (a click that posts a form) and waits for the page
// it leads to: the old document is marked, and the wait is for a body
// without the mark.
func submit(action chromedp.Action[chromedp.Void]) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Evaluate[bool](`document.body.dataset.stale = "1"; true`)(ctx, t)
			return chromedp.Void{}, err
		},
		action,
		chromedp.WaitReady(css("body:not([data-stale])")),
	)
}

// The whole flow a newcomer goes through, in a real headless Chromium,
// asserting what each page shows: sign in, create a project and a skill,
// publish it, set the review policy and add a reviewer in the settings,
// open a draft and edit a file, see the word-level diff, find publishing
// blocked with the reason, open a review, comment on a diff line with
// the keyboard, sign in as the reviewer (whose name is a script probe)
// and approve, publish, set and move a label, and render a prompt in the
// playground. Script probes sit in a project name, a display name, file
// names and contents, a prompt template, comments and variables: none
// may run (dialogs, exceptions and console errors fail the test). Every
// main page is checked by axe-core and saved as a screenshot.
func TestBrowserFlow(t *testing.T) {
	driverHeavy(t)
	f := newFixture(t)
	c := newChrome(t)
	e := f.e
	revID, _ := e.CreateUser("rev@example.com")
	e.Must(200, "PATCH", "/v1/users/"+revID, e.Admin, map[string]string{"name": "Grace Hopper"})
	// A display name cannot hold < or >; this one tries to break out of
	// an attribute instead.
	malID, _ := e.CreateUser("mallory@example.com")
	mallory := `Mallory " autofocus onfocus="alert('name')" x="&amp;`
	e.Must(200, "PATCH", "/v1/users/"+malID, e.Admin, map[string]string{"name": mallory})
	probe := `<img src=x onerror=alert('comment')><script>alert('comment')</script>`

	signIn := func(email, password string) { t.Helper(); c.signIn(e.URL, email, password) }
	signOut := c.signOut

	c.step("the sign-in page", chromedp.Navigate(e.URL+"/"), chromedp.WaitVisible(css("#email")))
	c.check("sign-in")
	c.shot("login")
	signIn(testenv.AdminEmail, testenv.AdminPassword)
	if h := c.text("h1"); h != "Projects" {
		t.Fatalf("after sign in: %q", h)
	}

	// A project, from the projects page.
	c.step("create a project",
		chromedp.Click(css("details.menu > summary")),
		chromedp.SendKeys(css("#project-name"), "Support desk"),
		chromedp.SendKeys(css("#project-description"), "Prompts and skills of the help desk"),
		submit(chromedp.Click(css(`form[action="/ui/projects"] button`))),
		chromedp.WaitVisible(css("#skills-h")),
	)
	project := c.location()
	if h := c.text("h1"); h != "Support desk" {
		t.Errorf("project heading %q", h)
	}
	c.check("new project")

	// A skill, from the project page: its first draft holds a SKILL.md;
	// publish it.
	c.step("create a skill",
		chromedp.Click(css(`details.menu > summary`)),
		chromedp.SendKeys(css("#skill-name"), "Refunds"),
		chromedp.SendKeys(css("#skill-description"), "Handle refund requests"),
		submit(chromedp.Click(css(`form[action$="/skills"] button`))),
		chromedp.WaitVisible(css("article.markdown")),
	)
	skill := strings.TrimSuffix(c.location(), "/v/1")
	if md := c.text("article.markdown"); !strings.Contains(md, "Instructions for the agent.") {
		t.Errorf("new skill's SKILL.md: %q", md)
	}
	c.step("publish v1", submit(chromedp.Click(css(`form[action$="/v/1/publish"] button`))), chromedp.WaitVisible(css("h1 .live")))

	// Settings: one approval required; the reviewer joins as an editor.
	c.step("open the settings", chromedp.Navigate(project+"/settings"), chromedp.WaitVisible(css("#set-approvals")))
	c.check("settings")
	c.step("require an approval",
		chromedp.SetValue(css("#set-approvals"), "1"),
		submit(chromedp.Click(css(`form[action$="/settings"] button.primary`))),
		chromedp.WaitVisible(css("#member-email")),
		chromedp.SendKeys(css("#member-email"), "rev@example.com"),
		submit(chromedp.Click(css(`form[action$="/members"] button`))),
		chromedp.WaitVisible(css("#member-email")),
	)
	if s := c.text("#members-h + table"); !strings.Contains(s, "rev@example.com") || !strings.Contains(s, "editor") {
		t.Errorf("members after adding: %q", s)
	}
	c.shot("settings")

	// A draft from v1; edit SKILL.md; the diff marks the changed words.
	c.step("open a draft and edit SKILL.md",
		chromedp.Navigate(skill+"/v/1"),
		submit(chromedp.Click(css(`form[action$="/drafts"] button`))),
		chromedp.WaitReady(css("#draft-h")),
		chromedp.Click(css(`a[href$="/v/2/edit/SKILL.md"]`)),
		chromedp.WaitVisible(css("#content")),
		chromedp.SetValue(css("#content"), "---\nname: refunds\ndescription: Handle refund requests\n---\n\n# Refunds\n\nInstructions for the support agent.\n\n## Steps\n\n1. Find the order by its number.\n2. Check the refund policy of its country.\n3. Reply with the amount and the date.\n"),
		submit(chromedp.Click(css(`form[action$="/files"] button.primary`))),
		chromedp.WaitVisible(css("article.markdown")),
	)
	c.check("version (draft)")
	c.shot("version")
	c.step("see the changes", chromedp.Click(css(`a[href*="/diff?from=1&to=2"]`)), chromedp.WaitVisible(css("table.unified")))
	if m := c.text("tr.add mark"); m != "support " {
		t.Errorf("word-level highlight: %q", m)
	}
	c.check("diff")
	c.step("side by side", chromedp.Navigate(c.location()+"&view=split"), chromedp.WaitVisible(css("table.split")))
	c.shot("diff-split")

	// Publishing is blocked until the review is approved, and says so.
	c.step("back to the draft", chromedp.Navigate(skill+"/v/2"), chromedp.WaitVisible(css("#publish-why")))
	if why := c.text("#publish-why"); !strings.Contains(why, "the draft has no open review") {
		t.Errorf("publish blocked because %q", why)
	}
	if c.eval(`String(document.querySelector('form[action$="/v/2/publish"] button').disabled)`) != "true" {
		t.Errorf("publish is not disabled")
	}

	// A review; a comment on a diff line, keyboard only.
	c.step("open a review",
		chromedp.SendKeys(css("#review-title"), "Steps for refunds"),
		submit(chromedp.Submit(css("#review-title"))),
		chromedp.WaitVisible(css("#merge-h")),
	)
	review := c.location()
	c.step("comment on a line with the keyboard",
		chromedp.Focus(css(`button.lnc[data-side="head"][data-line="7"]`)),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(css("tr.composer #comment-body")),
	)
	if id := c.eval(`document.activeElement.id`); id != "comment-body" {
		t.Errorf("focus after pressing a line: %q", id)
	}
	c.step("write the comment",
		chromedp.KeyEvent("Which policy applies to EU orders?"),
		submit(chromedp.Click(css("#comment-form button.primary"))),
		chromedp.WaitVisible(css("tr.note")),
	)
	if n := c.text("tr.note"); !strings.Contains(n, "Which policy applies to EU orders?") {
		t.Errorf("line comment shows %q", n)
	}
	c.step("a comment with script probes",
		chromedp.SendKeys(css("#comment-body"), probe),
		submit(chromedp.Click(css("#comment-form button.primary"))),
		chromedp.WaitVisible(css("article.comment:nth-of-type(2)")),
	)
	if n := c.text("article.comment:nth-of-type(2) .body"); n != probe {
		t.Errorf("comment shows %q", n)
	}
	if s := c.text("#merge-h"); s != "Not ready to publish" {
		t.Errorf("review before approval: %q", s)
	}
	signOut()

	// The reviewer approves.
	signIn("rev@example.com", "password-rev@example.com")
	c.step("open the review", chromedp.Navigate(review), chromedp.WaitVisible(css("#verdicts-h")))
	c.step("approve", submit(chromedp.Click(css(`button[value="approve"]`))), chromedp.WaitVisible(css("#merge-h")))
	if s := c.text("#merge-h"); s != "Ready to publish" {
		t.Errorf("review after approval: %q", s)
	}
	if v := c.text("#verdicts-h + ul"); !strings.Contains(v, "Grace Hopper") || !strings.Contains(v, "approved") {
		t.Errorf("verdicts: %q", v)
	}
	c.check("review")
	c.shot("review")
	signOut()

	// The author publishes, then points a label at v2 and moves it to v1.
	signIn(testenv.AdminEmail, testenv.AdminPassword)
	c.step("publish v2",
		chromedp.Navigate(skill+"/v/2"),
		chromedp.WaitEnabled(css(`form[action$="/v/2/publish"] button`)),
		submit(chromedp.Click(css(`form[action$="/v/2/publish"] button`))),
		chromedp.WaitVisible(css("h1 .live")),
	)
	c.step("set a label",
		chromedp.Navigate(skill),
		chromedp.SendKeys(css("#label-name"), "production"),
		chromedp.SetValue(css("#label-version"), "2"),
		submit(chromedp.Click(css(`form[action$="/labels"] button`))),
		chromedp.WaitVisible(css("#labels-h + ul")),
		chromedp.SendKeys(css("#label-name"), "production"),
		chromedp.SetValue(css("#label-version"), "1"),
		submit(chromedp.Click(css(`form[action$="/labels"] button`))),
		chromedp.WaitVisible(css("#labels-h + ul details")),
	)
	labels := c.text("#labels-h + ul")
	if !strings.Contains(labels, "production → v1") {
		t.Errorf("labels after the move: %q", labels)
	}
	c.check("asset")
	c.shot("asset")

	// The project page lists the skill with its live version and label.
	c.step("the project page", chromedp.Navigate(project), chromedp.WaitVisible(css("#skills-h")))
	if s := c.text("#skills-h ~ table, .sechead + table"); !strings.Contains(s, "Refunds") || !strings.Contains(s, "v2") || !strings.Contains(s, "production → v1") {
		t.Errorf("project page skills: %q", s)
	}
	c.check("project")
	c.step("the projects page", chromedp.Navigate(e.URL+"/ui/"), chromedp.WaitVisible(css("ul.cards")))
	c.check("projects")
	c.shot("projects")

	// The fixture's prompt in the playground: its template holds a probe.
	c.step("render a prompt",
		chromedp.Navigate(e.URL+"/ui/p/demo/prompts/greeting/play"),
		chromedp.WaitVisible(css("#var-name")),
		chromedp.SendKeys(css("#var-name"), "Ada"),
		submit(chromedp.Click(css(`button[value="render"]`))),
		chromedp.WaitVisible(css("#rendered")),
	)
	if out := c.text("#rendered"); out != `Hello Ada <script>` {
		t.Errorf("rendered: %q", out)
	}
	c.check("playground")
	c.shot("playground")
	c.step("render a probe",
		chromedp.SetValue(css("#var-name"), `<img src=x onerror=alert('var')>`),
		submit(chromedp.Click(css(`button[value="render"]`))),
		chromedp.WaitVisible(css("#rendered")),
	)
	if out := c.text("#rendered"); out != `Hello <img src=x onerror=alert('var')> <script>` {
		t.Errorf("rendered: %q", out)
	}
	c.check("playground with a probe")
	c.step("a skill file", chromedp.Navigate(e.URL+"/ui/p/demo/skills/pdf-tools/v/1/f/scripts/run.py"), chromedp.WaitVisible(css(".code")))
	c.check("file")
	// The fixture's skill: a script and a javascript: link in SKILL.md,
	// an <img onerror> file name.
	c.step("a skill with probes", chromedp.Navigate(e.URL+"/ui/p/demo/skills/pdf-tools/v/1"), chromedp.WaitVisible(css("article.markdown")))
	if md := c.text("article.markdown"); !strings.Contains(md, "Use bold moves.") {
		t.Errorf("SKILL.md as rendered: %q", md)
	}
	if tree := c.text(".tree"); !strings.Contains(tree, "notes/<img src=x onerror=alert(3)>.txt") {
		t.Errorf("file tree: %q", tree)
	}
	c.check("version (published)")
	// A display name that tries to break out of an attribute.
	e.Must(200, "POST", "/v1/projects/demo/members", e.Admin, map[string]string{"email": "mallory@example.com", "role": "viewer"})
	c.step("a member with a probe for a name", chromedp.Navigate(e.URL+"/ui/p/demo/settings"), chromedp.WaitVisible(css("#members-h")))
	if m := c.text("#members-h + table"); !strings.Contains(m, mallory) {
		t.Errorf("members: %q", m)
	}
	c.check("settings with a probe")
	c.step("the account page", chromedp.Navigate(e.URL+"/ui/account"), chromedp.WaitVisible(css("#keys-h")))
	c.check("account")

	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.alarms) > 0 {
		t.Errorf("script ran in the page: %v", c.alarms)
	}
	t.Logf("axe checked %d pages; screenshots in %s", c.pages, c.shots)
}

// TestBrowserReviewGate is the review gate as the UI shows it: the
// owner's own approval listed with why it does not count, the blocked
// publish saying so once, the owner's override of the policy and of a
// protected label (each asking for a reason, each recorded), and a
// verdict from a page loaded before a push refused rather than given to
// a head the reviewer never saw.
func TestBrowserReviewGate(t *testing.T) {
	driverHeavy(t)
	f := newFixture(t)
	c := newChrome(t)
	e := f.e
	sk := "/v1/skills/" + f.skillID
	e.Must(200, "PATCH", "/v1/projects/demo", e.Admin, map[string]any{"review_policy": map[string]any{"required_approvals": 1, "protected_labels": []string{"production"}}})
	revID, _ := e.CreateUser("rev@example.com")
	e.Must(200, "PUT", "/v1/projects/demo/members/"+revID, e.Admin, map[string]string{"role": "editor"})
	e.Must(201, "POST", sk+"/versions/2/reviews", e.Admin, map[string]string{"title": "Louder hello"})
	skill := e.URL + "/ui/p/demo/skills/pdf-tools"

	// The owner wrote draft 2 and approves it: listed, not counted.
	c.signIn(e.URL, testenv.AdminEmail, testenv.AdminPassword)
	c.step("open the review", chromedp.Navigate(skill+"/reviews/1"), chromedp.WaitVisible(css("#verdicts-h")))
	c.step("approve my own draft", submit(chromedp.Click(css(`button[value="approve"]`))), chromedp.WaitVisible(css(".not-counting")))
	if v := c.text("#verdicts-h + ul"); !strings.Contains(v, "approved") || !strings.Contains(v, "Does not count: your own approval does not count under this project's policy.") {
		t.Errorf("verdicts: %q", v)
	}
	if s := c.text("#merge-h"); s != "Not ready to publish" {
		t.Errorf("merge panel: %q", s)
	}
	if why := c.text("#merge-why"); strings.Count(why, "1 approval(s) required, 0 counting") != 1 || !strings.Contains(why, "self_approval") {
		t.Errorf("merge panel reasons: %q", why)
	}
	c.check("review with a self-approval")
	c.shot("review-self-approval")

	// The draft page: blocked, said once; the owner publishes anyway.
	c.step("the draft", chromedp.Navigate(skill+"/v/2"), chromedp.WaitVisible(css("#publish-why")))
	if why := c.text("#publish-why"); strings.Count(why, "approval(s) required") != 1 || !strings.Contains(why, "does not count: self_approval") {
		t.Errorf("publish blocked because %q", why)
	}
	c.check("draft with an override")
	c.step("publish past the policy",
		chromedp.SendKeys(css("#override-reason"), "hotfix for the outage"),
		submit(chromedp.Click(css(`form.override button`))),
		chromedp.WaitVisible(css("h1 .live")),
	)
	rv := e.Must(200, "GET", sk+"/reviews/1", e.Admin, nil).JSON(t)["review"].(map[string]any)
	if rv["state"] != "merged" || rv["override"].(map[string]any)["reason"] != "hotfix for the outage" {
		t.Errorf("review after the override: %v", rv)
	}

	// A protected label: v1 was never reviewed, so the owner overrides,
	// and removes it again, each with a reason.
	c.step("move production without an override",
		chromedp.Navigate(skill),
		chromedp.SendKeys(css("#label-name"), "production"),
		chromedp.SetValue(css("#label-version"), "1"),
		submit(chromedp.Click(css(`form[action$="/labels"] button`))),
		chromedp.WaitVisible(css("[role=alert]")),
	)
	if msg := c.text("[role=alert]"); !strings.Contains(msg, "label production is protected") {
		t.Errorf("protected label move: %q", msg)
	}
	c.step("move it with the owner's override",
		chromedp.Navigate(skill),
		chromedp.SendKeys(css("#label-name"), "production"),
		chromedp.SetValue(css("#label-version"), "1"),
		chromedp.Click(css("#label-override")),
		chromedp.SendKeys(css("#label-reason"), "roll back to v1"),
		submit(chromedp.Click(css(`form[action$="/labels"] button`))),
		chromedp.WaitVisible(css("#delete-reason-production")),
		chromedp.Click(css("#labels-h + ul details summary")),
	)
	if l := c.text("#labels-h + ul"); !strings.Contains(l, "production protected → v1") || !strings.Contains(l, "owner's override: roll back to v1") {
		t.Errorf("labels: %q", l)
	}
	c.check("asset with a protected label")
	c.step("delete the protected label",
		chromedp.SendKeys(css("#delete-reason-production"), "retired"),
		submit(chromedp.Click(css(`form[action$="/labels/production/delete"] button`))),
		chromedp.WaitVisible(css("#labels-h")),
	)
	h := e.Must(200, "GET", sk+"/labels/production/history", e.Admin, nil).JSON(t)["history"].([]any)
	if len(h) != 2 || h[0].(map[string]any)["action"] != "delete" || h[0].(map[string]any)["override"] != "retired" {
		t.Errorf("label history: %v", h)
	}
	c.signOut()

	// A reviewer loads a review, the author pushes, the reviewer
	// approves from the page they loaded: refused, nothing recorded.
	e.Must(201, "POST", sk+"/versions", e.Admin, nil)
	e.Must(200, "POST", sk+"/versions/3/files", e.Admin, map[string]string{"file_path": "scripts/run.py", "content": "print('v3')\n"})
	e.Must(201, "POST", sk+"/versions/3/reviews", e.Admin, map[string]string{"title": "v3"})
	c.signIn(e.URL, "rev@example.com", "password-rev@example.com")
	c.step("the reviewer reads review 2", chromedp.Navigate(skill+"/reviews/2"), chromedp.WaitVisible(css("#verdicts-h")))
	e.Must(200, "POST", sk+"/versions/3/files", e.Admin, map[string]string{"file_path": "scripts/run.py", "content": "print('unseen')\n"})
	c.step("approve from the stale page", submit(chromedp.Click(css(`button[value="approve"]`))), chromedp.WaitVisible(css("[role=alert]")))
	if h1, msg := c.text("h1"), c.text("[role=alert]"); h1 != "409" || !strings.Contains(msg, "head moved") {
		t.Errorf("approval from a stale page: %s %q", h1, msg)
	}
	if l := e.Must(200, "GET", sk+"/reviews/2", e.Admin, nil).JSON(t)["verdicts"].([]any); len(l) != 0 {
		t.Errorf("verdicts after the refused approval: %v", l)
	}
	c.step("read it again and approve",
		chromedp.Navigate(skill+"/reviews/2"),
		chromedp.WaitVisible(css("#verdicts-h")),
		submit(chromedp.Click(css(`button[value="approve"]`))),
		chromedp.WaitVisible(css("#merge-h")),
	)
	if s := c.text("#merge-h"); s != "Ready to publish" {
		t.Errorf("after approving the head read: %q", s)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.alarms) > 0 {
		t.Errorf("script ran in the page: %v", c.alarms)
	}
}
