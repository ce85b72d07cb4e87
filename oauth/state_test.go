package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/quire/quire"
)

// TestAuthorizeWithoutState: state is the client's to send or not (OAuth
// 2.1 §4.1.1: PKCE, which quire requires, binds the code to the client);
// the official TypeScript MCP SDK sends none unless its host supplies one,
// and fosite's default refused such a request with invalid_state. A
// request without state is approved and redirected with a code and no
// state; one with a state gets it back unchanged, however short.
func TestAuthorizeWithoutState(t *testing.T) {
	docs := metadataServer(t, map[string]string{
		"/client.json": `{"client_id":"{{self}}","client_name":"Stateless Host","redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"none"}`,
	})
	s := New(Config{Store: newMemStore(), AllowPrivateMetadata: true})
	trusting(s.clients, docs)
	const resource = "https://quire.example/mcp"
	sum := sha256.Sum256([]byte(strings.Repeat("state-verifier-", 4)))
	ctx := context.Background()
	for _, state := range []string{"", "abc"} {
		q := url.Values{"response_type": {"code"}, "client_id": {docs.URL + "/client.json"}, "redirect_uri": {"http://127.0.0.1:5000/cb"},
			"scope": {"read"}, "resource": {resource}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
		if state != "" {
			q.Set("state", state)
		}
		req, err := s.ParseAuthorize(ctx, httptest.NewRequest("GET", "/ui/oauth/authorize?"+q.Encode(), nil), resource)
		if err != nil {
			t.Fatalf("state %q: parse: %v", state, err)
		}
		w := httptest.NewRecorder()
		s.Approve(ctx, w, req, "user-1", quire.ScopeRead)
		loc, _ := url.Parse(w.Header().Get("Location"))
		if w.Code != http.StatusSeeOther || loc == nil || loc.Query().Get("code") == "" || loc.Query().Get("error") != "" {
			t.Fatalf("state %q: approve: %d %s", state, w.Code, w.Header().Get("Location"))
		}
		if _, sent := loc.Query()["state"]; sent != (state != "") || loc.Query().Get("state") != state {
			t.Errorf("state %q: redirected with %s", state, loc)
		}
	}
}
