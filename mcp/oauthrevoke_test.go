package mcp_test

import (
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
)

// revokeRequest posts an RFC 7009 revocation and returns its status.
func revokeRequest(t testing.TB, e *testenv.Env, form url.Values) int {
	t.Helper()
	res, err := http.PostForm(e.URL+"/oauth/revoke", form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestOAuthRevokeEndpoint: a host signing out revokes its tokens at
// /oauth/revoke (RFC 7009). Another client cannot revoke them; an
// unknown token is a 200 (§2.2); revoking the refresh token ends the
// grant's access token too (§2, "SHOULD"), and both are then refused;
// revoking an access token ends it, and its refresh token, at once.
func TestOAuthRevokeEndpoint(t *testing.T) {
	e := testenv.New(t)
	br := newBrowser(t, e)
	const redirect = "http://127.0.0.1/cb"
	client := oauthClient(t, e, redirect)
	other := oauthClient(t, e, redirect)
	grant := func() tokenAnswer {
		verifier, challenge := pkce()
		tok := tokenRequest(t, e, url.Values{"grant_type": {"authorization_code"}, "code": {br.code(authorizeQuery(e, client, redirect, challenge, nil), "read")},
			"code_verifier": {verifier}, "client_id": {client}, "redirect_uri": {redirect}})
		if tok.status != 200 || mcpStatus(t, e, tok.AccessToken) != 200 {
			t.Fatalf("exchange: %+v", tok)
		}
		return tok
	}

	tok := grant()
	// Another client's revocation revokes nothing. (fosite answers it
	// 200, as for an unknown token, rather than RFC 7009's error: the
	// answer tells the caller nothing about the token.)
	if st := revokeRequest(t, e, url.Values{"token": {tok.RefreshToken}, "client_id": {other}}); st != 200 && st/100 != 4 {
		t.Errorf("another client revoking the refresh token: %d", st)
	}
	if st := mcpStatus(t, e, tok.AccessToken); st != 200 {
		t.Fatalf("the access token after another client's revocation: %d", st)
	}
	if again := tokenRequest(t, e, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {client}}); again.status != 200 {
		t.Fatalf("the refresh token after another client's revocation: %+v", again)
	} else {
		tok = again
	}
	if st := revokeRequest(t, e, url.Values{"token": {"qor_unknown"}, "client_id": {client}}); st != 200 {
		t.Errorf("revoking an unknown token: %d, want 200 (RFC 7009 §2.2)", st)
	}
	if st := revokeRequest(t, e, url.Values{"token": {tok.RefreshToken}, "token_type_hint": {"refresh_token"}, "client_id": {client}}); st != 200 {
		t.Fatalf("revoking the refresh token: %d", st)
	}
	if st := mcpStatus(t, e, tok.AccessToken); st != 401 {
		t.Errorf("the access token of a revoked refresh token: %d", st)
	}
	if again := tokenRequest(t, e, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {client}}); again.status != 400 || again.Error != "invalid_grant" {
		t.Errorf("a revoked refresh token: %+v", again)
	}

	// Revoking an access token ends it at once, and the grant's refresh
	// token with it.
	tok = grant()
	if st := revokeRequest(t, e, url.Values{"token": {tok.AccessToken}, "token_type_hint": {"access_token"}, "client_id": {client}}); st != 200 {
		t.Fatalf("revoking the access token: %d", st)
	}
	if st := mcpStatus(t, e, tok.AccessToken); st != 401 {
		t.Errorf("a revoked access token: %d", st)
	}
	if again := tokenRequest(t, e, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {client}}); again.status != 400 {
		t.Errorf("the refresh token of a revoked access token: %+v", again)
	}
}

// TestOAuthRefreshExpiry: a refresh token past its thirty days is
// refused (invalid_grant), and so is a host that kept using the access
// token beside it.
func TestOAuthRefreshExpiry(t *testing.T) {
	var ahead atomic.Int64
	e := testenv.NewWith(t, testenv.Options{Clock: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
	br := newBrowser(t, e)
	const redirect = "http://127.0.0.1/cb"
	client := oauthClient(t, e, redirect)
	verifier, challenge := pkce()
	tok := tokenRequest(t, e, url.Values{"grant_type": {"authorization_code"}, "code": {br.code(authorizeQuery(e, client, redirect, challenge, nil), "read")},
		"code_verifier": {verifier}, "client_id": {client}, "redirect_uri": {redirect}})
	if tok.status != 200 {
		t.Fatalf("exchange: %+v", tok)
	}
	ahead.Store(int64(29 * 24 * time.Hour))
	fresh := tokenRequest(t, e, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {client}})
	if fresh.status != 200 || mcpStatus(t, e, fresh.AccessToken) != 200 {
		t.Fatalf("a refresh token 29 days old: %+v", fresh)
	}
	// The rotated refresh token has thirty days of its own from the
	// refresh; past them it is refused.
	ahead.Store(int64((29 + 31) * 24 * time.Hour))
	if got := tokenRequest(t, e, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {fresh.RefreshToken}, "client_id": {client}}); got.status != 400 || got.Error != "invalid_grant" {
		t.Errorf("a refresh token 31 days old: %+v", got)
	}
	if st := mcpStatus(t, e, fresh.AccessToken); st != 401 {
		t.Errorf("its access token: %d", st)
	}
}
