package web_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/quire/quire/internal/testenv"
)

// TestBrowserOAuthConsent: the consent page in a real headless Chromium.
// A host (a registered client whose redirect URI is a loopback server)
// sends the browser to quire; the user signs in on the way, sees the
// client's name and redirect host, picks write and allows; Chromium
// follows the redirect to the host (the page's form-action lets it),
// which exchanges the code for tokens of /mcp. The account page then
// lists the application, and revoking it there ends the token. A probe in
// the client's name does not run.
func TestBrowserOAuthConsent(t *testing.T) {
	driverHeavy(t)
	e := testenv.New(t)
	c := newChrome(t)
	codes := make(chan url.Values, 1)
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		codes <- r.URL.Query()
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><html lang="en"><title>host</title><main><h1 id="done">Connected</h1></main></html>`))
	}))
	defer host.Close()
	redirect := host.URL + "/callback"
	name := `Probe Host <img src=x onerror=alert('client')>`
	reg := e.Must(201, "POST", "/oauth/register", "", map[string]any{"client_name": name, "redirect_uris": []string{redirect}})
	client := reg.JSON(t)["client_id"].(string)

	verifier := strings.Repeat("verifier-", 6)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect},
		"state": {"browser-state-42"}, "scope": {"read"}, "resource": {e.URL + "/mcp"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}
	c.step("the authorization request, signed out",
		chromedp.Navigate(e.URL+"/ui/oauth/authorize?"+q.Encode()),
		chromedp.WaitVisible(css("#email")),
		chromedp.SendKeys(css("#email"), testenv.AdminEmail),
		chromedp.SendKeys(css("#password"), testenv.AdminPassword),
		submit(chromedp.Submit(css("#password"))),
		chromedp.WaitVisible(css("#consent")),
	)
	if got := c.text(".client-name"); got != name {
		t.Errorf("client name shown as %q", got)
	}
	if got := c.text(".redirect-host"); got != strings.TrimPrefix(host.URL, "http://") {
		t.Errorf("redirect host shown as %q", got)
	}
	if got := c.eval(`document.querySelector('input[name=access]:checked').value`); got != "read" {
		t.Errorf("preselected access %q, want what the client asked (read)", got)
	}
	c.check("consent")
	c.shot("oauth-consent")
	c.step("choose write and allow",
		chromedp.Click(css(`input[name=access][value=write]`)),
		chromedp.Click(css("#allow")),
		chromedp.WaitVisible(css("#done")),
	)
	got := <-codes
	if got.Get("state") != "browser-state-42" || !strings.HasPrefix(got.Get("code"), "qoc_") {
		t.Fatalf("the host received %v", got)
	}
	res, err := http.PostForm(e.URL+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {got.Get("code")},
		"code_verifier": {verifier}, "client_id": {client}, "redirect_uri": {redirect}, "resource": {e.URL + "/mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		Scope       string `json:"scope"`
	}
	json.NewDecoder(res.Body).Decode(&tok)
	res.Body.Close()
	if res.StatusCode != 200 || tok.Scope != "write" {
		t.Fatalf("token: %d %+v", res.StatusCode, tok)
	}

	c.step("the account page", chromedp.Navigate(e.URL+"/ui/account"), chromedp.WaitVisible(css("#apps-h")))
	if s := c.text(`section[aria-labelledby="apps-h"]`); !strings.Contains(s, name) || !strings.Contains(s, "write") {
		t.Errorf("applications section: %q", s)
	}
	c.check("account with an application")
	c.step("revoke the application",
		submit(chromedp.Click(css(`form[action^="/ui/account/applications/"] button`))),
		chromedp.WaitVisible(css("#apps-h")),
	)
	if s := c.text(`section[aria-labelledby="apps-h"]`); !strings.Contains(s, "No applications") {
		t.Errorf("after revoking: %q", s)
	}
	if r := e.Do("POST", "/mcp", tok.AccessToken, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Accept: application/json, text/event-stream"); r.Status != 401 {
		t.Errorf("the revoked application's token on /mcp: %d", r.Status)
	}
	if len(c.alarms) > 0 {
		t.Errorf("alarms: %v", c.alarms)
	}
}
