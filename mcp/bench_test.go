package mcp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire/internal/testenv"
)

// BenchmarkGetPrompt is prompts/get of a cached live prompt on one
// session, in process, beside the REST render of the same prompt: for
// profiling (go test -bench GetPrompt -cpuprofile); cmd/quire-bench
// measures the figures.
func BenchmarkGetPrompt(b *testing.B) {
	f := fixtureOn(b, testenv.New(b))
	e := f.e
	key := e.CreateKey(e.Admin, "read")
	ctx := context.Background()
	params := &sdk.GetPromptParams{Name: "demo/greet", Arguments: map[string]string{"name": "Ann"}}
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		b.Run("mcp-"+v, func(b *testing.B) {
			cs := connect(b, e, key, v, nil)
			for b.Loop() {
				if _, err := cs.GetPrompt(ctx, params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("rest", func(b *testing.B) {
		client := &http.Client{}
		for b.Loop() {
			req, _ := http.NewRequest("POST", e.URL+"/v1/prompts/"+f.greet+"/render", strings.NewReader(`{"variables":{"name":"Ann"}}`))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			res, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	})
}

// BenchmarkGetPromptRaw is prompts/get as a bare HTTP client sends it on
// a session: the server's cost alone.
func BenchmarkGetPromptRaw(b *testing.B) {
	f := fixtureOn(b, testenv.New(b))
	e := f.e
	key := e.CreateKey(e.Admin, "read")
	cs := connect(b, e, key, "2025-11-25", nil)
	for name, body := range map[string]string{
		"get":  `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"demo/greet","arguments":{"name":"Ann"}}}`,
		"ping": `{"jsonrpc":"2.0","id":7,"method":"ping"}`,
	} {
		b.Run(name, func(b *testing.B) { rawLoop(b, e.URL, key, cs.ID(), body) })
	}
}

// BenchmarkGetPromptOAuth is BenchmarkGetPromptRaw's prompts/get with
// an OAuth access token beside the same call with an API key: what the
// token check adds (go test -bench GetPromptOAuth -cpuprofile).
func BenchmarkGetPromptOAuth(b *testing.B) {
	f := fixtureOn(b, testenv.New(b))
	e := f.e
	key := e.CreateKey(e.Admin, "read")
	const redirect = "http://127.0.0.1:9/callback"
	client := oauthClient(b, e, redirect)
	verifier, challenge := pkce()
	code := newBrowser(b, e).code(authorizeQuery(e, client, redirect, challenge, nil), "read")
	tok := tokenRequest(b, e, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
		"client_id": {client}, "redirect_uri": {redirect}, "resource": {e.URL + "/mcp"}})
	if tok.status != 200 {
		b.Fatalf("token: %+v", tok)
	}
	const body = `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"demo/greet","arguments":{"name":"Ann"}}}`
	for _, c := range []struct{ name, token string }{{"key", key}, {"oauth", tok.AccessToken}} {
		cs := connect(b, e, c.token, "2025-11-25", nil)
		b.Run(c.name, func(b *testing.B) { rawLoop(b, e.URL, c.token, cs.ID(), body) })
	}
}

// sessionPost is the POST a host sends on MCP session session.
func sessionPost(url, key, session, body string) *http.Request {
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	return req
}

func rawLoop(b *testing.B, url, key, session, body string) {
	client := &http.Client{}
	for b.Loop() {
		res, err := client.Do(sessionPost(url, key, session, body))
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(out), `"result"`) {
			b.Fatalf("%d %s", res.StatusCode, out)
		}
	}
}

// BenchmarkGetPromptSessions is prompts/get from 32 sessions at once, as
// a bare HTTP client sends it.
func BenchmarkGetPromptSessions(b *testing.B) {
	f := fixtureOn(b, testenv.New(b))
	e := f.e
	key := e.CreateKey(e.Admin, "read")
	ids := make(chan string, 32)
	for range 32 {
		ids <- connect(b, e, key, "2025-11-25", nil).ID()
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"demo/greet","arguments":{"name":"Ann"}}}`
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		id := <-ids
		client := &http.Client{}
		for pb.Next() {
			res, err := client.Do(sessionPost(e.URL, key, id, body))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	})
}

// BenchmarkSessionlessGetPrompt is a sessionless (2026-07-28) prompts/get
// in process: through the whole HTTP API (authentication, admission,
// access log), beside the REST render of the same prompt; and through the
// MCP server alone (authenticated as the API does it), with the fast path
// (fastpath.go) and without it, which the API's own server cannot turn
// off.
func BenchmarkSessionlessGetPrompt(b *testing.B) {
	f := fixtureOn(b, testenv.New(b))
	e := f.e
	key := e.CreateKey(e.Admin, "read")
	rest := httptest.NewRequest("POST", "/v1/prompts/"+f.greet+"/render", strings.NewReader(`{"variables":{"name":"Ann"}}`))
	rest.Header.Set("Authorization", "Bearer "+key)
	rest.Header.Set("Content-Type", "application/json")
	get := sessionlessGet{token: key}.request()
	bodies := map[*http.Request][]byte{}
	for _, r := range []*http.Request{rest, get} {
		bodies[r], _ = io.ReadAll(r.Body)
	}
	fast, sdkOnly, _ := twins(b, e, 0)
	for _, c := range []struct {
		name    string
		handler http.Handler
		request *http.Request
	}{
		{"api-fast", e.Server, get},
		{"api-rest", e.Server, rest},
		{"mcp-fast", fast, get},
		{"mcp-sdk", sdkOnly, get},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				r := c.request.Clone(c.request.Context())
				r.Body = io.NopCloser(bytes.NewReader(bodies[c.request]))
				w := httptest.NewRecorder()
				c.handler.ServeHTTP(w, r)
				if w.Code != 200 || !strings.Contains(w.Body.String(), "Hello Ann") {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}
