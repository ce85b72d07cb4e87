package mcp_test

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/quire/quire"
	"github.com/quire/quire/internal/server"
	"github.com/quire/quire/internal/testenv"
)

// TestTypeScriptOAuth: a host adds quire by URL alone through the
// official TypeScript SDK v2's OAuth client provider
// (testdata/interop2/oauth.mjs), with the user's side played by headless
// Chromium: the SDK's first request is a 401 whose resource_metadata
// leads it to the protected resource metadata and quire's authorization
// server metadata; it registers (Dynamic Client Registration, or names
// itself by a Client ID Metadata Document that quire fetches), sends the
// browser to the authorization URL, where Chromium signs in and approves
// on the consent page, and quire redirects to the SDK's loopback
// callback; the SDK exchanges the code with its PKCE verifier and makes
// MCP calls (prompts/list, prompts/get, a tool). When the access token
// expires (the API's clock moved an hour on) the SDK's next call is a
// 401 and it refreshes, both tokens rotated; when the user revokes the
// application on the account page, the next call fails and the SDK drops
// its tokens and asks for a new authorization.
//
// Registration by DCR is tried with protocol 2026-07-28 (no session), by
// metadata document with 2025-11-25 (a session). Needs node, `npm ci` in
// testdata/interop2 and chromium (.ci/run has all three); skipped, saying
// which is missing, without them.
func TestTypeScriptOAuth(t *testing.T) {
	driverHeavy(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the TypeScript SDK OAuth test is skipped")
	}
	dir, _ := filepath.Abs("testdata/interop2")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "client")); err != nil {
		t.Skip("the TypeScript SDK v2 is not installed: run `npm ci` in mcp/testdata/interop2")
	}
	chrome := testenv.Chromium(t)
	t.Run("dcr-2026-07-28", func(t *testing.T) { typeScriptOAuth(t, node, dir, chrome, "modern", false) })
	t.Run("cimd-2025-11-25", func(t *testing.T) { typeScriptOAuth(t, node, dir, chrome, "legacy", true) })
}

// headless starts a headless Chromium and returns a tab's context.
func headless(t *testing.T, bin string) context.Context {
	t.Helper()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoDefaultBrowserCheck,
	)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// The first run starts the browser, which lives as long as the context
	// it was started on: start it on one without a deadline.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancelTime := context.WithTimeout(ctx, 120*time.Second)
	t.Cleanup(cancelTime)
	return ctx
}

// browse runs chromedp steps, failing the test with where the tab is.
func browse(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		body, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		t.Fatalf("%s: %v\nat %s:\n%s", what, err, loc, body)
	}
}

// metadataDocument serves a Client ID Metadata Document over TLS on
// 127.0.0.1 and makes quire's fetcher trust it: the server's client
// verifies with the system roots, which SSL_CERT_FILE extends until
// the process first loads them. When they were loaded already (another
// test used TLS first), the CIMD case is skipped, saying why.
func metadataDocument(t *testing.T, fetched *atomic.Int32) string {
	t.Helper()
	var doc []byte
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/host/client.json" {
			http.NotFound(w, r)
			return
		}
		fetched.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	}))
	t.Cleanup(ts.Close)
	id := ts.URL + "/host/client.json"
	doc, _ = json.Marshal(map[string]any{
		"client_id": id, "client_name": "TS SDK Host (metadata document)",
		// A loopback redirect without a port: any port matches (RFC 8252 §7.3).
		"redirect_uris": []string{"http://127.0.0.1/callback"},
		"grant_types":   []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "none",
	})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", ca)
	roots, err := x509.SystemCertPool()
	if err != nil {
		t.Skipf("no system certificate pool (%v): the metadata document case is skipped", err)
	}
	if _, err := ts.Certificate().Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1"}); err != nil {
		t.Skip("this process loaded its TLS roots before SSL_CERT_FILE could name the metadata document's test certificate: the metadata document case is skipped (run it alone: -run TestTypeScriptOAuth)")
	}
	return id
}

// oauthTokens are the tokens oauth.mjs holds.
type oauthTokens struct{ Access, Refresh, Scope, Type string }

// oauthStep is one line of oauth.mjs.
type oauthStep struct {
	Step string `json:"step"`
	URL  string `json:"url"`
	// connected
	FirstError       string         `json:"firstError"`
	CallbackState    string         `json:"callbackState"`
	CallbackHasState bool           `json:"callbackHasState"`
	Client           map[string]any `json:"client"`
	ProtocolVersion  string         `json:"protocolVersion"`
	Era              string         `json:"era"`
	Tokens           oauthTokens    `json:"tokens"`
	Discovery        struct {
		AuthorizationServer string `json:"authorizationServer"`
		Resource            string `json:"resource"`
		CIMD                bool   `json:"cimd"`
	} `json:"discovery"`
	Prompts []string `json:"prompts"`
	Get     []string `json:"get"`
	Tool    struct {
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
	} `json:"tool"`
	// refreshed
	Text           []string `json:"text"`
	Saves          int      `json:"saves"`
	Authorizations int      `json:"authorizations"`
	// revoked
	AuthorizationsBefore int `json:"authorizationsBefore"`
	Error                *struct {
		Name         string `json:"name"`
		Message      string `json:"message"`
		Unauthorized bool   `json:"unauthorized"`
	} `json:"error"`
	Reauthorize string   `json:"reauthorize"`
	Invalidated []string `json:"invalidated"`
	TokensLeft  bool     `json:"tokensLeft"`
}

func typeScriptOAuth(t *testing.T, node, dir, chrome, era string, cimd bool) {
	var ahead atomic.Int64
	var fetched atomic.Int32
	var clientID string
	if cimd {
		clientID = metadataDocument(t, &fetched)
	}
	e := testenv.NewWith(t, testenv.Options{
		Clock:    func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) },
		Webhooks: server.WebhookOptions{AllowPrivate: cimd}, // the metadata document is on 127.0.0.1
	})
	fixtureOn(t, e)
	tab := headless(t, chrome)

	// The DCR host sends no state (the SDK's default, when its host does
	// not supply one); the CIMD host does, and checks it comes back.
	state := map[bool]string{false: "nostate", true: "state"}[cimd]
	args := []string{"oauth.mjs", e.URL + "/mcp", era, state}
	if cimd {
		args = append(args, clientID)
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := time.AfterFunc(100*time.Second, func() { cmd.Process.Kill() })
	defer kill.Stop()
	defer cmd.Process.Kill()
	steps := make(chan oauthStep)
	go func() {
		defer close(steps)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var s oauthStep
			if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
				t.Errorf("oauth.mjs wrote %q: %v", sc.Text(), err)
				continue
			}
			steps <- s
		}
	}()
	next := func(want string) oauthStep {
		t.Helper()
		s, ok := <-steps
		if !ok {
			t.Fatalf("oauth.mjs ended before its %q step: %v", want, cmd.Wait())
		}
		if s.Step != want {
			t.Fatalf("oauth.mjs step %q, want %q: %+v", s.Step, want, s)
		}
		return s
	}
	proceed := func() {
		t.Helper()
		if _, err := io.WriteString(stdin, "continue\n"); err != nil {
			t.Fatal(err)
		}
	}

	// The authorization request the SDK built from what it discovered.
	auth := next("authorize")
	u, err := url.Parse(auth.URL)
	if err != nil || !strings.HasPrefix(auth.URL, e.URL+"/ui/oauth/authorize?") {
		t.Fatalf("authorization URL %q", auth.URL)
	}
	q := u.Query()
	redirect, _ := url.Parse(q.Get("redirect_uri"))
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" ||
		q.Get("resource") != e.URL+"/mcp" || redirect == nil || redirect.Hostname() != "127.0.0.1" || (q.Get("state") != "") != cimd {
		t.Errorf("authorization request %v", q)
	}
	if cimd && q.Get("client_id") != clientID {
		t.Errorf("client_id %q, want the metadata document's URL %q", q.Get("client_id"), clientID)
	}
	if !cimd {
		c, err := e.Store.OAuthClient(context.Background(), q.Get("client_id"))
		if err != nil || c.Name != "TS SDK Host" || len(c.RedirectURIs) != 1 || c.RedirectURIs[0] != redirect.String() {
			t.Errorf("the client registered by DCR: %v %+v", err, c)
		}
	}

	// The user: signs in on the way, sees the client and where the answer
	// goes, picks write and allows; Chromium lands on the SDK's callback.
	wantName := "TS SDK Host"
	if cimd {
		wantName = "TS SDK Host (metadata document)"
	}
	browse(t, tab, "sign in from the authorization URL",
		chromedp.Navigate(auth.URL),
		chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), testenv.AdminEmail),
		chromedp.SendKeys(chromedp.CSS("#password"), testenv.AdminPassword),
		chromedp.Submit(chromedp.CSS("#password")),
		chromedp.WaitVisible(chromedp.CSS("#consent")),
	)
	shown := func(sel string) string {
		s, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}
	if got := shown(".client-name"); got != wantName {
		t.Errorf("consent page names the client %q, want %q", got, wantName)
	}
	if got := shown(".redirect-host"); got != redirect.Host {
		t.Errorf("consent page names the redirect host %q, want %q", got, redirect.Host)
	}
	browse(t, tab, "approve with write access",
		chromedp.Click(chromedp.CSS(`input[name=access][value=write]`)),
		chromedp.Click(chromedp.CSS("#allow")),
		chromedp.WaitVisible(chromedp.CSS("#done")),
	)

	// Tokens for /mcp, and MCP calls with them.
	conn := next("connected")
	wantVersion := map[string]string{"modern": "2026-07-28", "legacy": "2025-11-25"}[era]
	if conn.CallbackState != q.Get("state") || conn.CallbackHasState != cimd {
		t.Errorf("the callback's state %q (sent: %v), the request's %q", conn.CallbackState, conn.CallbackHasState, q.Get("state"))
	}
	if conn.FirstError != "UnauthorizedError" || conn.ProtocolVersion != wantVersion {
		t.Errorf("first connect %q; negotiated %q (%s), want %s", conn.FirstError, conn.ProtocolVersion, conn.Era, wantVersion)
	}
	if conn.Discovery.AuthorizationServer != e.URL && conn.Discovery.AuthorizationServer != e.URL+"/" ||
		conn.Discovery.Resource != e.URL+"/mcp" || !conn.Discovery.CIMD {
		t.Errorf("discovery %+v", conn.Discovery)
	}
	if got, _ := conn.Client["client_id"].(string); got != q.Get("client_id") {
		t.Errorf("the SDK's client %v, the authorization request's %q", conn.Client, q.Get("client_id"))
	}
	if !strings.HasPrefix(conn.Tokens.Access, "qoa_") || !strings.HasPrefix(conn.Tokens.Refresh, "qor_") || conn.Tokens.Scope != "write" || !strings.EqualFold(conn.Tokens.Type, "bearer") {
		t.Errorf("tokens: scope %q, type %q", conn.Tokens.Scope, conn.Tokens.Type)
	}
	if strings.Join(conn.Prompts, ",") != "demo/greet,demo/support" || len(conn.Get) != 1 || conn.Get[0] != "Hello Ts, you are nobody." {
		t.Errorf("prompts/list %v, prompts/get %v", conn.Prompts, conn.Get)
	}
	if conn.Tool.IsError || !strings.Contains(dump(conn.Tool.StructuredContent), "You help with quire.") {
		t.Errorf("render_prompt: %+v", conn.Tool)
	}
	gs, err := e.Store.OAuthGrants(context.Background(), "")
	if err != nil || len(gs) != 1 || gs[0].ClientID != q.Get("client_id") || gs[0].ClientName != wantName || gs[0].Scope != quire.ScopeWrite || gs[0].Resource != e.URL+"/mcp" {
		t.Fatalf("grants: %v %s", err, dump(gs))
	}
	if cimd && fetched.Load() == 0 {
		t.Error("quire never fetched the metadata document")
	}

	// An hour on, the access token has expired: the SDK refreshes on the
	// 401 and retries; both tokens rotate.
	ahead.Store(int64(61 * time.Minute))
	if st := mcpStatus(t, e, conn.Tokens.Access); st != 401 {
		t.Fatalf("an access token 61 minutes old: %d", st)
	}
	proceed()
	ref := next("refreshed")
	if len(ref.Text) != 1 || ref.Text[0] != "Hello Again, you are nobody." || ref.Saves != 1 || ref.Authorizations != 1 {
		t.Errorf("after expiry: %v, %d token saves, %d authorizations (want 1 save, no new authorization)", ref.Text, ref.Saves, ref.Authorizations)
	}
	if ref.Tokens.Access == conn.Tokens.Access || ref.Tokens.Refresh == conn.Tokens.Refresh || ref.Tokens.Scope != "write" {
		t.Errorf("the refresh did not rotate both tokens (scope %q)", ref.Tokens.Scope)
	}
	if again := tokenRequest(t, e, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {conn.Tokens.Refresh}, "client_id": {q.Get("client_id")}}); again.status != 400 || again.Error != "invalid_grant" {
		t.Errorf("the refresh token the SDK replaced: %+v", again)
	}

	// The user revokes the application on the account page.
	browse(t, tab, "the account page",
		chromedp.Navigate(e.URL+"/ui/account"),
		chromedp.WaitVisible(chromedp.CSS("#apps-h")),
	)
	if s := shown(`section[aria-labelledby="apps-h"]`); !strings.Contains(s, wantName) || !strings.Contains(s, "write") {
		t.Errorf("applications: %q", s)
	}
	browse(t, tab, "revoke",
		// The old page is marked, and the wait is for one without the mark.
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`document.body.dataset.stale = "1"; true`)(ctx, t)
			return err
		}),
		chromedp.Click(chromedp.CSS(`form[action^="/ui/account/applications/"] button`)),
		chromedp.WaitReady(chromedp.CSS("body:not([data-stale])")),
		chromedp.WaitVisible(chromedp.CSS("#apps-h")),
	)
	if s := shown(`section[aria-labelledby="apps-h"]`); !strings.Contains(s, "No applications") {
		t.Errorf("applications after revoking: %q", s)
	}
	if st := mcpStatus(t, e, ref.Tokens.Access); st != 401 {
		t.Errorf("the revoked application's access token: %d", st)
	}
	proceed()
	// The SDK's refresh is refused (invalid_grant): it drops its tokens
	// and sends the user to authorize again...
	if again := next("authorize"); !strings.HasPrefix(again.URL, e.URL+"/ui/oauth/authorize?") || !strings.Contains(again.URL, url.QueryEscape(q.Get("client_id"))) {
		t.Errorf("authorization asked for again at %q", again.URL)
	}
	// ...and the call fails.
	rev := next("revoked")
	if rev.Error == nil || !rev.Error.Unauthorized {
		t.Errorf("a call after revocation: %+v, want an UnauthorizedError", rev.Error)
	}
	if rev.TokensLeft || !slices.Contains(rev.Invalidated, "tokens") || rev.Authorizations != rev.AuthorizationsBefore+1 || !strings.HasPrefix(rev.Reauthorize, e.URL+"/ui/oauth/authorize?") {
		t.Errorf("after revocation the SDK kept tokens %v, invalidated %v, authorizations %d→%d (%s)", rev.TokensLeft, rev.Invalidated, rev.AuthorizationsBefore, rev.Authorizations, rev.Reauthorize)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node oauth.mjs: %v", err)
	}
	for _, secret := range []string{conn.Tokens.Access, conn.Tokens.Refresh, ref.Tokens.Access, ref.Tokens.Refresh} {
		if strings.Contains(e.Log.String(), secret[4:]) {
			t.Error("the log holds a token")
		}
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
