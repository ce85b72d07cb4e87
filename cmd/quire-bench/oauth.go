package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"

	"github.com/quire/quire/internal/bench"
)

// hiddenRE finds a page's hidden form fields (the UI's CSRF token, the
// login's next, the consent form's authorization request).
var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// oauthAccessToken gets an OAuth access token of /mcp with read access
// the way a host does: Dynamic Client Registration, the authorization
// request with PKCE, the bench admin signing in and allowing on the
// consent page (a cookie jar and its forms, no browser), and the code
// exchanged at the token endpoint. The token is what the MCP section
// compares with the read API key.
func oauthAccessToken(q *bench.Quire) (string, error) {
	const redirect = "http://127.0.0.1/callback"
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := q.Call("POST", "/oauth/register", "", map[string]any{
		"client_name": "quire-bench", "redirect_uris": []string{redirect}, "token_endpoint_auth_method": "none",
	}, &reg); err != nil {
		return "", fmt.Errorf("register: %w", err)
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	verifier := base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(verifier))
	authURL := q.URL + "/ui/oauth/authorize?" + url.Values{
		"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {redirect}, "state": {"quire-bench-state"},
		"scope": {"read"}, "resource": {q.URL + "/mcp"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}.Encode()

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if !strings.HasPrefix(r.URL.String(), q.URL+"/") {
			return http.ErrUseLastResponse // the host's callback: not followed
		}
		return nil
	}}
	do := func(method, u string, form url.Values) (*http.Response, string, error) {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequest(method, u, body)
		if err != nil {
			return nil, "", err
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		res, err := browser.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res, string(b), err
	}
	hidden := func(page string) url.Values {
		v := url.Values{}
		for _, m := range hiddenRE.FindAllStringSubmatch(page, -1) {
			v.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
		}
		return v
	}

	res, page, err := do("GET", authURL, nil)
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(res.Request.URL.Path, "/ui/login") {
		f := hidden(page)
		f.Set("email", bench.AdminEmail)
		f.Set("password", bench.AdminPassword)
		if res, page, err = do("POST", q.URL+"/ui/login", f); err != nil {
			return "", err
		}
	}
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `name="decision"`) {
		return "", fmt.Errorf("consent page: %d at %s", res.StatusCode, res.Request.URL.Path)
	}
	f := hidden(page)
	f.Set("decision", "approve")
	f.Set("access", "read")
	res, _, err = do("POST", q.URL+"/ui/oauth/authorize", f)
	if err != nil {
		return "", err
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		return "", fmt.Errorf("consent answered %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}

	tr, err := http.PostForm(q.URL+"/oauth/token", url.Values{
		"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "code_verifier": {verifier},
		"client_id": {reg.ClientID}, "redirect_uri": {redirect}, "resource": {q.URL + "/mcp"},
	})
	if err != nil {
		return "", err
	}
	defer tr.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	if err := json.NewDecoder(tr.Body).Decode(&tok); err != nil || tr.StatusCode != http.StatusOK || tok.AccessToken == "" {
		return "", fmt.Errorf("token: %d %s %v", tr.StatusCode, tok.Error, err)
	}
	return tok.AccessToken, nil
}
