package mcp_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/quire/quire/app"
	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/mcp"
)

// twins serves e's app through two MCP servers, one with the sessionless
// prompts/get fast path and one without it, each behind what the HTTP API
// does for /mcp: the bearer token authenticated, its principal in the
// request's context.
func twins(tb testing.TB, e *testenv.Env, maxBody int64) (fast, sdkOnly http.Handler, fastServer *mcp.Server) {
	tb.Helper()
	o := mcp.Options{Version: "test", MaxBody: maxBody}
	fast, fastServer = behindAPI(e, o)
	sdkOnly, _ = behindAPI(e, mcp.SDKOnly(o))
	return fast, sdkOnly, fastServer
}

// behindAPI is an MCP server over e's app with options o, behind what
// the HTTP API does for /mcp.
func behindAPI(e *testenv.Env, o mcp.Options) (http.Handler, *mcp.Server) {
	srv := mcp.New(e.App, o)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := e.App.Authenticate(r.Context(), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		srv.ServeHTTP(w, r.WithContext(app.WithPrincipal(r.Context(), p)))
	}), srv
}

// sessionlessGet is a 2026-07-28 prompts/get as a client of that revision
// sends it (the _meta triple; Mcp-Method, Mcp-Name and the version in
// headers), which a case edits: params replace the default ones ("_meta"
// included; nil removes one); a header set to "" is removed; body, when
// set, is sent as it is (with the default params' headers).
type sessionlessGet struct {
	token  string
	id     any
	params map[string]any
	header map[string]string
	body   string
}

// meta is the _meta a 2026-07-28 client sends.
func meta() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
}

func (c sessionlessGet) request() *http.Request {
	params := edited(map[string]any{"name": "demo/greet", "arguments": map[string]any{"name": "Ann"}, "_meta": meta()}, c.params)
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "prompts/get"}
	if n, ok := params["name"].(string); ok {
		h["Mcp-Name"] = n
	}
	return post(c.token, cmp.Or(c.body, promptGetBody(c.id, params)), h, c.header)
}

// edited is params with edits made: a nil value removes its name.
func edited(params, edits map[string]any) map[string]any {
	for k, v := range edits {
		if v == nil {
			delete(params, k)
		} else {
			params[k] = v
		}
	}
	return params
}

// promptGetBody is a prompts/get call of params with id (1 when nil).
func promptGetBody(id any, params map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": cmp.Or(id, any(1)), "method": "prompts/get", "params": params})
	return string(b)
}

// post is a POST of body to /mcp as a host sends it, with token, the
// headers h, and then edits to them ("" removes one).
func post(token, body string, h, edits map[string]string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for _, m := range []map[string]string{h, edits} {
		for k, v := range m {
			if v == "" {
				r.Header.Del(k)
			} else {
				r.Header.Set(k, v)
			}
		}
	}
	return r
}

// answer is what a handler wrote.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func serve(h http.Handler, r *http.Request) answer {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return answer{w.Code, w.Result().Header, w.Body.Bytes()}
}

func (a answer) String() string {
	return fmt.Sprintf("%d %v %.300s", a.status, a.header, a.body)
}

// differ says how the fast path's answer differs from the SDK's: status,
// headers, and the body, as JSON when it is.
func differ(fast, sdk answer) string {
	if !reflect.DeepEqual(fast.header, sdk.header) {
		return "headers"
	}
	if fast.status != sdk.status {
		return "status"
	}
	var f, s any
	if json.Unmarshal(fast.body, &f) == nil && json.Unmarshal(sdk.body, &s) == nil {
		if !reflect.DeepEqual(f, s) {
			return "JSON body"
		}
		return ""
	}
	if !bytes.Equal(fast.body, sdk.body) {
		return "body"
	}
	return ""
}

// fastFixture is the fixture with a label on demo/greet, a prompt of no
// variables (demo/plain), an outsider's session, a key limited to another
// project, and the twin servers.
type fastFixture struct {
	*fixture
	key, outsider, elsewhere string
	fast, sdk                http.Handler
	fastServer               *mcp.Server
}

const fastMaxBody = 4096

func newFastFixture(t *testing.T) *fastFixture {
	f := &fastFixture{fixture: newFixture(t)}
	e := f.e
	e.Must(200, "PUT", "/v1/prompts/"+f.greet+"/labels/staging", e.Admin, map[string]any{"version": 1})
	f.publishPrompt(t, "plain", map[string]any{"template": "No variables."})
	f.key = e.CreateKey(e.Admin, "read")
	_, f.outsider = e.CreateUser("outsider@example.com")
	f.elsewhere = e.CreateKey(e.Admin, "read", e.CreateProject(e.Admin, "other"))
	f.fast, f.sdk, f.fastServer = twins(t, e, fastMaxBody)
	return f
}

// TestSessionlessFastPath: a sessionless prompts/get the fast path
// answers is answered as the SDK answers it: the same status, headers and
// bytes (the envelope, the id as the SDK reads it, resultType "complete",
// the server's name in _meta). And it is the fast path that answered.
func TestSessionlessFastPath(t *testing.T) {
	f := newFastFixture(t)
	greet := func(args map[string]any) map[string]any { return map[string]any{"arguments": args} }
	for name, c := range map[string]sessionlessGet{
		"text":             {},
		"json argument":    {params: greet(map[string]any{"name": "Ann", "role": `["admin"]`})},
		"html in argument": {params: greet(map[string]any{"name": "<b>Ann & \u2028co</b>"})},
		"chat": {params: map[string]any{"name": "demo/support",
			"arguments": map[string]any{"product": "quire", "question": "why?"}}},
		"version":      {params: map[string]any{"name": "demo/greet@1"}},
		"label":        {params: map[string]any{"name": "demo/greet#staging"}},
		"no arguments": {params: map[string]any{"name": "demo/plain", "arguments": nil}},
		"arguments null": {body: `{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"demo/plain","arguments":null,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			header: map[string]string{"Mcp-Name": "demo/plain"}},
		"id zero":         {id: 0},
		"id negative":     {id: -3},
		"id large":        {id: json.Number("9007199254740993")},
		"id fraction":     {id: 1.5},
		"id exponent":     {id: json.Number("1e2")},
		"id string":       {id: "req-<7>"},
		"id empty string": {id: ""},
		"session key":     {token: "admin"},
		"no client info":  {params: map[string]any{"_meta": without(meta(), "io.modelcontextprotocol/clientInfo")}},
		"capabilities": {params: map[string]any{"_meta": with(meta(), "io.modelcontextprotocol/clientCapabilities", map[string]any{
			"roots": map[string]any{"listChanged": true}, "sampling": map[string]any{}, "elicitation": map[string]any{"form": map[string]any{}},
			"extensions": map[string]any{"io.modelcontextprotocol/skills": map[string]any{}}, "experimental": map[string]any{"x": 1e300}})}},
		"log level":       {params: map[string]any{"_meta": with(meta(), "io.modelcontextprotocol/logLevel", "debug")}},
		"charset":         {header: map[string]string{"Content-Type": "application/json; charset=utf-8"}},
		"accept wildcard": {header: map[string]string{"Accept": "*/*"}},
		"accept split":    {header: map[string]string{"Accept": "text/event-stream;q=0.5 , APPLICATION/JSON"}},
	} {
		t.Run(name, func(t *testing.T) {
			c.token = f.token(c.token)
			fast, want := serve(f.fast, c.request()), serve(f.sdk, c.request())
			if want.status != 200 || !bytes.Contains(want.body, []byte(`"result"`)) {
				t.Fatalf("the SDK answers %v: not a case for the fast path", want)
			}
			if d := differ(fast, want); d != "" || !bytes.Equal(fast.body, want.body) {
				t.Fatalf("%s differs:\nfast %v\nsdk  %v", cmp.Or(d, "bytes"), fast, want)
			}
			before := mcp.FastAnswers(f.fastServer)
			serve(f.fast, c.request())
			if mcp.FastAnswers(f.fastServer) != before+1 {
				t.Errorf("the fast path did not answer: the SDK did")
			}
		})
	}
}

// TestSessionlessFastPathRefusals: every request the fast path does not
// answer (the SDK refuses it, or the render fails) gets the SDK's own
// answer, whether the fast path is on or off: the same status, headers
// and JSON-RPC error (compared as parsed JSON), or the same text.
func TestSessionlessFastPathRefusals(t *testing.T) {
	f := newFastFixture(t)
	metaBody := func(m string) string {
		return `{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"demo/greet","arguments":{"name":"A"},"_meta":` + m + `}}`
	}
	const triple = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	for _, c := range []struct {
		name string
		call sessionlessGet
		// status and code are the SDK's answer, checked so each case
		// tests what it says (code 0: no JSON-RPC error to check).
		status int
		code   float64
	}{
		{"unknown prompt", sessionlessGet{params: map[string]any{"name": "demo/nope"}}, 400, -32602},
		{"missing argument", sessionlessGet{params: map[string]any{"name": "demo/support", "arguments": map[string]any{"product": "q"}}}, 400, -32602},
		{"bad selector", sessionlessGet{params: map[string]any{"name": "demo/greet@0"}}, 400, -32602},
		{"unknown label", sessionlessGet{params: map[string]any{"name": "demo/greet#production"}}, 400, -32602},
		{"outsider", sessionlessGet{token: "outsider"}, 400, -32602},
		{"key for another project", sessionlessGet{token: "elsewhere"}, 400, -32602},
		{"wrong Mcp-Name", sessionlessGet{header: map[string]string{"Mcp-Name": "demo/support"}}, 400, -32020},
		{"no Mcp-Name", sessionlessGet{header: map[string]string{"Mcp-Name": ""}}, 400, -32020},
		{"method differs", sessionlessGet{body: `{"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{"_meta":{` + triple + `}}}`}, 400, -32020},
		{"method differs, params fit", sessionlessGet{body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo/greet","arguments":{"name":"A"},"_meta":{` + triple + `}}}`}, 400, -32020},
		{"header version older", sessionlessGet{header: map[string]string{"MCP-Protocol-Version": "2025-11-25"}}, 400, -32020},
		{"header version unknown", sessionlessGet{header: map[string]string{"MCP-Protocol-Version": "2027-01-01"}}, 400, -32020},
		{"version unknown in both", sessionlessGet{params: map[string]any{"_meta": with(meta(), "io.modelcontextprotocol/protocolVersion", "2027-01-01")},
			header: map[string]string{"MCP-Protocol-Version": "2027-01-01"}}, 400, -32022},
		{"no header version", sessionlessGet{header: map[string]string{"MCP-Protocol-Version": ""}}, 400, -32020},
		{"body version older", sessionlessGet{params: map[string]any{"_meta": with(meta(), "io.modelcontextprotocol/protocolVersion", "2025-11-25")}}, 400, -32020},
		{"no body version", sessionlessGet{params: map[string]any{"_meta": without(meta(), "io.modelcontextprotocol/protocolVersion")}}, 400, -32602},
		{"no capabilities", sessionlessGet{params: map[string]any{"_meta": without(meta(), "io.modelcontextprotocol/clientCapabilities")}}, 400, -32602},
		{"capabilities of a wrong type", sessionlessGet{params: map[string]any{"_meta": with(meta(), "io.modelcontextprotocol/clientCapabilities", map[string]any{"sampling": 5})}}, 400, -32602},
		{"client info null", sessionlessGet{body: metaBody(`{` + triple + `,"io.modelcontextprotocol/clientInfo":null}`)}, 400, -32602},
		{"client info a string", sessionlessGet{params: map[string]any{"_meta": with(meta(), "io.modelcontextprotocol/clientInfo", "raw")}}, 400, -32602},
		{"number out of range in _meta", sessionlessGet{body: metaBody(`{` + triple + `,"x":1e400}`)}, 400, -32602},
		{"no _meta", sessionlessGet{params: map[string]any{"_meta": nil}}, 400, -32602},
		{"argument not a string", sessionlessGet{params: map[string]any{"arguments": map[string]any{"name": 5}}}, 400, -32020},
		{"argument null", sessionlessGet{params: map[string]any{"arguments": map[string]any{"name": nil}}}, 200, 0},
		{"name in other case", sessionlessGet{body: `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"Name":"demo/greet","arguments":{"name":"A"},"_meta":{` + triple + `}}}`}, 400, -32020},
		{"name twice", sessionlessGet{body: `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"demo/nope","name":"demo/greet","arguments":{"name":"A"},"_meta":{` + triple + `}}}`}, 200, 0},
		{"input responses", sessionlessGet{params: map[string]any{"inputResponses": map[string]any{}, "requestState": "x"}}, 200, 0},
		{"input responses of a wrong type", sessionlessGet{params: map[string]any{"inputResponses": 5}}, 400, -32020},
		{"request state of a wrong type", sessionlessGet{params: map[string]any{"requestState": 5}}, 400, -32020},
		{"extra member", sessionlessGet{body: `{"jsonrpc":"2.0","id":4,"method":"prompts/get","extra":[1],"params":{"name":"demo/greet","arguments":{"name":"A"},"_meta":{` + triple + `}}}`}, 200, 0},
		{"error member", sessionlessGet{body: `{"jsonrpc":"2.0","id":4,"method":"prompts/get","error":5,"params":{"name":"demo/greet","arguments":{"name":"A"},"_meta":{` + triple + `}}}`}, 400, 0},
		{"id underflowing", sessionlessGet{id: json.Number("1e-400")}, 200, 0},
		{"id overflowing", sessionlessGet{id: json.Number("1e400")}, 400, 0},
		{"number underflowing in _meta", sessionlessGet{body: metaBody(`{` + triple + `,"x":1e-400}`)}, 200, 0},
		{"params missing", sessionlessGet{body: `{"jsonrpc":"2.0","id":2,"method":"prompts/get"}`}, 400, 0},
		{"params null", sessionlessGet{body: `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":null}`}, 400, -32602},
		{"batch", sessionlessGet{body: `[` + metaBody(`{`+triple+`}`) + `]`}, 400, 0},
		{"notification", sessionlessGet{body: `{"jsonrpc":"2.0","method":"prompts/get","params":{"name":"demo/greet","arguments":{"name":"A"},"_meta":{` + triple + `}}}`}, 400, 0},
		{"id null", sessionlessGet{body: `{"jsonrpc":"2.0","id":null,"method":"prompts/get","params":{"name":"demo/greet","arguments":{"name":"A"},"_meta":{` + triple + `}}}`}, 400, 0},
		{"id an object", sessionlessGet{id: map[string]any{"a": 1}}, 400, 0},
		{"jsonrpc 1.0", sessionlessGet{body: `{"jsonrpc":"1.0","id":2,"method":"prompts/get","params":{"name":"demo/greet","arguments":{"name":"A"},"_meta":{` + triple + `}}}`}, 400, 0},
		{"not JSON", sessionlessGet{body: `{"jsonrpc":"2.0","id":2,`}, 400, 0},
		{"trailing data", sessionlessGet{body: metaBody(`{`+triple+`}`) + ` {}`}, 200, 0},
		{"too deep", sessionlessGet{body: metaBody(`{` + triple + `,"x":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`)}, 400, 0},
		{"oversized body", sessionlessGet{params: map[string]any{"arguments": map[string]any{"name": strings.Repeat("a", fastMaxBody)}}}, 413, 0},
		// The SDK reads a body's first JSON value and ignores what follows,
		// but not beyond its limit.
		{"body at the limit", sessionlessGet{body: padded(metaBody(`{`+triple+`}`), fastMaxBody)}, 200, 0},
		{"body a byte over the limit", sessionlessGet{body: padded(metaBody(`{`+triple+`}`), fastMaxBody+1)}, 413, 0},
		{"wrong Content-Type", sessionlessGet{header: map[string]string{"Content-Type": "text/plain"}}, 415, 0},
		{"no Content-Type", sessionlessGet{header: map[string]string{"Content-Type": ""}}, 415, 0},
		{"Accept without event streams", sessionlessGet{header: map[string]string{"Accept": "application/json"}}, 400, 0},
		{"no Accept", sessionlessGet{header: map[string]string{"Accept": ""}}, 400, 0},
		{"Last-Event-ID", sessionlessGet{header: map[string]string{"Last-Event-ID": "x_1"}}, 400, 0},
		{"Mcp-Session-Id", sessionlessGet{header: map[string]string{"Mcp-Session-Id": "nope"}}, 200, 0},
		{"bad token", sessionlessGet{token: "ak_nope"}, 401, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.call.token = f.token(c.call.token)
			fast, want := serve(f.fast, c.call.request()), serve(f.sdk, c.call.request())
			sameAsSDK(t, fast, want, c.status, c.code)
		})
	}
}

// sameAsSDK checks the SDK answered a case with status and JSON-RPC
// error code (0: none), so the case tests what it says, and that the
// fast path's answer is the same.
func sameAsSDK(t *testing.T, fast, want answer, status int, code float64) {
	t.Helper()
	var msg struct {
		Error struct{ Code float64 }
	}
	json.Unmarshal(want.body, &msg)
	if want.status != status || msg.Error.Code != code {
		t.Errorf("the SDK answers %v, want status %d and code %v", want, status, code)
	}
	if d := differ(fast, want); d != "" {
		t.Errorf("%s differs:\nfast %v\nsdk  %v", d, fast, want)
	}
}

// token is the credential a case names: the read key by default.
func (f *fastFixture) token(name string) string {
	switch name {
	case "":
		return f.key
	case "admin":
		return f.e.Admin
	case "outsider":
		return f.outsider
	case "elsewhere":
		return f.elsewhere
	}
	return name
}

// padded is body with spaces after it, n bytes in all.
func padded(body string, n int) string { return body + strings.Repeat(" ", n-len(body)) }

func with(m map[string]any, k string, v any) map[string]any { m[k] = v; return m }

func without(m map[string]any, k string) map[string]any { delete(m, k); return m }
