package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quire/quire"
)

// memStore is a quire.OAuthStore in memory, for tests of the protocol
// without the system repository.
type memStore struct {
	mu      sync.Mutex
	clients map[string]*quire.OAuthClient
	grants  map[string]*quire.OAuthGrant
}

func newMemStore() *memStore {
	return &memStore{clients: map[string]*quire.OAuthClient{}, grants: map[string]*quire.OAuthGrant{}}
}

func (m *memStore) CreateOAuthClient(_ context.Context, c *quire.OAuthClient) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c.ID = "client-" + c.Name
	m.clients[c.ID] = c
	return nil
}

func (m *memStore) OAuthClient(_ context.Context, id string) (*quire.OAuthClient, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.clients[id]; c != nil {
		return c, nil
	}
	return nil, quire.Errorf(quire.ENOTFOUND, "no client")
}

func (m *memStore) PutOAuthGrant(_ context.Context, _ quire.Actor, g *quire.OAuthGrant) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.grants[g.ID]; cur == nil && g.Rev != 0 || cur != nil && cur.Rev != g.Rev {
		return quire.Errorf(quire.ECONFLICT, "changed")
	}
	c := *g
	c.Rev++
	c.Tokens = slices.Clone(g.Tokens)
	m.grants[g.ID] = &c
	return nil
}

func (m *memStore) OAuthGrant(_ context.Context, id string) (*quire.OAuthGrant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if g := m.grants[id]; g != nil {
		c := *g
		c.Tokens = slices.Clone(g.Tokens)
		return &c, nil
	}
	return nil, quire.Errorf(quire.ENOTFOUND, "no grant")
}

func (m *memStore) OAuthGrantByToken(ctx context.Context, hash string) (*quire.OAuthGrant, error) {
	m.mu.Lock()
	var id string
	for _, g := range m.grants {
		if tokenIndex(g, hash) >= 0 {
			id = g.ID
		}
	}
	m.mu.Unlock()
	return m.OAuthGrant(ctx, id)
}

func (m *memStore) OAuthGrants(context.Context, string) ([]*quire.OAuthGrant, error) {
	return nil, nil
}

func (m *memStore) DeleteOAuthGrant(_ context.Context, _ quire.Actor, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.grants, id)
	return nil
}

// TestMetadataDocumentFlow: a client known only by the URL of its Client
// ID Metadata Document goes the whole way: the consent request names it
// by its document's client_name, the approval redirects with a code,
// the code and verifier buy tokens, and the access token is the grant's
// at the resource it was granted for only.
func TestMetadataDocumentFlow(t *testing.T) {
	docs := metadataServer(t, map[string]string{
		"/client.json": `{"client_id":"{{self}}","client_name":"Doc Host","redirect_uris":["http://127.0.0.1/cb"],"grant_types":["authorization_code","refresh_token"],"token_endpoint_auth_method":"none"}`,
	})
	st := newMemStore()
	s := New(Config{Store: st, AllowPrivateMetadata: true})
	trusting(s.clients, docs)
	const resource = "https://quire.example/mcp"
	clientID := docs.URL + "/client.json"
	verifier := strings.Repeat("doc-verifier-", 4)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:5000/cb"}, "state": {"doc-state-123"},
		"scope": {"read"}, "resource": {resource}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	ctx := context.Background()

	req, err := s.ParseAuthorize(ctx, httptest.NewRequest("GET", "/ui/oauth/authorize?"+q.Encode(), nil), resource)
	if err != nil || req.ClientName != "Doc Host" || req.Registered || req.RedirectURI.Host != "127.0.0.1:5000" || req.Scope != quire.ScopeRead {
		t.Fatalf("parse: %v %+v", err, req)
	}
	w := httptest.NewRecorder()
	s.Approve(ctx, w, req, "user-1", quire.ScopeRead)
	loc, _ := url.Parse(w.Header().Get("Location"))
	if w.Code != http.StatusSeeOther || loc == nil || loc.Query().Get("state") != "doc-state-123" || loc.Query().Get("code") == "" {
		t.Fatalf("approve: %d %s", w.Code, w.Header().Get("Location"))
	}

	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "code_verifier": {verifier},
		"client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:5000/cb"}, "resource": {resource}}
	tr := httptest.NewRequest("POST", "/oauth/token", strings.NewReader(form.Encode()))
	tr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w = httptest.NewRecorder()
	s.Token(w, tr, resource)
	var tok struct {
		AccessToken string `json:"access_token"`
		Scope       string `json:"scope"`
	}
	json.Unmarshal(w.Body.Bytes(), &tok)
	if w.Code != 200 || tok.Scope != "read" {
		t.Fatalf("token: %d %s", w.Code, w.Body)
	}
	g, err := s.Grant(ctx, tok.AccessToken, resource)
	if err != nil || g.ClientID != clientID || g.ClientName != "Doc Host" || g.UserID != "user-1" || g.Scope != quire.ScopeRead {
		t.Fatalf("grant: %v %+v", err, g)
	}
	if _, err := s.Grant(ctx, tok.AccessToken, "https://other.example/mcp"); quire.ErrorCode(err) != quire.EUNAUTHORIZED {
		t.Errorf("the token at another resource: %v", err)
	}
	// The document's host down: tokens already issued still check.
	docs.Close()
	if _, err := s.Grant(ctx, tok.AccessToken, resource); err != nil {
		t.Errorf("with the metadata document unreachable: %v", err)
	}
}
