package crashtest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestCrashOAuth SIGKILLs quire while a host refreshes its OAuth tokens
// in a loop (each refresh rotates the pair and is one commit of the
// system repository), and checks after each restart that the last pair
// the host was answered still works: its access token at /mcp and its
// refresh token at /oauth/token, unless a refresh was in flight at the
// kill (then that one may have won, and the pair before it is rightly
// gone). Tokens are bound to the origin the host used, so the restarted
// server (on another port) is asked with the first one's Host.
func TestCrashOAuth(t *testing.T) {
	bin := quireBinary(t)
	root := t.TempDir()
	srv, err := startServer(t, bin, root, true, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.kill() }()
	origin := srv.URL
	host := strings.TrimPrefix(origin, "http://")
	client, pair, err := oauthGrant(origin)
	if err != nil {
		t.Fatal(err)
	}
	for trial := range trials() {
		acked, inflight := 0, false
		stopAt := 3 + rand.IntN(30)
		for acked < stopAt || rand.IntN(2) == 0 {
			// Half the kills come with a refresh in flight.
			if acked >= stopAt {
				go func() { refresh(srv.URL, host, client, pair.Refresh) }()
				inflight = true
				break
			}
			next, status, err := refresh(srv.URL, host, client, pair.Refresh)
			if err != nil || status != 200 {
				t.Fatalf("trial %d: refresh %d: %d %v", trial, acked, status, err)
			}
			pair, acked = next, acked+1
		}
		srv.kill()
		if srv, err = startServer(t, bin, root, true, true); err != nil {
			t.Fatal(err)
		}
		st, err := mcpInit(srv.URL, host, pair.Access)
		if err != nil || st != 200 && !(inflight && st == 401) {
			t.Fatalf("trial %d: the last acknowledged access token after kill -9: %d %v (in flight: %v)", trial, st, err, inflight)
		}
		next, status, err := refresh(srv.URL, host, client, pair.Refresh)
		switch {
		case err != nil:
			t.Fatal(err)
		case status == 200:
			pair = next
		case inflight && status == 400:
			// The refresh in flight won: the host never heard of its pair.
			// Start over from a fresh grant.
			if client, pair, err = oauthGrantOn(srv.URL, host); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("trial %d: the last acknowledged refresh token after kill -9: %d", trial, status)
		}
		t.Logf("trial %d: %d refreshes acknowledged, in flight at the kill: %v", trial, acked, inflight)
	}
}

type tokenPair struct {
	Access  string `json:"access_token"`
	Refresh string `json:"refresh_token"`
}

func oauthGrant(base string) (string, tokenPair, error) {
	return oauthGrantOn(base, strings.TrimPrefix(base, "http://"))
}

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

func hiddenFields(page string) url.Values {
	v := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(page, -1) {
		v.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return v
}

// oauthGrantOn registers a client at base (reached as host), signs the
// admin in, approves write access and exchanges the code.
func oauthGrantOn(base, host string) (string, tokenPair, error) {
	const redirect = "http://127.0.0.1/cb"
	var pair tokenPair
	send := func(hc *http.Client, method, path, ctype string, body string) (*http.Response, string, error) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Host = host
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		res, err := hc.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b), nil
	}
	plain := &http.Client{}
	res, body, err := send(plain, "POST", "/oauth/register", "application/json", `{"client_name":"crash host","redirect_uris":["`+redirect+`"]}`)
	if err != nil || res.StatusCode != 201 {
		return "", pair, fmt.Errorf("register: %v %s", err, body)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	json.Unmarshal([]byte(body), &reg)
	verifier := strings.Repeat("crash-verifier-", 4)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {redirect}, "state": {"crash-state-1"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {"http://" + host + "/mcp"}}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	_, page, err := send(browser, "GET", "/ui/login", "", "")
	if err != nil {
		return "", pair, err
	}
	login := hiddenFields(page)
	login.Set("email", adminEmail)
	login.Set("password", adminPassword)
	if res, body, err = send(browser, "POST", "/ui/login", "application/x-www-form-urlencoded", login.Encode()); err != nil || res.StatusCode != 303 {
		return "", pair, fmt.Errorf("sign in: %v %s", err, body)
	}
	if res, page, err = send(browser, "GET", "/ui/oauth/authorize?"+q.Encode(), "", ""); err != nil || res.StatusCode != 200 {
		return "", pair, fmt.Errorf("consent page: %v %s", err, page)
	}
	consent := hiddenFields(page)
	consent.Set("decision", "approve")
	consent.Set("access", "write")
	if res, body, err = send(browser, "POST", "/ui/oauth/authorize", "application/x-www-form-urlencoded", consent.Encode()); err != nil || res.StatusCode != 303 {
		return "", pair, fmt.Errorf("approve: %v %s", err, body)
	}
	loc, _ := url.Parse(res.Header.Get("Location"))
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "code_verifier": {verifier}, "client_id": {reg.ClientID}, "redirect_uri": {redirect}}
	if res, body, err = send(plain, "POST", "/oauth/token", "application/x-www-form-urlencoded", form.Encode()); err != nil || res.StatusCode != 200 {
		return "", pair, fmt.Errorf("token: %v %s", err, body)
	}
	err = json.Unmarshal([]byte(body), &pair)
	return reg.ClientID, pair, err
}

// refresh asks base (as host) for a new pair.
func refresh(base, host, client, token string) (tokenPair, int, error) {
	var pair tokenPair
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}, "client_id": {client}}
	req, _ := http.NewRequest("POST", base+"/oauth/token", strings.NewReader(form.Encode()))
	req.Host = host
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return pair, 0, err
	}
	defer res.Body.Close()
	if res.StatusCode == 200 {
		err = json.NewDecoder(res.Body).Decode(&pair)
		if pair.Refresh == "" {
			err = errors.New("no refresh token")
		}
	}
	return pair, res.StatusCode, err
}

// mcpInit is the status of an initialize at base's /mcp (as host).
func mcpInit(base, host, token string) (int, error) {
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"crash","version":"1"}}}`))
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}
