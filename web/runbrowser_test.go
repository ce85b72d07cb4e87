package web_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/quire/quire/internal/testenv"
)

// The playground's Run button in headless Chromium, against a local
// OpenAI-compatible provider: two versions side by side with output,
// finish reason, tokens and latency; a variable holding a script probe
// comes back in the model's output as text; a provider's failure is a
// message beside the form. The page is checked by axe-core and saved
// as playground-run.png (docs/ui has it).
func TestBrowserPlaygroundRun(t *testing.T) {
	driverHeavy(t)
	f, prov := runFixture(t)
	c := newChrome(t)
	e := f.e
	c.signIn(e.URL, testenv.AdminEmail, testenv.AdminPassword)

	c.step("run v1 beside v2",
		chromedp.Navigate(e.URL+playPath),
		chromedp.WaitVisible(css("#var-name")),
		chromedp.SendKeys(css("#var-name"), "Ada"),
		chromedp.SetValue(css("#compare"), "2"),
		submit(chromedp.Click(css("#run"))),
		chromedp.WaitVisible(css(".runs")),
	)
	if h := c.text("#runs-h"); h != "Runs side by side" {
		t.Errorf("heading %q", h)
	}
	left, right := c.text(`[aria-labelledby="run-h-0"]`), c.text(`[aria-labelledby="run-h-1"]`)
	for _, want := range []string{"v1", "gpt-test says: Hello Ada <script>", "Finish reason", "stop", "12 in, 8 out", " ms", "gpt-test via local"} {
		if !strings.Contains(left, want) {
			t.Errorf("left column lacks %q: %q", want, left)
		}
	}
	for _, want := range []string{"v2", "gpt-two says: Hi Ada!", "12 in, 8 out", "gpt-two via local"} {
		if !strings.Contains(right, want) {
			t.Errorf("right column lacks %q: %q", want, right)
		}
	}
	if v := c.eval(`document.querySelector("#compare").value`); v != "2" {
		t.Errorf("compare after the run: %q", v)
	}
	c.check("playground run")
	c.shot("playground-run")

	probe := `<img src=x onerror=alert('run')>`
	c.step("run a probe",
		chromedp.SetValue(css("#var-name"), probe),
		chromedp.SetValue(css("#compare"), "0"),
		submit(chromedp.Click(css("#run"))),
		chromedp.WaitVisible(css(".run .output")),
	)
	if out := c.text(".run .output"); out != "gpt-test says: Hello "+probe+" <script>" {
		t.Errorf("output: %q", out)
	}
	c.check("playground run with a probe")

	prov.set(func(w http.ResponseWriter, _ string) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, `{"error":{"message":"upstream model crashed"}}`)
		return true
	})
	c.step("a provider failure",
		chromedp.SetValue(css("#var-name"), "Ada"),
		submit(chromedp.Click(css("#run"))),
		chromedp.WaitVisible(css(".run [role=alert]")),
	)
	if msg := c.text(".run [role=alert]"); msg != `model provider "local" answered 502: upstream model crashed` {
		t.Errorf("failure shows %q", msg)
	}
	c.check("playground run failed")

	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.alarms) > 0 {
		t.Errorf("script ran in the page: %v", c.alarms)
	}
}

// driverHeavy skips a test under the race detector: one whose client is
// another program driving the server request by request (a browser, the
// MCP Inspector, the TypeScript SDK, the stdio bridge). The detector
// finds nothing in such a sequence that the concurrency tests do not,
// and makes these the package's slowest tests; make test runs them
// without it (Makefile).
func driverHeavy(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("driven by another program, request by request: make test runs it without -race")
	}
}
