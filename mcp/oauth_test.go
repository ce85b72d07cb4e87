package mcp_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// browser is a user's browser: a cookie jar, and redirects followed
// within quire but not to a client's redirect URI (its Location is the
// answer the host would receive).
type browser struct {
	t    testing.TB
	e    *testenv.Env
	http *http.Client
}

func newBrowser(t testing.TB, e *testenv.Env) *browser {
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, e: e}
	b.http = &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if !strings.HasPrefix(r.URL.String(), e.URL+"/") {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	return b
}

// do sends a request and returns the final answer and its body.
func (b *browser) do(method, u string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.http.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res, string(out)
}

var (
	inputRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
	formRE  = regexp.MustCompile(`<form method="post" action="(/ui/account/applications/[^"]+/revoke)"`)
)

// hidden is the hidden fields of a page's forms.
func hidden(page string) url.Values {
	v := url.Values{}
	for _, m := range inputRE.FindAllStringSubmatch(page, -1) {
		v.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return v
}

// signIn opens authURL, signs in on the way when asked, and returns the
// consent page.
func (b *browser) consent(authURL string) (*http.Response, string) {
	b.t.Helper()
	res, page := b.do("GET", authURL, nil)
	if strings.HasSuffix(res.Request.URL.Path, "/ui/login") {
		f := hidden(page)
		f.Set("email", testenv.AdminEmail)
		f.Set("password", testenv.AdminPassword)
		res, page = b.do("POST", b.e.URL+"/ui/login", f)
	}
	return res, page
}

// decide answers the consent page: approve with access, or deny; it
// returns the redirect quire sends the browser to.
func (b *browser) decide(page, decision, access string) *url.URL {
	b.t.Helper()
	f := hidden(page)
	f.Set("decision", decision)
	f.Set("access", access)
	res, body := b.do("POST", b.e.URL+"/ui/oauth/authorize", f)
	if res.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("consent answered %d, not a redirect: %s", res.StatusCode, body)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		b.t.Fatal(err)
	}
	return loc
}

// TestOAuthEndToEnd: a host adds quire by URL alone, as the MCP
// authorization spec has it, through the Go SDK's own OAuth client: the
// 401's resource_metadata, the protected resource metadata, the
// authorization server metadata, Dynamic Client Registration, the user
// signing in and approving on the consent page, the code exchanged with
// its PKCE verifier for tokens of /mcp; then MCP calls with the token,
// a refresh that rotates (the old refresh token refused), and the
// application revoked on the account page, after which /mcp refuses the
// token at once.
func TestOAuthEndToEnd(t *testing.T) {
	f := newFixture(t)
	e := f.e
	ctx := context.Background()
	br := newBrowser(t, e)
	const redirect = "http://127.0.0.1:9/callback"
	var consentPage string
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Test Host", RedirectURIs: []string{redirect},
			GrantTypes: []string{"authorization_code", "refresh_token"}, TokenEndpointAuthMethod: "none",
		}},
		RedirectURL:         redirect,
		RequestRefreshToken: true,
		AuthorizationCodeFetcher: func(_ context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			res, page := br.consent(args.URL)
			if res.StatusCode != 200 {
				t.Fatalf("consent page: %d %s", res.StatusCode, page)
			}
			consentPage = page
			loc := br.decide(page, "approve", "read")
			return &auth.AuthorizationResult{Code: loc.Query().Get("code"), State: loc.Query().Get("state"), Iss: loc.Query().Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.URL + "/mcp", OAuthHandler: handler, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect through OAuth: %v", err)
	}
	defer cs.Close()
	// The consent page named the client and where the answer goes.
	for _, want := range []string{"Authorize Test Host", `<code class="redirect-host">127.0.0.1:9</code>`, `value="read" checked`} {
		if !strings.Contains(consentPage, want) && !(want == `value="read" checked` && strings.Contains(consentPage, `value="write" checked`)) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/greet", Arguments: map[string]string{"name": "Al"}})
	if err != nil || text(got.Messages[0]) != "Hello Al, you are nobody." {
		t.Fatalf("prompts/get with the OAuth token: %v %s", err, dump(got))
	}
	// A read grant: a write tool is refused, as for a read API key.
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "open_draft", Arguments: map[string]any{"slug": "demo/greet"}})
	if err != nil || !res.IsError || !strings.Contains(dump(res.Content), "may not") {
		t.Fatalf("open_draft with a read grant: %v %s", err, dump(res))
	}

	ts, err := handler.TokenSource(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ts.Token()
	if err != nil || tok.RefreshToken == "" || !strings.HasPrefix(tok.AccessToken, "qoa_") {
		t.Fatalf("token: %v %+v", err, tok)
	}
	clientID := registeredClient(t, e)

	// The access token is for /mcp only: the REST API and git refuse it.
	for _, path := range []string{"/v1/auth/me", "/v1/projects", "/git/demo/prompts/greet.git/info/refs?service=git-upload-pack"} {
		if r := e.Do("GET", path, tok.AccessToken, nil); r.Status != 401 {
			t.Errorf("GET %s with an OAuth token: %d %s", path, r.Status, r.Body)
		}
	}

	// Refresh: new tokens; the old refresh token and access token stop.
	fresh := tokenRequest(t, e, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {clientID}, "resource": {e.URL + "/mcp"}})
	if fresh.status != 200 || fresh.RefreshToken == "" || fresh.RefreshToken == tok.RefreshToken || fresh.AccessToken == tok.AccessToken || fresh.Scope != "read" {
		t.Fatalf("refresh: %+v", fresh)
	}
	if again := tokenRequest(t, e, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {clientID}}); again.status != 400 || again.Error != "invalid_grant" {
		t.Fatalf("the old refresh token again: %+v", again)
	}
	if st := mcpStatus(t, e, tok.AccessToken); st != 401 {
		t.Errorf("the access token a refresh replaced: %d", st)
	}
	if st := mcpStatus(t, e, fresh.AccessToken); st != 200 {
		t.Fatalf("the refreshed access token: %d", st)
	}

	// The grant is on disk before the token answer: a second server on
	// the same data root (another process, or this one restarted) knows
	// the token.
	e2 := testenv.NewWith(t, testenv.Options{Root: e.Store.Root()})
	if g, err := e2.Store.OAuthGrantByToken(ctx, quire.HashSecret(fresh.AccessToken)); err != nil || g.Scope != "read" || g.ClientName != "Test Host" {
		t.Fatalf("the grant seen from a second server: %v %+v", err, g)
	}

	// The account page lists the application; revoking it ends the token.
	_, account := br.do("GET", e.URL+"/ui/account", nil)
	m := formRE.FindStringSubmatch(account)
	if m == nil || !strings.Contains(account, "Test Host") || !strings.Contains(account, "<td>read</td>") {
		t.Fatalf("account page without the application:\n%s", account)
	}
	r, body := br.do("POST", e.URL+m[1], hidden(account))
	if r.StatusCode != 200 || !strings.Contains(body, "No applications") {
		t.Fatalf("revoke: %d %s", r.StatusCode, body)
	}
	if st := mcpStatus(t, e, fresh.AccessToken); st != 401 {
		t.Errorf("the token of a revoked application: %d", st)
	}
	if again := tokenRequest(t, e, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {fresh.RefreshToken}, "client_id": {clientID}}); again.status != 400 {
		t.Errorf("the refresh token of a revoked application: %+v", again)
	}
	// No token, in whole or as its secret part, reaches the log.
	logs := e.Log.String()
	for _, secret := range []string{tok.AccessToken, tok.RefreshToken, fresh.AccessToken, fresh.RefreshToken} {
		if strings.Contains(logs, secret) || strings.Contains(logs, secret[4:]) {
			t.Errorf("the log holds a token")
		}
	}
}

// TestOAuthRefreshRace: requests racing with one refresh token (a host
// retrying, or a thief racing the host) get one new pair between them;
// the others are refused, and the winner's tokens work.
func TestOAuthRefreshRace(t *testing.T) {
	e := testenv.New(t)
	br := newBrowser(t, e)
	const redirect = "http://127.0.0.1/cb"
	client := oauthClient(t, e, redirect)
	verifier, challenge := pkce()
	tok := tokenRequest(t, e, url.Values{"grant_type": {"authorization_code"}, "code": {br.code(authorizeQuery(e, client, redirect, challenge, nil), "read")},
		"code_verifier": {verifier}, "client_id": {client}, "redirect_uri": {redirect}})
	if tok.status != 200 {
		t.Fatalf("exchange: %+v", tok)
	}
	const n = 8
	answers := make(chan tokenAnswer, n)
	for range n {
		go func() {
			answers <- tokenRequest(t, e, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {client}})
		}()
	}
	var won []tokenAnswer
	for range n {
		a := <-answers
		switch {
		case a.status == 200:
			won = append(won, a)
		case a.status != 400:
			t.Errorf("a losing refresh: %+v", a)
		}
	}
	if len(won) != 1 {
		t.Fatalf("%d refreshes with one token succeeded", len(won))
	}
	if st := mcpStatus(t, e, won[0].AccessToken); st != 200 {
		t.Errorf("the winner's access token: %d", st)
	}
	if again := tokenRequest(t, e, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {won[0].RefreshToken}, "client_id": {client}}); again.status != 200 {
		t.Errorf("the winner's refresh token: %+v", again)
	}
}

// registeredClient is the one client registered on e.
func registeredClient(t testing.TB, e *testenv.Env) string {
	t.Helper()
	gs, err := e.Store.OAuthGrants(context.Background(), "")
	if err != nil || len(gs) == 0 {
		t.Fatalf("grants: %v %d", err, len(gs))
	}
	return gs[len(gs)-1].ClientID
}

type tokenAnswer struct {
	status       int
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
	Description  string `json:"error_description"`
}

func tokenRequest(t testing.TB, e *testenv.Env, form url.Values) tokenAnswer {
	t.Helper()
	res, err := http.PostForm(e.URL+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out tokenAnswer
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("token answer %d is not JSON: %s", res.StatusCode, b)
	}
	out.status = res.StatusCode
	return out
}

// mcpStatus is the status of an initialize on /mcp with token.
func mcpStatus(t testing.TB, e *testenv.Env, token string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", e.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// pkce returns a verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	verifier = strings.Repeat("v", 20) + base64.RawURLEncoding.EncodeToString([]byte(time.Now().String()))
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// oauthClient registers a client with redirect URIs and returns its id.
func oauthClient(t testing.TB, e *testenv.Env, redirects ...string) string {
	t.Helper()
	r := e.Do("POST", "/oauth/register", "", map[string]any{"client_name": "Bad Input Host", "redirect_uris": redirects, "token_endpoint_auth_method": "none"})
	if r.Status != 201 {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)["client_id"].(string)
}

// authorizeQuery is an authorization request of client with a PKCE
// challenge; edit changes it.
func authorizeQuery(e *testenv.Env, client, redirect, challenge string, edit func(url.Values)) string {
	q := url.Values{
		"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect},
		"state": {"state-0123456789"}, "scope": {"read write"}, "resource": {e.URL + "/mcp"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"},
	}
	if edit != nil {
		edit(q)
	}
	return e.URL + "/ui/oauth/authorize?" + q.Encode()
}

// code runs the consent for an authorization request and returns the
// code quire redirected with.
func (b *browser) code(authURL, access string) string {
	b.t.Helper()
	res, page := b.consent(authURL)
	if res.StatusCode != 200 {
		b.t.Fatalf("consent page %d: %s", res.StatusCode, page)
	}
	loc := b.decide(page, "approve", access)
	if loc.Query().Get("code") == "" || loc.Query().Get("state") != "state-0123456789" {
		b.t.Fatalf("redirect without code and state: %s", loc)
	}
	return loc.Query().Get("code")
}

// TestOAuthRefusals: what a careless or hostile client sends is refused
// with the OAuth error that says why, never a 500; nothing reaches a
// redirect URI that was not registered.
func TestOAuthRefusals(t *testing.T) {
	f := newFixture(t)
	e := f.e
	br := newBrowser(t, e)
	const redirect = "http://127.0.0.1/cb"
	client := oauthClient(t, e, redirect, "https://host.example/cb")
	exchange := func(code, verifier string, edit func(url.Values)) tokenAnswer {
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}, "client_id": {client}, "redirect_uri": {redirect}, "resource": {e.URL + "/mcp"}}
		if edit != nil {
			edit(form)
		}
		return tokenRequest(t, e, form)
	}

	t.Run("token", func(t *testing.T) {
		for _, c := range []struct {
			name      string
			edit      func(url.Values)
			wantError string
		}{
			{"wrong verifier", func(f url.Values) { f.Set("code_verifier", strings.Repeat("x", 50)) }, "invalid_grant"},
			{"no verifier", func(f url.Values) { f.Del("code_verifier") }, "invalid_grant"},
			{"other redirect", func(f url.Values) { f.Set("redirect_uri", "https://host.example/cb") }, "invalid_grant"},
			{"wrong resource", func(f url.Values) { f.Set("resource", e.URL+"/v1") }, "invalid_target"},
			{"other client", func(f url.Values) { f.Set("client_id", oauthClient(t, e, redirect)) }, "invalid_grant"},
			{"unknown client", func(f url.Values) { f.Set("client_id", "nobody") }, "invalid_client"},
		} {
			verifier, challenge := pkce()
			code := br.code(authorizeQuery(e, client, redirect, challenge, nil), "write")
			got := exchange(code, verifier, c.edit)
			if got.status/100 != 4 || got.Error != c.wantError || got.AccessToken != "" {
				t.Errorf("%s: %+v, want %s", c.name, got, c.wantError)
			}
		}
	})

	t.Run("reused code", func(t *testing.T) {
		verifier, challenge := pkce()
		code := br.code(authorizeQuery(e, client, redirect, challenge, nil), "write")
		first := exchange(code, verifier, nil)
		if first.status != 200 || first.Scope != "write" {
			t.Fatalf("first exchange: %+v", first)
		}
		if st := mcpStatus(t, e, first.AccessToken); st != 200 {
			t.Fatalf("token of the first exchange: %d", st)
		}
		if again := exchange(code, verifier, nil); again.status != 400 || again.Error != "invalid_grant" {
			t.Fatalf("second exchange: %+v", again)
		}
		// A replayed code ends what it was exchanged for (RFC 6749 §4.1.2).
		if st := mcpStatus(t, e, first.AccessToken); st != 401 {
			t.Errorf("token of a replayed code: %d", st)
		}
	})

	t.Run("authorize", func(t *testing.T) {
		_, challenge := pkce()
		for _, c := range []struct {
			name      string
			edit      func(url.Values)
			wantError string
		}{
			{"plain PKCE", func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request"},
			{"no PKCE", func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }, "invalid_request"},
			{"wrong resource", func(q url.Values) { q.Set("resource", "https://elsewhere.example/mcp") }, "invalid_target"},
			{"unknown scope", func(q url.Values) { q.Set("scope", "admin") }, "invalid_scope"},
			{"implicit", func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
		} {
			res, body := br.consent(authorizeQuery(e, client, redirect, challenge, c.edit))
			loc, _ := url.Parse(res.Header.Get("Location"))
			if res.StatusCode != 303 || loc == nil || loc.Host != "127.0.0.1" || loc.Query().Get("error") != c.wantError || loc.Query().Get("code") != "" {
				t.Errorf("%s: %d %s %s", c.name, res.StatusCode, res.Header.Get("Location"), body)
			}
		}
		// Denied: the client hears access_denied, no code.
		res, page := br.consent(authorizeQuery(e, client, redirect, challenge, nil))
		if res.StatusCode != 200 {
			t.Fatalf("consent: %d", res.StatusCode)
		}
		if loc := br.decide(page, "deny", "read"); loc.Query().Get("error") != "access_denied" || loc.Query().Get("code") != "" {
			t.Errorf("deny: %s", loc)
		}
		// A loopback redirect may name any port (RFC 8252 §7.3)...
		if res, page := br.consent(authorizeQuery(e, client, "http://127.0.0.1:4567/cb", challenge, nil)); res.StatusCode != 200 || !strings.Contains(page, "127.0.0.1:4567") {
			t.Errorf("loopback redirect with a port: %d", res.StatusCode)
		}
		// ...but any other redirect must be registered exactly: the user
		// sees the error, nothing is sent to it.
		for _, bad := range []string{"https://evil.example/cb", "https://host.example/cb/", "https://host.example/cb?x=1", "http://localhost:4567/cb"} {
			res, body := br.consent(authorizeQuery(e, client, bad, challenge, nil))
			if res.StatusCode != 400 || res.Header.Get("Location") != "" || !strings.Contains(body, "cannot be used") {
				t.Errorf("redirect %s: %d %s", bad, res.StatusCode, res.Header.Get("Location"))
			}
		}
		// The consent form needs its CSRF token.
		_, page = br.consent(authorizeQuery(e, client, redirect, challenge, nil))
		form := hidden(page)
		form.Del("csrf")
		form.Set("decision", "approve")
		if res, _ := br.do("POST", e.URL+"/ui/oauth/authorize", form); res.StatusCode != 403 {
			t.Errorf("consent without its CSRF token: %d", res.StatusCode)
		}
	})

	t.Run("registration", func(t *testing.T) {
		for _, c := range []struct {
			name      string
			body      any
			wantError string
		}{
			{"no redirect URIs", map[string]any{"client_name": "x"}, "invalid_redirect_uri"},
			{"http to a remote host", map[string]any{"redirect_uris": []string{"http://evil.example/cb"}}, "invalid_redirect_uri"},
			{"javascript", map[string]any{"redirect_uris": []string{"javascript:alert(1)"}}, "invalid_redirect_uri"},
			{"relative", map[string]any{"redirect_uris": []string{"/cb"}}, "invalid_redirect_uri"},
			{"fragment", map[string]any{"redirect_uris": []string{"https://h.example/cb#x"}}, "invalid_redirect_uri"},
			{"a secret", map[string]any{"redirect_uris": []string{redirect}, "token_endpoint_auth_method": "client_secret_basic"}, "invalid_client_metadata"},
			{"client credentials", map[string]any{"redirect_uris": []string{redirect}, "grant_types": []string{"client_credentials"}}, "invalid_client_metadata"},
			{"own client_id", map[string]any{"redirect_uris": []string{redirect}, "client_id": "mine"}, "invalid_client_metadata"},
			{"not JSON", "redirect_uris=x", "invalid_client_metadata"},
			{"not an object", "[]", "invalid_client_metadata"},
		} {
			r := e.Do("POST", "/oauth/register", "", c.body)
			if r.Status != 400 || r.JSON(t)["error"] != c.wantError {
				t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
			}
		}
	})

	t.Run("audience", func(t *testing.T) {
		verifier, challenge := pkce()
		tok := exchange(br.code(authorizeQuery(e, client, redirect, challenge, nil), "write"), verifier, nil)
		if tok.status != 200 {
			t.Fatalf("exchange: %+v", tok)
		}
		for _, path := range []string{"/v1/auth/me", "/v1/projects/demo", "/v1/prompts/" + f.greet, "/git/demo/prompts/greet.git/info/refs?service=git-upload-pack"} {
			if r := e.Do("GET", path, tok.AccessToken, nil); r.Status != 401 {
				t.Errorf("GET %s with an OAuth token: %d", path, r.Status)
			}
		}
		req, _ := http.NewRequest("GET", e.URL+"/ui/account", nil)
		req.AddCookie(&http.Cookie{Name: "quire_session", Value: tok.AccessToken})
		if r, err := http.DefaultTransport.RoundTrip(req); err != nil || r.StatusCode != 303 || !strings.HasPrefix(r.Header.Get("Location"), "/ui/login") {
			t.Errorf("the UI with an OAuth token as its cookie: %v %v", err, r)
		}
		// A write grant may write: open_draft answers a draft.
		cs := connect(t, e, tok.AccessToken, "", nil)
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "open_draft", Arguments: map[string]any{"slug": "demo/greet"}})
		if err != nil || res.IsError {
			t.Fatalf("open_draft with a write grant: %v %s", err, dump(res))
		}
	})
}

// TestOAuthExpiry: a code past its ten minutes and an access token past
// its hour are refused (the API's clock moved, as testenv allows).
func TestOAuthExpiry(t *testing.T) {
	var ahead atomic.Int64
	e := testenv.NewWith(t, testenv.Options{Clock: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
	br := newBrowser(t, e)
	const redirect = "http://127.0.0.1/cb"
	client := oauthClient(t, e, redirect)
	exchange := func(code, verifier string) tokenAnswer {
		return tokenRequest(t, e, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}, "client_id": {client}, "redirect_uri": {redirect}})
	}

	verifier, challenge := pkce()
	tok := exchange(br.code(authorizeQuery(e, client, redirect, challenge, nil), "read"), verifier)
	if tok.status != 200 || mcpStatus(t, e, tok.AccessToken) != 200 {
		t.Fatalf("exchange: %+v", tok)
	}
	verifier, challenge = pkce()
	code := br.code(authorizeQuery(e, client, redirect, challenge, nil), "read")

	ahead.Store(int64(11 * time.Minute))
	if got := exchange(code, verifier); got.status != 400 || got.Error != "invalid_grant" {
		t.Errorf("a code 11 minutes old: %+v", got)
	}
	ahead.Store(int64(61 * time.Minute))
	if st := mcpStatus(t, e, tok.AccessToken); st != 401 {
		t.Errorf("an access token 61 minutes old: %d", st)
	}
}
