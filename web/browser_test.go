package web_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/quire/quire/internal/testenv"
)

// chromium finds Debian's chromium (.ci/run installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("QUIRE_TEST_CHROMIUM"), "/usr/bin/chromium"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	t.Skip("chromium is not installed (apt-get install chromium, or set QUIRE_TEST_CHROMIUM): skipping the browser test")
	return ""
}

// TestBrowserSignInAndReadSkill drives a real headless Chromium: sign in
// through the form, open the project, the skill, its version and a file,
// asserting what the page shows; then open a draft, edit a file through
// the form and see the change in the diff. The fixture's files carry script probes
// (in SKILL.md, a file name, a prompt template); none may run: the test
// fails on any dialog or uncaught exception.
func TestBrowserSignInReadAndEditSkill(t *testing.T) {
	bin := chromium(t)
	f := newFixture(t)

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
		chromedp.NoDefaultBrowserCheck,
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()

	// Every dialog and uncaught exception is an alarm: the fixture's
	// script probes must not run. Subscribing starts the browser (on a
	// context without a deadline, which would end the browser).
	var mu sync.Mutex
	var alarms []string
	alarm := func(s string) { mu.Lock(); alarms = append(alarms, s); mu.Unlock() }
	dialogs := chromedp.Events(bctx, cdppage.JavascriptDialogOpening)
	exceptions := chromedp.Events(bctx, runtime.ExceptionThrown)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			alarm("dialog: " + ev.Message)
			chromedp.Call(bctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			alarm("exception: " + ev.ExceptionDetails.Text)
		}
	}()
	ctx, cancelTime := context.WithTimeout(bctx, 90*time.Second)
	defer cancelTime()

	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(css(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	step := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	step("sign in",
		chromedp.Navigate(f.e.URL+"/"),
		chromedp.WaitVisible(css("#email")),
		chromedp.SendKeys(css("#email"), testenv.AdminEmail),
		chromedp.SendKeys(css("#password"), testenv.AdminPassword),
		chromedp.Submit(css("#password")),
		chromedp.WaitVisible(css("ul.cards a")),
	)
	heading := text("h1")
	step("open the project", chromedp.Click(css("ul.cards a")), chromedp.WaitVisible(css("#skills-h")))
	project := text("main")
	step("open the skill's version",
		chromedp.Click(css(`a[href="/ui/p/demo/skills/pdf-tools"]`)),
		chromedp.WaitVisible(css("#versions-h")),
		chromedp.Click(css(`a[href="/ui/p/demo/skills/pdf-tools/v/1"]`)),
		chromedp.WaitVisible(css("article.markdown")),
	)
	markdown := text("article.markdown")
	// The CSP would stop an injected script from running, so look for
	// injected elements too: the one script is the page's own.
	injected, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('script:not([src="/ui/static/ui.js"]), [onerror], a[href^="javascript:"]').length`))
	if err != nil || injected != 0 {
		t.Errorf("version page holds %d injected elements (%v)", injected, err)
	}
	clone, err := chromedp.Run(ctx, chromedp.Value(css("#clone-url")))
	if err != nil {
		t.Fatal(err)
	}
	step("open a file",
		chromedp.Click(css(`a[href="/ui/p/demo/skills/pdf-tools/v/1/f/scripts/run.py"]`)),
		chromedp.WaitVisible(css(".code")),
	)
	file := text(".file")
	// The prompt page shows its template (with a script probe) as text.
	step("open the prompt", chromedp.Navigate(f.e.URL+"/ui/p/demo/prompts/greeting/v/1"), chromedp.WaitVisible(css("#content-h")))
	template := text("pre.source")

	// Edit a file in a new draft, then see the change in the diff.
	step("open a draft and edit a file",
		chromedp.Navigate(f.e.URL+"/ui/p/demo/skills/pdf-tools"),
		chromedp.WaitVisible(css("#draft-from")),
		chromedp.Click(css(`form[action$="/drafts"] button[type=submit]`)),
		chromedp.WaitVisible(css(`a[href="/ui/p/demo/skills/pdf-tools/v/3/edit/SKILL.md"]`)),
		chromedp.Navigate(f.e.URL+"/ui/p/demo/skills/pdf-tools/v/3/edit/scripts/run.py"),
		chromedp.WaitVisible(css("#content")),
		chromedp.SetValue(css("#content"), "print('from the browser')\n"),
		chromedp.Submit(css("#content")),
		chromedp.WaitVisible(css(".code")),
		chromedp.Navigate(f.e.URL+"/ui/p/demo/skills/pdf-tools/diff?to=3"),
		chromedp.WaitVisible(css("table.unified")),
	)
	diff := text("table.unified")
	if !strings.Contains(diff, "print('from the browser')") || !strings.Contains(diff, "print('hello')") {
		t.Errorf("diff of the draft: %q", diff)
	}

	if heading != "Projects" || !strings.Contains(project, "Skill pdf-tools") || !strings.Contains(project, "Prompt greeting") {
		t.Errorf("after sign in: heading %q, project page %q", heading, project)
	}
	if !strings.Contains(markdown, "Use bold moves.") || strings.Contains(markdown, "<script>") {
		t.Errorf("SKILL.md as rendered: %q", markdown)
	}
	if clone != "git clone "+f.e.URL+"/git/demo/skills/pdf-tools.git" {
		t.Errorf("clone url %q", clone)
	}
	if !strings.Contains(file, "scripts/run.py") || !strings.Contains(file, "print('hello')") {
		t.Errorf("file view: %q", file)
	}
	if template != "Hello {{name}} <script>" {
		t.Errorf("prompt template shows %q", template)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(alarms) > 0 {
		t.Errorf("script ran in the page: %v", alarms)
	}
}
