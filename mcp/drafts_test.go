package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPromptDrafts: open_draft and upsert_file propose a change to a
// prompt as they do to a skill: the prompt's files are written into the
// draft, the live version is untouched, and a file outside the prompt's
// layout or one that would break it is refused with a clear error.
func TestPromptDrafts(t *testing.T) {
	f := newFixture(t)
	e := f.e
	ctx := context.Background()
	cs := connect(t, e, e.Admin, "", nil)
	call := func(name string, args map[string]any) (*sdk.CallToolResult, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var m map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &m)
		return res, m
	}
	_, d := call("open_draft", map[string]any{"slug": "demo/greet"})
	if d["version"] != 2.0 || d["state"] != "draft" {
		t.Fatalf("open_draft of a prompt: %v", d)
	}
	res, u := call("upsert_file", map[string]any{"slug": "demo/greet", "version": 2, "file_path": "prompt.txt", "content": "Hi {{name}}!"})
	if res.IsError || u["file_path"] != "prompt.txt" || u["state"] != "draft" || u["commit"] == d["commit"] {
		t.Fatalf("upsert_file into a prompt draft: %s", dump(res))
	}
	v := e.Must(200, "GET", "/v1/prompts/"+f.greet+"/versions/2", e.Admin, nil)
	if !strings.Contains(string(v.Body), `"Hi {{name}}!"`) {
		t.Fatalf("draft 2 after upsert_file: %s", v.Body)
	}
	live, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/greet", Arguments: map[string]string{"name": "Al"}})
	if err != nil || text(live.Messages[0]) != "Hello Al, you are nobody." {
		t.Fatalf("the live version changed: %v %s", err, dump(live))
	}

	// A chat prompt: a message replaced and one added.
	_, d = call("open_draft", map[string]any{"slug": "demo/support"})
	for path, content := range map[string]string{"messages/001-system.txt": "You help with {{product}}, briefly.", "messages/004-user.txt": "And then?"} {
		if res, _ := call("upsert_file", map[string]any{"slug": "demo/support", "version": d["version"], "file_path": path, "content": content}); res.IsError {
			t.Fatalf("upsert_file %s: %s", path, dump(res.Content))
		}
	}
	v = e.Must(200, "GET", "/v1/prompts/"+f.chat+"/versions/2", e.Admin, nil)
	if !strings.Contains(string(v.Body), "briefly.") || !strings.Contains(string(v.Body), "And then?") {
		t.Fatalf("chat draft after upsert_file: %s", v.Body)
	}

	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"not a prompt file", map[string]any{"slug": "demo/greet", "version": 2, "file_path": "notes.md", "content": "x"}, "not a prompt file"},
		{"messages in a text prompt", map[string]any{"slug": "demo/greet", "version": 2, "file_path": "messages/001-user.txt", "content": "x"}, "not both"},
		{"a gap in the messages", map[string]any{"slug": "demo/support", "version": 2, "file_path": "messages/009-user.txt", "content": "x"}, "out of order"},
		{"a published version", map[string]any{"slug": "demo/greet", "version": 1, "file_path": "prompt.txt", "content": "x"}, "only a draft"},
		{"no such prompt", map[string]any{"slug": "demo/nothing", "version": 1, "file_path": "prompt.txt", "content": "x"}, "not found"},
		{"a bad config", map[string]any{"slug": "demo/greet", "version": 2, "file_path": "config.json", "content": "[1]"}, ""},
	} {
		res, _ := call("upsert_file", c.args)
		if !res.IsError || !strings.Contains(dump(res.Content), c.want) {
			t.Errorf("%s: %s", c.name, dump(res))
		}
	}
}

// TestOpenReview: open_review asks for review of the draft an agent
// made, of a skill or a prompt; a read key is refused and it publishes
// nothing.
func TestOpenReview(t *testing.T) {
	f := newFixture(t)
	e := f.e
	ctx := context.Background()
	cs := connect(t, e, e.Admin, "", nil)
	call := func(cs *sdk.ClientSession, name string, args map[string]any) (*sdk.CallToolResult, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var m map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &m)
		return res, m
	}
	for _, slug := range []string{"demo/greet", "demo/pdf-tools"} {
		_, d := call(cs, "open_draft", map[string]any{"slug": slug})
		res, r := call(cs, "open_review", map[string]any{"slug": slug, "version": d["version"], "title": "Shorter", "description": "Less to read."})
		if res.IsError || r["review"] != 1.0 || r["state"] != "open" || r["title"] != "Shorter" || r["version"] != d["version"] {
			t.Fatalf("open_review of %s: %s", slug, dump(res))
		}
	}
	res, _ := call(cs, "open_review", map[string]any{"slug": "demo/greet", "version": 2})
	if !res.IsError || !strings.Contains(dump(res.Content), "title") {
		t.Errorf("open_review without a title: %s", dump(res))
	}
	rcs := connect(t, e, e.CreateKey(e.Admin, "read"), "", nil)
	res, _ = call(rcs, "open_review", map[string]any{"slug": "demo/greet", "version": 2, "title": "x"})
	if !res.IsError || !strings.Contains(dump(res.Content), "forbidden") {
		t.Errorf("a read key's open_review: %s", dump(res))
	}
	live, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/greet", Arguments: map[string]string{"name": "Al"}})
	if err != nil || text(live.Messages[0]) != "Hello Al, you are nobody." {
		t.Fatalf("the live version changed: %v %s", err, dump(live))
	}
}
