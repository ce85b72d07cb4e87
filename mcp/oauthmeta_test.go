package mcp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/quire/quire/internal/testenv"
)

// TestProtectedResourceMetadata: a host that meets /mcp's 401 finds the
// OAuth protected resource metadata (RFC 9728) from the challenge's
// resource_metadata, as the Go SDK's own OAuth client reads them: the
// resource is /mcp and quire is its authorization server. API keys keep
// working as before.
func TestProtectedResourceMetadata(t *testing.T) {
	e := testenv.New(t)
	req, _ := http.NewRequest("POST", e.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("status %d", res.StatusCode)
	}
	challenges, err := oauthex.ParseWWWAuthenticate(res.Header.Values("WWW-Authenticate"))
	if err != nil || len(challenges) != 1 || challenges[0].Scheme != "bearer" {
		t.Fatalf("WWW-Authenticate %q: %v %+v", res.Header.Values("WWW-Authenticate"), err, challenges)
	}
	metaURL := challenges[0].Params["resource_metadata"]
	if metaURL != e.URL+"/.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("resource_metadata %q", metaURL)
	}
	for _, u := range []string{metaURL, e.URL + "/.well-known/oauth-protected-resource"} {
		prm, err := oauthex.GetProtectedResourceMetadata(context.Background(), u, e.URL+"/mcp", http.DefaultClient)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != e.URL ||
			strings.Join(prm.BearerMethodsSupported, ",") != "header" || strings.Join(prm.ScopesSupported, ",") != "read,write" {
			t.Errorf("%s: %+v", u, prm)
		}
	}

	// An untrusted peer's X-Forwarded-Proto is ignored (the test server
	// trusts no proxy): the URLs stay http.
	req, _ = http.NewRequest("GET", e.URL+"/.well-known/oauth-protected-resource/mcp", nil)
	req.Header.Set("X-Forwarded-Proto", "https")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || strings.Contains(string(body), "https://") {
		t.Errorf("an untrusted X-Forwarded-Proto: %d %s", res.StatusCode, body)
	}
}

// TestProtectedResourceMetadataBehindProxy: behind a trusted proxy that
// terminates TLS (X-Forwarded-Proto: https), the challenge and the
// document name https URLs.
func TestProtectedResourceMetadataBehindProxy(t *testing.T) {
	e := testenv.NewWith(t, testenv.Options{TrustedProxies: []string{"127.0.0.1", "::1"}})
	req, _ := http.NewRequest("POST", e.URL+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("X-Forwarded-Proto", "https")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	host := strings.TrimPrefix(e.URL, "http://")
	if want := `resource_metadata="https://` + host + `/.well-known/oauth-protected-resource/mcp"`; res.StatusCode != 401 || !strings.Contains(res.Header.Get("WWW-Authenticate"), want) {
		t.Fatalf("%d %q, want %s", res.StatusCode, res.Header.Get("WWW-Authenticate"), want)
	}
	req, _ = http.NewRequest("GET", e.URL+"/.well-known/oauth-protected-resource/mcp", nil)
	req.Header.Set("X-Forwarded-Proto", "https")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `"resource":"https://`+host+`/mcp"`) || !strings.Contains(string(body), `"authorization_servers":["https://`+host+`"]`) {
		t.Fatalf("behind a trusted proxy: %s", body)
	}
}
