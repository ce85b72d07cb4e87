package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// modernCall sends one 2026-07-28 request (sessionless: its version,
// client info and capabilities in _meta, the routing headers set as a
// client of that revision sets them) and answers the raw response.
func modernCall(t *testing.T, url, token, method string, params map[string]any, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if n, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", n)
	}
	if u, ok := params["uri"].(string); ok && method == "resources/read" {
		req.Header.Set("Mcp-Name", u)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var msg map[string]any
	if len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, &msg); err != nil {
			t.Fatalf("%s: %d %s", method, resp.StatusCode, b)
		}
	}
	return resp.StatusCode, msg
}

// TestModernResults: every result a 2026-07-28 client gets carries
// resultType "complete", and the results the revision gives cache
// hints carry ttlMs and cacheScope.
func TestModernResults(t *testing.T) {
	f := newFixture(t)
	cached := map[string]bool{"server/discover": true, "prompts/list": true, "resources/list": true,
		"resources/templates/list": true, "tools/list": true, "resources/read": true}
	for _, c := range []struct {
		method string
		params map[string]any
	}{
		{"server/discover", nil},
		{"prompts/list", nil},
		{"prompts/get", map[string]any{"name": "demo/greet", "arguments": map[string]any{"name": "A"}}},
		{"resources/list", nil},
		{"resources/templates/list", nil},
		{"resources/read", map[string]any{"uri": "skill://demo/pdf-tools/SKILL.md"}},
		{"resources/directory/read", map[string]any{"uri": "skill://demo/pdf-tools"}},
		{"skills/list", nil},
		{"skills/get", map[string]any{"uri": "skill://demo/pdf-tools/SKILL.md"}},
		{"tools/list", nil},
		{"tools/call", map[string]any{"name": "render_prompt", "arguments": map[string]any{"slug": "demo/greet", "variables": map[string]any{"name": "A"}}}},
	} {
		code, msg := modernCall(t, f.e.URL, f.e.Admin, c.method, c.params, nil)
		res, _ := msg["result"].(map[string]any)
		if code != 200 || res == nil {
			t.Errorf("%s: %d %v", c.method, code, msg)
			continue
		}
		if res["resultType"] != "complete" {
			t.Errorf("%s: resultType %v", c.method, res["resultType"])
		}
		// Servers SHOULD name themselves in each result's _meta.
		if meta, _ := res["_meta"].(map[string]any); meta["io.modelcontextprotocol/serverInfo"] == nil {
			t.Errorf("%s: _meta %v", c.method, res["_meta"])
		}
		if cached[c.method] || c.method == "resources/directory/read" {
			if _, ok := res["ttlMs"].(float64); !ok || res["cacheScope"] == nil {
				t.Errorf("%s: ttlMs %v cacheScope %v", c.method, res["ttlMs"], res["cacheScope"])
			}
		}
	}
}

// TestModernHeaders: a 2026-07-28 request whose routing headers
// disagree with its body, or lack them, is refused with HeaderMismatch;
// server/discover declares the skills extension and the versions.
func TestModernHeaders(t *testing.T) {
	f := newFixture(t)
	get := map[string]any{"name": "demo/greet", "arguments": map[string]any{"name": "A"}}
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want float64
	}{
		{"method differs", map[string]string{"Mcp-Method": "prompts/list"}, -32020},
		{"name differs", map[string]string{"Mcp-Name": "demo/other"}, -32020},
		{"version differs", map[string]string{"MCP-Protocol-Version": "2025-11-25"}, -32020},
		{"no version", map[string]string{"MCP-Protocol-Version": ""}, -32020},
		{"no method", map[string]string{"Mcp-Method": ""}, -32020},
		{"no name", map[string]string{"Mcp-Name": ""}, -32020},
	} {
		code, msg := modernCall(t, f.e.URL, f.e.Admin, "prompts/get", get, c.hdr)
		e, _ := msg["error"].(map[string]any)
		if code != 400 || e == nil || e["code"] != c.want {
			t.Errorf("%s: %d %v, want 400 and code %v", c.name, code, msg, c.want)
		}
	}
	code, msg := modernCall(t, f.e.URL, f.e.Admin, "server/discover", nil, nil)
	res, _ := msg["result"].(map[string]any)
	if code != 200 || res["resultType"] != "complete" || res["ttlMs"] == nil {
		t.Errorf("server/discover: %d %v", code, msg)
	}
	if v, _ := res["supportedVersions"].([]any); len(v) == 0 || v[0] != "2026-07-28" {
		t.Errorf("supportedVersions %v", res["supportedVersions"])
	}
	caps, _ := res["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	if _, ok := ext["io.modelcontextprotocol/skills"]; !ok {
		t.Errorf("discover capabilities %v", caps)
	}
}

// TestStableListOrder: every list answers in the same order each time
// (2026-07-28 asks it, for caching), tools by name.
func TestStableListOrder(t *testing.T) {
	f := newFixture(t)
	f.publishPrompt(t, "alpha", map[string]any{"template": "a"})
	names := func(method, list, key string) []string {
		code, msg := modernCall(t, f.e.URL, f.e.Admin, method, nil, nil)
		res, _ := msg["result"].(map[string]any)
		items, _ := res[list].([]any)
		if code != 200 || len(items) == 0 {
			t.Fatalf("%s: %d %v", method, code, msg)
		}
		var out []string
		for _, it := range items {
			out = append(out, it.(map[string]any)[key].(string))
		}
		return out
	}
	for _, c := range []struct{ method, list, key string }{
		{"prompts/list", "prompts", "name"}, {"tools/list", "tools", "name"},
		{"resources/list", "resources", "uri"}, {"skills/list", "skills", "uri"},
	} {
		first := names(c.method, c.list, c.key)
		for range 3 {
			if again := names(c.method, c.list, c.key); !slices.Equal(first, again) {
				t.Errorf("%s: %v, then %v", c.method, first, again)
			}
		}
		if c.method == "tools/list" && !slices.IsSorted(first) {
			t.Errorf("tools/list not by name: %v", first)
		}
	}
}

// TestOlderSessions: 2025-11-25 and 2025-06-18 sessions work as before
// beside the 2026-07-28 adapter.
func TestOlderSessions(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		cs := connect(t, f.e, f.e.Admin, v, nil)
		if got := cs.InitializeResult().ProtocolVersion; got != v {
			t.Fatalf("negotiated %s, want %s", got, v)
		}
		res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/greet", Arguments: map[string]string{"name": "Ol"}})
		if err != nil || text(res.Messages[0]) != "Hello Ol, you are nobody." {
			t.Fatalf("%s prompts/get: %v %s", v, err, dump(res))
		}
		read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "skill://demo/pdf-tools/scripts/fill.py"})
		if err != nil || read.Contents[0].Text != "print(1)\n" {
			t.Fatalf("%s resources/read: %v %s", v, err, dump(read))
		}
		tools, err := cs.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) != 7 {
			t.Fatalf("%s tools/list: %v %s", v, err, dump(tools))
		}
	}
}
