package mcp_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire/mcp"
)

// sessionVersion is the version the session tests' sessions speak.
const sessionVersion = "2025-11-25"

// openSession initializes an MCP session on h with token, as a
// 2025-11-25 host does (initialize, then notifications/initialized), and
// returns its id.
func openSession(t testing.TB, h http.Handler, token string) string {
	t.Helper()
	send := func(session, body string) answer {
		hdr := map[string]string{}
		if session != "" {
			hdr = map[string]string{"Mcp-Session-Id": session, "MCP-Protocol-Version": sessionVersion}
		}
		return serve(h, post(token, body, hdr, nil))
	}
	a := send("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+sessionVersion+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	id := a.header.Get("Mcp-Session-Id")
	if a.status != 200 || id == "" {
		t.Fatalf("initialize: %v", a)
	}
	if a := send(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); a.status != 202 {
		t.Fatalf("notifications/initialized: %v", a)
	}
	return id
}

// sessionGet is a prompts/get on a session as a 2025-11-25 host sends it,
// which a case edits as sessionlessGet's are.
type sessionGet struct {
	token  string
	id     any
	params map[string]any
	header map[string]string
	body   string
}

func (c sessionGet) request(session string) *http.Request {
	params := edited(map[string]any{"name": "demo/greet", "arguments": map[string]any{"name": "Ann"}}, c.params)
	h := map[string]string{"Mcp-Session-Id": session, "MCP-Protocol-Version": sessionVersion}
	return post(c.token, cmp.Or(c.body, promptGetBody(c.id, params)), h, c.header)
}

// sessionTwins are a session of the same credential on each twin.
type sessionTwins struct{ fast, sdk string }

func (f *fastFixture) sessions(t testing.TB, token string) sessionTwins {
	return sessionTwins{openSession(t, f.fast, token), openSession(t, f.sdk, token)}
}

// TestSessionFastPath: a prompts/get on a 2025-11-25 session that the
// fast path answers is answered as the SDK answers it on its own session:
// the same status, headers and bytes. And the fast path answered it.
func TestSessionFastPath(t *testing.T) {
	f := newFastFixture(t)
	open := map[string]sessionTwins{}
	for name, c := range map[string]sessionGet{
		"text":          {},
		"json argument": {params: map[string]any{"arguments": map[string]any{"name": "Ann", "role": `["admin"]`}}},
		"chat": {params: map[string]any{"name": "demo/support",
			"arguments": map[string]any{"product": "quire", "question": "why?"}}},
		"version":         {params: map[string]any{"name": "demo/greet@1"}},
		"label":           {params: map[string]any{"name": "demo/greet#staging"}},
		"no arguments":    {params: map[string]any{"name": "demo/plain", "arguments": nil}},
		"arguments null":  {body: `{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"demo/plain","arguments":null}}`},
		"id zero":         {id: 0},
		"id large":        {id: json.Number("9007199254740993")},
		"id fraction":     {id: 1.5},
		"id string":       {id: "req-<7>"},
		"id empty string": {id: ""},
		"session key":     {token: "admin"},
		"routing headers": {header: map[string]string{"Mcp-Method": "prompts/get", "Mcp-Name": "demo/greet"}},
		"charset":         {header: map[string]string{"Content-Type": "application/json; charset=utf-8"}},
		"accept wildcard": {header: map[string]string{"Accept": "*/*"}},
	} {
		t.Run(name, func(t *testing.T) {
			c.token = f.token(c.token)
			st, ok := open[c.token]
			if !ok {
				st = f.sessions(t, c.token)
				open[c.token] = st
			}
			fast, want := serve(f.fast, c.request(st.fast)), serve(f.sdk, c.request(st.sdk))
			if want.status != 200 || !bytes.Contains(want.body, []byte(`"result"`)) {
				t.Fatalf("the SDK answers %v: not a case for the fast path", want)
			}
			if d := differ(fast, want); d != "" || !bytes.Equal(fast.body, want.body) {
				t.Fatalf("%s differs:\nfast %v\nsdk  %v", cmp.Or(d, "bytes"), fast, want)
			}
			before := mcp.FastAnswers(f.fastServer)
			serve(f.fast, c.request(st.fast))
			if mcp.FastAnswers(f.fastServer) != before+1 {
				t.Errorf("the fast path did not answer: the SDK did")
			}
		})
	}
}

// TestSessionFastPathRefusals: every request on a session the fast path
// does not answer (the SDK refuses it, it is not a plain prompts/get, or
// the render fails) gets the SDK's own answer, whether the fast path is
// on or off.
func TestSessionFastPathRefusals(t *testing.T) {
	f := newFastFixture(t)
	st := f.sessions(t, f.key)
	for _, c := range []struct {
		name string
		call sessionGet
		// session, when set, replaces the session's id ("-": none).
		session string
		// status and code are the SDK's answer, checked so each case
		// tests what it says (code 0: no JSON-RPC error to check).
		status int
		code   float64
	}{
		{name: "unknown prompt", call: sessionGet{params: map[string]any{"name": "demo/nope"}}, status: 200, code: -32602},
		{name: "missing argument", call: sessionGet{params: map[string]any{"name": "demo/support", "arguments": map[string]any{"product": "q"}}}, status: 200, code: -32602},
		{name: "unknown label", call: sessionGet{params: map[string]any{"name": "demo/greet#production"}}, status: 200, code: -32602},
		{name: "unknown session", session: "nope", status: 404},
		{name: "another user's credential", call: sessionGet{token: "outsider"}, status: 403},
		{name: "another key of the same user", call: sessionGet{token: "admin"}, status: 403},
		{name: "another version", call: sessionGet{header: map[string]string{"MCP-Protocol-Version": "2025-06-18"}}, status: 200},
		{name: "no version", call: sessionGet{header: map[string]string{"MCP-Protocol-Version": ""}}, status: 200},
		{name: "unsupported version", call: sessionGet{header: map[string]string{"MCP-Protocol-Version": "2024-01-01"}}, status: 400},
		// On a session the SDK does not check the routing headers of
		// 2026-07-28: the fast path leaves it the calls whose differ.
		{name: "Mcp-Method differs", call: sessionGet{header: map[string]string{"Mcp-Method": "tools/call"}}, status: 200},
		{name: "Mcp-Name differs", call: sessionGet{header: map[string]string{"Mcp-Method": "prompts/get", "Mcp-Name": "demo/support"}}, status: 200},
		{name: "Mcp-Param header", call: sessionGet{header: map[string]string{"Mcp-Param-Name": "Ann"}}, status: 200},
		{name: "a later version in _meta", call: sessionGet{params: map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}, status: 400, code: -32022},
		{name: "progress token", call: sessionGet{params: map[string]any{"_meta": map[string]any{"progressToken": 1}}}, status: 200},
		{name: "another method", call: sessionGet{body: `{"jsonrpc":"2.0","id":2,"method":"prompts/list"}`}, status: 200},
		{name: "prompts/get named in another method", call: sessionGet{body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"render_prompt","arguments":{"name":"prompts/get"}}}`}, status: 200},
		{name: "argument not a string", call: sessionGet{params: map[string]any{"arguments": map[string]any{"name": 5}}}, status: 200, code: -32602},
		{name: "name in other case", call: sessionGet{body: `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"Name":"demo/greet","arguments":{"name":"A"}}}`}, status: 200, code: -32602},
		{name: "name twice", call: sessionGet{body: `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"demo/nope","name":"demo/greet","arguments":{"name":"A"}}}`}, status: 200},
		{name: "extra member", call: sessionGet{body: `{"jsonrpc":"2.0","id":4,"method":"prompts/get","extra":[1],"params":{"name":"demo/greet","arguments":{"name":"A"}}}`}, status: 200},
		{name: "batch", call: sessionGet{body: `[{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"demo/greet","arguments":{"name":"A"}}}]`}, status: 400},
		{name: "notification", call: sessionGet{body: `{"jsonrpc":"2.0","method":"prompts/get","params":{"name":"demo/greet","arguments":{"name":"A"}}}`}, status: 400},
		{name: "jsonrpc 1.0", call: sessionGet{body: `{"jsonrpc":"1.0","id":2,"method":"prompts/get","params":{"name":"demo/greet","arguments":{"name":"A"}}}`}, status: 400},
		{name: "not JSON", call: sessionGet{body: `{"jsonrpc":"2.0","id":2,`}, status: 400},
		{name: "oversized body", call: sessionGet{params: map[string]any{"arguments": map[string]any{"name": strings.Repeat("a", fastMaxBody)}}}, status: 413},
		{name: "wrong Content-Type", call: sessionGet{header: map[string]string{"Content-Type": "text/plain"}}, status: 415},
		{name: "Accept without event streams", call: sessionGet{header: map[string]string{"Accept": "application/json"}}, status: 400},
		{name: "Last-Event-ID", call: sessionGet{header: map[string]string{"Last-Event-ID": "x_1"}}, status: 400},
		{name: "bad token", call: sessionGet{token: "ak_nope"}, status: 401},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.call.token = f.token(c.call.token)
			fs, ss := st.fast, st.sdk
			if c.session != "" {
				fs, ss = c.session, c.session
			}
			fast, want := serve(f.fast, c.call.request(fs)), serve(f.sdk, c.call.request(ss))
			sameAsSDK(t, fast, want, c.status, c.code)
		})
	}
	// A session its host ended is ended for the fast path at once.
	for name, h := range map[string]http.Handler{"fast": f.fast, "sdk": f.sdk} {
		id := map[string]string{"fast": st.fast, "sdk": st.sdk}[name]
		del := httptest.NewRequest(http.MethodDelete, "/mcp", nil)
		del.Header.Set("Authorization", "Bearer "+f.key)
		del.Header.Set("Mcp-Session-Id", id)
		del.Header.Set("MCP-Protocol-Version", sessionVersion)
		if a := serve(h, del); a.status != 204 && a.status != 200 {
			t.Fatalf("%s: DELETE: %v", name, a)
		}
		if a := serve(h, sessionGet{token: f.key}.request(id)); a.status != 404 {
			t.Errorf("%s: prompts/get on an ended session: %v", name, a)
		}
	}
}

// TestSessionFastPathKeepsSessionsOpen: the SDK ends a session it has
// not seen a request of for its timeout; the fast path answers a
// session's prompts/get only while the SDK has seen one of its requests
// within sdkEvery, so a session in use stays open. With a clock that
// stands still (every call answered by the fast path), the SDK ends the
// session while it is in use, and the fast path then answers nothing on
// it: the rule is what keeps it open.
func TestSessionFastPathKeepsSessionsOpen(t *testing.T) {
	f := newFastFixture(t)
	// Every other call reaches the SDK with the clock moving: one in
	// about timeout/3, well within the timeout even on a loaded machine.
	const timeout = 600 * time.Millisecond
	for _, c := range []struct {
		name string
		step time.Duration // how far the clock moves at each reading
		open bool
	}{
		{"clock moves", 31 * time.Second, true},
		{"clock stands still", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			now := time.Now()
			clock := func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				now = now.Add(c.step)
				return now
			}
			h, _ := behindAPI(f.e, mcp.SessionClock(mcp.Options{Version: "test"}, timeout, clock))
			id := openSession(t, h, f.key)
			statuses := map[int]int{}
			const calls = 18
			for range calls {
				statuses[serve(h, sessionGet{token: f.key}.request(id)).status]++
				time.Sleep(timeout / 6)
			}
			if open := statuses[200] == calls; open != c.open {
				t.Errorf("answers over %v: %v; want the session open: %v", calls*timeout/6, statuses, c.open)
			}
		})
	}
}
