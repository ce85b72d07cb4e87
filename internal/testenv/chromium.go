package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// Chromium finds Debian's chromium (.ci/run installs it), or the binary
// QUIRE_TEST_CHROMIUM names, for the tests that drive a browser with
// chromedp; without one the test is skipped, saying why.
func Chromium(t testing.TB) string {
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
	t.Skip("chromium is not installed (apt-get install chromium, or set QUIRE_TEST_CHROMIUM): the browser test is skipped")
	return ""
}
