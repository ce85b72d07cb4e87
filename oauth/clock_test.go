package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire/quire"
)

// TestRefreshOnMovedClock: tokens expire by Config.Now, issued and
// checked alike. An hour on that clock, the access token is refused; its
// refresh token buys a new pair whose access token checks at once (fosite
// stamps expiries on the wall clock: taken as they were, the new token
// was born expired on the moved clock, which the TypeScript SDK's
// refresh-on-401 in mcp/oauthts_test.go ran into).
func TestRefreshOnMovedClock(t *testing.T) {
	docs := metadataServer(t, map[string]string{
		"/client.json": `{"client_id":"{{self}}","client_name":"Clock Host","redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"none"}`,
	})
	var ahead atomic.Int64
	s := New(Config{Store: newMemStore(), AllowPrivateMetadata: true, Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
	trusting(s.clients, docs)
	const resource = "https://quire.example/mcp"
	clientID := docs.URL + "/client.json"
	verifier := strings.Repeat("clock-verifier-", 4)
	sum := sha256.Sum256([]byte(verifier))
	ctx := context.Background()
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:5000/cb"}, "state": {"clock-state-1"},
		"scope": {"read"}, "resource": {resource}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	req, err := s.ParseAuthorize(ctx, httptest.NewRequest("GET", "/ui/oauth/authorize?"+q.Encode(), nil), resource)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	s.Approve(ctx, w, req, "user-1", quire.ScopeRead)
	loc, _ := url.Parse(w.Header().Get("Location"))
	token := func(form url.Values) (access, refresh string) {
		t.Helper()
		r := httptest.NewRequest("POST", "/oauth/token", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		s.Token(w, r, resource)
		var tok struct {
			AccessToken  string `json:"access_token"`
			RefreshToken string `json:"refresh_token"`
		}
		json.Unmarshal(w.Body.Bytes(), &tok)
		if w.Code != 200 {
			t.Fatalf("token: %d %s", w.Code, w.Body)
		}
		return tok.AccessToken, tok.RefreshToken
	}
	access, refresh := token(url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "code_verifier": {verifier},
		"client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:5000/cb"}, "resource": {resource}})
	if _, err := s.Grant(ctx, access, resource); err != nil {
		t.Fatalf("a new access token: %v", err)
	}

	ahead.Store(int64(61 * time.Minute))
	if _, err := s.Grant(ctx, access, resource); quire.ErrorCode(err) != quire.EUNAUTHORIZED {
		t.Fatalf("an access token 61 minutes old: %v", err)
	}
	fresh, _ := token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}, "resource": {resource}})
	if _, err := s.Grant(ctx, fresh, resource); err != nil {
		t.Fatalf("the access token a refresh issued on the moved clock: %v", err)
	}
	ahead.Store(int64(122 * time.Minute))
	if _, err := s.Grant(ctx, fresh, resource); quire.ErrorCode(err) != quire.EUNAUTHORIZED {
		t.Fatalf("that token an hour later: %v", err)
	}
}
