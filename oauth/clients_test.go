package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ory/fosite"
	"github.com/quire/quire/webhook"
)

// metadataServer serves Client ID Metadata Documents over TLS: the body
// of each path, {{self}} replaced by the document's own URL.
func metadataServer(t *testing.T, docs map[string]string) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(strings.ReplaceAll(doc, "{{self}}", srv.URL+r.URL.Path)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// trusting is cs with srv's certificate trusted.
func trusting(cs *clients, srv *httptest.Server) *clients {
	cs.http.Transport.(*http.Transport).TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	return cs
}

// TestClientIDMetadataDocument: a client named by the https URL of its
// metadata document is fetched and checked: its client_id must be that
// URL, its redirect URIs sound, its client public; and the fetch is
// guarded as webhooks are (no loopback, private or metadata address).
func TestClientIDMetadataDocument(t *testing.T) {
	srv := metadataServer(t, map[string]string{
		"/good":     `{"client_id":"{{self}}","client_name":"Doc Host","redirect_uris":["http://127.0.0.1/cb"],"grant_types":["authorization_code","refresh_token"],"token_endpoint_auth_method":"none"}`,
		"/other-id": `{"client_id":"https://elsewhere.example/client","client_name":"Liar","redirect_uris":["http://127.0.0.1/cb"]}`,
		"/secret":   `{"client_id":"{{self}}","redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"client_secret_basic"}`,
		"/badredir": `{"client_id":"{{self}}","redirect_uris":["http://evil.example/cb"]}`,
		"/notjson":  `<html>`,
	})
	cs := trusting(newClients(nil, true), srv)
	ctx := context.Background()
	c, err := cs.GetClient(ctx, srv.URL+"/good")
	if err != nil {
		t.Fatalf("good document: %v", err)
	}
	if cl := c.(*client); cl.name != "Doc Host" || !c.IsPublic() || c.GetRedirectURIs()[0] != "http://127.0.0.1/cb" {
		t.Errorf("client %+v", cl)
	}
	for _, path := range []string{"/other-id", "/secret", "/badredir", "/notjson", "/missing"} {
		if _, err := cs.GetClient(ctx, srv.URL+path); !errors.Is(err, fosite.ErrNotFound) {
			t.Errorf("%s: %v, want not found", path, err)
		}
	}
	for _, id := range []string{srv.URL, srv.URL + "/good#x", "https://user:pw@" + strings.TrimPrefix(srv.URL, "https://") + "/good"} {
		if _, err := cs.GetClient(ctx, id); err == nil {
			t.Errorf("client_id %s accepted", id)
		}
	}

	// Guarded: the same document on a loopback address is not fetched.
	guarded := trusting(newClients(nil, false), srv)
	_, err = guarded.GetClient(ctx, srv.URL+"/good")
	if !errors.Is(err, fosite.ErrNotFound) || !errors.Is(err, webhook.ErrRefused) {
		t.Errorf("a loopback document with the guard on: %v", err)
	}
}

// TestRedirectRules: what a client may register as a redirect URI.
func TestRedirectRules(t *testing.T) {
	for uri, ok := range map[string]bool{
		"https://host.example/cb":          true,
		"http://127.0.0.1/cb":              true,
		"http://127.0.0.1:8080/cb":         true,
		"http://[::1]:8080/cb":             true,
		"http://localhost:3000/cb":         true,
		"cursor://anysphere.cursor/oauth":  true,
		"com.example.app:/oauth2redirect":  true,
		"http://host.example/cb":           false,
		"https:///cb":                      false,
		"/cb":                              false,
		"javascript:alert(1)":              false,
		"data:text/html,x":                 false,
		"https://host.example/cb#fragment": false,
	} {
		if err := checkRedirect(uri); (err == nil) != ok {
			t.Errorf("%s: %v, want ok=%v", uri, err, ok)
		}
	}
}
