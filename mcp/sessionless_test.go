package mcp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/mcp"
)

// TestSessionlessBuildsNoServer: a sessionless (2026-07-28) request gets
// a server session of its own, but on the one SDK server quire built at
// start, whose tools and their input and output schemas were inferred
// once (issue 32: "a server instance per request must not rebuild tool
// schemas"). Measured by allocations: a sessionless tools/list costs over
// a session's tools/list less than a tenth of building the server again,
// which is what rebuilding the tools per request would add.
func TestSessionlessBuildsNoServer(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("allocation counts are not meaningful under coverage")
	}
	f := fixtureOn(t, testenv.New(t))
	e := f.e
	key := e.CreateKey(e.Admin, "read")
	cs := connect(t, e, key, "2025-11-25", nil)
	header := func(r *http.Request) *http.Request {
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Authorization", "Bearer "+key)
		return r
	}
	session := func() *http.Request {
		r := header(httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)))
		r.Header.Set("Mcp-Session-Id", cs.ID())
		r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		return r
	}
	sessionless := func() *http.Request {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{`+
			`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},`+
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
		header(req)
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		return req
	}
	allocs := func(name string, newReq func() *http.Request) float64 {
		t.Helper()
		serve := func() {
			w := httptest.NewRecorder()
			e.Server.ServeHTTP(w, newReq())
			body, _ := io.ReadAll(w.Result().Body)
			if w.Code != 200 || !strings.Contains(string(body), `"render_prompt"`) || !strings.Contains(string(body), `"inputSchema"`) {
				t.Fatalf("%s tools/list: %d %.300s", name, w.Code, body)
			}
		}
		serve() // warm: the credential's first use, caches
		return testing.AllocsPerRun(50, serve)
	}
	withSession, without := allocs("session", session), allocs("sessionless", sessionless)
	build := testing.AllocsPerRun(5, func() { mcp.New(e.App, mcp.Options{}) })
	t.Logf("allocations: tools/list on a session %.0f, sessionless %.0f; building the MCP server %.0f", withSession, without, build)
	if without-withSession > build/10 {
		t.Errorf("a sessionless tools/list allocates %.0f more than a session's: the server's tools look rebuilt per request (building them all: %.0f)", without-withSession, build)
	}
}
