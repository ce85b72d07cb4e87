package mcp_test

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/mcp"
)

// bearer adds a token to every request of an MCP client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens an MCP session on e's /mcp with token, speaking
// protocol version ("" for the SDK's newest).
func connect(t testing.TB, e *testenv.Env, token, version string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	cs, err := dial(t, e, token, version, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

func dial(t testing.TB, e *testenv.Env, token, version string, opts *sdk.ClientOptions) (*sdk.ClientSession, error) {
	t.Helper()
	if opts == nil {
		opts = &sdk.ClientOptions{}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts)
	mcp.RegisterSkillMethods(c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:   e.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
		MaxRetries: -1,
	}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// fixture is a project with a text prompt, a chat prompt and a skill,
// all published, and a member who cannot see the project.
type fixture struct {
	e       *testenv.Env
	project string // id
	greet   string // prompt id
	chat    string
	skill   string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return fixtureOn(t, testenv.New(t))
}

func fixtureOn(t testing.TB, e *testenv.Env) *fixture {
	t.Helper()
	f := &fixture{e: e}
	f.project = e.CreateProject(e.Admin, "demo")
	f.greet = f.publishPrompt(t, "greet", map[string]any{"template": "Hello {{name}}, you are {{#role}}a {{.}}{{/role}}{{^role}}nobody{{/role}}."})
	f.chat = f.publishPrompt(t, "support", map[string]any{"messages": []map[string]string{
		{"role": "system", "content": "You help with {{product}}."},
		{"role": "user", "content": "{{question}}"},
		{"role": "assistant", "content": "Let me look."},
	}})
	f.skill = e.CreateSkill(e.Admin, f.project, "pdf-tools")
	e.Must(201, "POST", "/v1/skills/"+f.skill+"/versions", e.Admin, nil)
	for path, content := range map[string]string{"SKILL.md": testenv.SkillManifest("pdf-tools"), "scripts/fill.py": "print(1)\n"} {
		e.Must(200, "POST", "/v1/skills/"+f.skill+"/versions/1/files", e.Admin, map[string]string{"file_path": path, "content": content})
	}
	e.Must(200, "POST", "/v1/skills/"+f.skill+"/versions/1/publish", e.Admin, nil)
	return f
}

// publishPrompt creates prompt slug in the project with content as
// version 1 and publishes it.
func (f *fixture) publishPrompt(t testing.TB, slug string, content map[string]any) string {
	t.Helper()
	id := f.e.CreatePrompt(f.e.Admin, f.project, slug)
	f.e.Must(201, "POST", "/v1/prompts/"+id+"/versions", f.e.Admin, content)
	f.e.Must(200, "POST", "/v1/prompts/"+id+"/versions/1/publish", f.e.Admin, nil)
	return id
}

func rpcCode(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

// versions are the protocol versions the tests speak: the SDK's newest
// (stateless, 2026-07-28) and the newest with an initialize handshake.
var versions = []string{"", "2025-11-25"}

func TestUnauthorized(t *testing.T) {
	e := testenv.New(t)
	for _, tc := range []struct{ name, token string }{
		{"none", ""},
		{"unknown", "sess_0000000000000000000000000000000000000000"},
		{"garbage", "not a token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", e.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 401 || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("status %d, WWW-Authenticate %q; want 401 with a Bearer challenge", res.StatusCode, res.Header.Get("WWW-Authenticate"))
			}
			if _, err := dial(t, e, tc.token, "", nil); err == nil {
				t.Fatal("the SDK client connected without a valid token")
			}
		})
	}
}

func TestPrompts(t *testing.T) {
	f := newFixture(t)
	for _, v := range versions {
		t.Run("v"+v, func(t *testing.T) {
			ctx := context.Background()
			cs := connect(t, f.e, f.e.Admin, v, nil)
			init := cs.InitializeResult()
			if want := cmp.Or(v, "2026-07-28"); init.ProtocolVersion != want {
				t.Fatalf("negotiated %q, want %q", init.ProtocolVersion, want)
			}
			if init.Capabilities.Prompts == nil || !init.Capabilities.Prompts.ListChanged {
				t.Fatalf("prompts capability %+v, want listChanged", init.Capabilities.Prompts)
			}
			if _, ok := init.Capabilities.Extensions[mcp.SkillsExtension]; !ok {
				t.Fatalf("extensions %v lack %s", init.Capabilities.Extensions, mcp.SkillsExtension)
			}

			list, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*sdk.Prompt{}
			for _, p := range list.Prompts {
				got[p.Name] = p
			}
			if len(got) != 2 || got["demo/greet"] == nil || got["demo/support"] == nil {
				t.Fatalf("prompts %v, want demo/greet and demo/support", keys(got))
			}
			args := map[string]bool{}
			for _, a := range got["demo/greet"].Arguments {
				args[a.Name] = a.Required
			}
			if len(args) != 2 || !args["name"] || args["role"] {
				t.Fatalf("demo/greet arguments %v, want name (required) and role", args)
			}

			res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/greet", Arguments: map[string]string{"name": "Ann", "role": `["admin"]`}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Messages) != 1 || res.Messages[0].Role != "user" || text(res.Messages[0]) != "Hello Ann, you are a admin." {
				t.Fatalf("messages %s", dump(res.Messages))
			}

			chat, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/support", Arguments: map[string]string{"product": "quire", "question": "why?"}})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"user:You help with quire.", "user:why?", "assistant:Let me look."}
			if len(chat.Messages) != len(want) {
				t.Fatalf("chat messages %s", dump(chat.Messages))
			}
			for i, m := range chat.Messages {
				if string(m.Role)+":"+text(m) != want[i] {
					t.Fatalf("message %d is %s:%s, want %s", i, m.Role, text(m), want[i])
				}
			}

			_, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/support", Arguments: map[string]string{"product": "quire"}})
			if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "question") {
				t.Fatalf("missing argument: %v (code %d), want -32602 naming question", err, rpcCode(err))
			}
		})
	}
}

// TestPromptSelectors reads a version by @N and by #label, and refuses
// what no name selects.
func TestPromptSelectors(t *testing.T) {
	f := newFixture(t)
	e := f.e
	e.Must(201, "POST", "/v1/prompts/"+f.greet+"/versions", e.Admin, map[string]any{"template": "Hi {{name}} (v2)"})
	e.Must(200, "POST", "/v1/prompts/"+f.greet+"/versions/2/publish", e.Admin, nil)
	e.Must(200, "PUT", "/v1/prompts/"+f.greet+"/labels/staging", e.Admin, map[string]any{"version": 1})
	cs := connect(t, e, e.Admin, "", nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name, want string
		code       int64
		msg        string
	}{
		{name: "demo/greet", want: "Hi Ann (v2)"},
		{name: "demo/greet@2", want: "Hi Ann (v2)"},
		{name: "demo/greet@1", want: "Hello Ann, you are nobody."},
		{name: "demo/greet@3", code: jsonrpc.CodeInvalidParams, msg: "not found"},
		{name: "demo/greet@0", code: jsonrpc.CodeInvalidParams, msg: "positive integer"},
		{name: "demo/greet#staging", want: "Hello Ann, you are nobody."},
		{name: "demo/greet#production", code: jsonrpc.CodeInvalidParams, msg: `no label "production"`},
		{name: "demo/greet#", code: jsonrpc.CodeInvalidParams, msg: "label"},
		{name: "greet", code: jsonrpc.CodeInvalidParams, msg: "project/slug"},
		{name: "demo/nope", code: jsonrpc.CodeInvalidParams, msg: "not found"},
		{name: "other/greet", code: jsonrpc.CodeInvalidParams, msg: "not found"},
	} {
		res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: tc.name, Arguments: map[string]string{"name": "Ann"}})
		switch {
		case tc.code != 0:
			if rpcCode(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s: %v (code %d), want %d mentioning %q", tc.name, err, rpcCode(err), tc.code, tc.msg)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case text(res.Messages[0]) != tc.want:
			t.Errorf("%s: %q, want %q", tc.name, text(res.Messages[0]), tc.want)
		}
	}
}

// TestAccess: a member sees only the projects they belong to; a key
// limited to another project sees none of this one.
func TestAccess(t *testing.T) {
	f := newFixture(t)
	e := f.e
	_, outsider := e.CreateUser("outsider@example.com")
	cs := connect(t, e, outsider, "", nil)
	ctx := context.Background()
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Prompts) != 0 {
		t.Fatalf("an outsider lists %s", dump(list.Prompts))
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/greet", Arguments: map[string]string{"name": "x"}}); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Fatalf("outsider get: %v, want not found (-32602)", err)
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 0 {
		t.Fatalf("outsider resources %v, %v", res, err)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "skill://demo/pdf-tools/SKILL.md"}); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Fatalf("outsider read: %v, want not found (-32602)", err)
	}
	skills, err := sdk.CallCustomMethod[*mcp.ListSkillsParams, *mcp.ListSkillsResult](ctx, cs, "skills/list", &mcp.ListSkillsParams{})
	if err != nil || len(skills.Skills) != 0 {
		t.Fatalf("outsider skills %v, %v", skills, err)
	}

	other := e.CreateProject(e.Admin, "other")
	key := e.CreateKey(e.Admin, "read", other)
	kcs := connect(t, e, key, "", nil)
	if list, err := kcs.ListPrompts(ctx, nil); err != nil || len(list.Prompts) != 0 {
		t.Fatalf("a key limited to another project lists %v, %v", list, err)
	}
}

func TestSkillsAndResources(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cs := connect(t, f.e, f.e.Admin, "2025-11-25", nil)
	list, err := sdk.CallCustomMethod[*mcp.ListSkillsParams, *mcp.ListSkillsResult](ctx, cs, "skills/list", &mcp.ListSkillsParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Skills) != 1 || list.Skills[0].URI != "skill://demo/pdf-tools/SKILL.md" || list.Skills[0].Frontmatter["name"] != "pdf-tools" ||
		list.ResultType != "complete" || list.CacheScope != "private" {
		t.Fatalf("skills/list %s", dump(list))
	}
	// The entry is exactly the extension's shape: uri, frontmatter, resources.
	var raw struct {
		Skills []map[string]json.RawMessage `json:"skills"`
	}
	if err := json.Unmarshal([]byte(dump(list)), &raw); err != nil || len(raw.Skills[0]) != 3 {
		t.Fatalf("skills/list entry keys: %v %s", err, dump(list))
	}
	files := map[string]mcp.SkillResource{}
	for _, r := range list.Skills[0].Resources {
		files[r.URI] = r
	}
	md := files["skill://demo/pdf-tools/SKILL.md"]
	// sha256 of the manifest, as any client computes it.
	if want := sha256hex(testenv.SkillManifest("pdf-tools")); md.Digest != want || md.Size != int64(len(testenv.SkillManifest("pdf-tools"))) {
		t.Fatalf("SKILL.md entry %+v, want digest %s", md, want)
	}
	got, err := sdk.CallCustomMethod[*mcp.GetSkillParams, *mcp.GetSkillResult](ctx, cs, "skills/get", &mcp.GetSkillParams{URI: "skill://demo/pdf-tools/SKILL.md"})
	if err != nil || got.Skill.URI != "skill://demo/pdf-tools/SKILL.md" || len(got.Skill.Resources) != 2 || got.ResultType != "complete" {
		t.Fatalf("skills/get: %v %s", err, dump(got))
	}
	for _, uri := range []string{"skill://demo/nope/SKILL.md", "skill://demo/pdf-tools", "skill://demo/pdf-tools/scripts/fill.py", "https://demo/pdf-tools/SKILL.md", "skill://other/pdf-tools/SKILL.md"} {
		if _, err := sdk.CallCustomMethod[*mcp.GetSkillParams, *mcp.GetSkillResult](ctx, cs, "skills/get", &mcp.GetSkillParams{URI: uri}); rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Fatalf("skills/get %s: %v, want -32602", uri, err)
		}
	}
	if ext := cs.InitializeResult().Capabilities.Extensions[mcp.SkillsExtension]; dump(ext) != `{"directoryRead":true}` {
		t.Fatalf("the skills extension is declared as %s", dump(ext))
	}
	dir := func(uri, cursor string) (*mcp.ReadDirectoryResult, error) {
		return sdk.CallCustomMethod[*mcp.ReadDirectoryParams, *mcp.ReadDirectoryResult](ctx, cs, "resources/directory/read", &mcp.ReadDirectoryParams{URI: uri, Cursor: cursor})
	}
	root, err := dir("skill://demo/pdf-tools", "")
	if err != nil || len(root.Resources) != 2 || root.ResultType != "complete" {
		t.Fatalf("directory read of the root: %v %s", err, dump(root))
	}
	if md, sub := root.Resources[0], root.Resources[1]; md.URI != "skill://demo/pdf-tools/SKILL.md" || md.Name != "pdf-tools" ||
		md.Description != "A skill for tests." || md.MIMEType != "text/markdown" || md.Size != int64(len(testenv.SkillManifest("pdf-tools"))) ||
		sub.URI != "skill://demo/pdf-tools/scripts" || sub.Name != "scripts" || sub.MIMEType != "inode/directory" {
		t.Fatalf("directory read of the root: %s", dump(root))
	}
	scripts, err := dir("skill://demo/pdf-tools/scripts", "")
	if err != nil || len(scripts.Resources) != 1 || scripts.Resources[0].Name != "fill.py" || scripts.Resources[0].MIMEType != "text/x-python" || scripts.NextCursor != "" {
		t.Fatalf("directory read of scripts: %v %s", err, dump(scripts))
	}
	for _, tc := range []struct{ uri, cursor string }{
		{"skill://demo/pdf-tools/SKILL.md", ""}, {"skill://demo/pdf-tools/nope", ""}, {"skill://demo/nope", ""},
		{"skill://demo/pdf-tools", "x"}, {"skill://demo/pdf-tools", "9"}, {"", ""},
	} {
		if _, err := dir(tc.uri, tc.cursor); rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Fatalf("directory read %q cursor %q: %v, want -32602", tc.uri, tc.cursor, err)
		}
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "skill://demo/pdf-tools"}); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Fatalf("resources/read of a directory: %v, want -32602", err)
	}

	read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "skill://demo/pdf-tools/scripts/fill.py"})
	if err != nil {
		t.Fatal(err)
	}
	if c := read.Contents[0]; c.Text != "print(1)\n" || c.MIMEType != "text/x-python" {
		t.Fatalf("read %+v", c)
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 2 || res.CacheScope != "private" {
		t.Fatalf("resources %v %s", err, dump(res))
	}
	tpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tpl.ResourceTemplates) != 1 {
		t.Fatalf("templates %v %s", err, dump(tpl))
	}
}

func TestTools(t *testing.T) {
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
	_, found := call(cs, "search_prompts", map[string]any{"query": "GREET"})
	if ps, _ := found["prompts"].([]any); len(ps) != 1 || ps[0].(map[string]any)["name"] != "demo/greet" {
		t.Fatalf("search_prompts: %v", found)
	}
	_, r := call(cs, "render_prompt", map[string]any{"slug": "demo/greet", "variables": map[string]any{"name": "Bo", "role": []string{"dev"}}})
	if r["text"] != "Hello Bo, you are a dev." {
		t.Fatalf("render_prompt: %v", r)
	}
	res, _ := call(cs, "render_prompt", map[string]any{"slug": "demo/greet", "variables": map[string]any{}})
	if !res.IsError || !strings.Contains(dump(res.Content), "name") {
		t.Fatalf("render_prompt without name: %s", dump(res))
	}
	_, sk := call(cs, "get_skill", map[string]any{"slug": "demo/pdf-tools"})
	if !strings.Contains(fmt.Sprint(sk["skill_md"]), "name: pdf-tools") || len(sk["files"].([]any)) != 2 {
		t.Fatalf("get_skill: %v", sk)
	}
	_, d := call(cs, "open_draft", map[string]any{"slug": "demo/pdf-tools"})
	if d["version"] != 2.0 || d["state"] != "draft" {
		t.Fatalf("open_draft: %v", d)
	}
	_, u := call(cs, "upsert_file", map[string]any{"slug": "demo/pdf-tools", "version": 2, "file_path": "notes.md", "content": "proposed\n"})
	if u["file_path"] != "notes.md" {
		t.Fatalf("upsert_file: %v", u)
	}
	// The change is a draft for review: the live version is still 1.
	live := e.Must(200, "GET", "/v1/skills/"+f.skill+"/versions/2/files/notes.md", e.Admin, nil)
	if string(live.Body) != "proposed\n" {
		t.Fatalf("draft file %q", live.Body)
	}

	key := e.CreateKey(e.Admin, "read")
	rcs := connect(t, e, key, "", nil)
	tools, err := rcs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "open_draft" || tl.Name == "upsert_file" {
			t.Fatalf("a read key is offered %s", tl.Name)
		}
	}
	res, _ = call(rcs, "open_draft", map[string]any{"slug": "demo/pdf-tools"})
	if !res.IsError || !strings.Contains(dump(res.Content), "forbidden") {
		t.Fatalf("a read key opened a draft: %s", dump(res))
	}
}

// TestListChanged: a publish reaches an open session as
// notifications/prompts/list_changed, but only a session whose
// credential can read the project published in; a draft edit, which
// changes nothing a listing shows, reaches no one.
func TestListChanged(t *testing.T) {
	for _, v := range versions {
		t.Run("v"+v, func(t *testing.T) {
			f := newFixture(t)
			e := f.e
			ctx := context.Background()
			other := e.CreateProject(e.Admin, "other")
			// watch opens a session that counts its list_changed
			// notifications, and lists the prompts once, as a host does.
			type watcher struct {
				cs      *sdk.ClientSession
				n       atomic.Int32
				seen    chan struct{}
				updated chan string
			}
			watch := func(token string) *watcher {
				w := &watcher{seen: make(chan struct{}, 16), updated: make(chan string, 16)}
				w.cs = connect(t, e, token, v, &sdk.ClientOptions{
					PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) {
						w.n.Add(1)
						w.seen <- struct{}{}
					},
					ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
						w.updated <- r.Params.URI
					},
				})
				if _, err := w.cs.ListPrompts(ctx, nil); err != nil {
					t.Fatal(err)
				}
				return w
			}
			wait := func(ch <-chan struct{}, what string) {
				t.Helper()
				select {
				case <-ch:
				case <-time.After(20 * time.Second):
					t.Fatalf("no notification within 20s of %s", what)
				}
			}
			publishIn := func(project, slug string) {
				id := e.CreatePrompt(e.Admin, project, slug)
				e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, map[string]any{"template": "new"})
				e.Must(200, "POST", "/v1/prompts/"+id+"/versions/1/publish", e.Admin, nil)
			}
			demo := watch(e.CreateKey(e.Admin, "read", f.project))
			elsewhere := watch(e.CreateKey(e.Admin, "read", other))
			const skillMD = "skill://demo/pdf-tools/SKILL.md"
			if err := demo.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: skillMD}); err != nil {
				t.Fatal(err)
			}

			// A draft of a listed prompt, edited: nothing listed changes.
			e.Must(201, "POST", "/v1/prompts/"+f.greet+"/versions", e.Admin, map[string]any{"template": "draft {{name}}"})
			e.Must(200, "PATCH", "/v1/prompts/"+f.greet+"/versions/2", e.Admin, map[string]any{"template": "draft 2 {{name}}"})
			// A publish in the other project reaches its reader only.
			publishIn(other, "theirs")
			wait(elsewhere.seen, "a publish in its project")
			// A change to the skill demo's session subscribed to: the
			// change feed tells changes in order, and a session's
			// notifications arrive in order, so once its
			// resources/updated is in, any list_changed the draft edit
			// or the other project's publish sent it is in too.
			e.Must(201, "POST", "/v1/skills/"+f.skill+"/versions", e.Admin, nil)
			e.Must(200, "POST", "/v1/skills/"+f.skill+"/versions/2/publish", e.Admin, nil)
			select {
			case <-demo.updated:
			case <-time.After(20 * time.Second):
				t.Fatal("no resources/updated within 20s of a skill's publish")
			}
			if n := demo.n.Load(); n != 0 {
				t.Fatalf("demo's session heard %d list_changed from a draft edit and another project's publish, want none", n)
			}
			// A publish in demo reaches it.
			f.publishPrompt(t, "fresh", map[string]any{"template": "new"})
			wait(demo.seen, "a publish in its project")
			list, err := demo.cs.ListPrompts(ctx, nil)
			if err != nil || len(list.Prompts) != 3 {
				t.Fatalf("after the publish: %v %s", err, dump(list))
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func text(m *sdk.PromptMessage) string {
	if tc, ok := m.Content.(*sdk.TextContent); ok {
		return tc.Text
	}
	return fmt.Sprintf("(%T)", m.Content)
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestBadInput sends /mcp what no client should: never a 5xx, never a
// session for a request that is not an initialize.
func TestBadInput(t *testing.T) {
	e := testenv.New(t)
	const accept = "Accept: application/json, text/event-stream"
	for _, tc := range []struct {
		name, method, body string
		headers            []string
		want               int
		says               string // in the body, when set
	}{
		{"empty", "POST", "", []string{accept}, 400, ""},
		{"not json", "POST", "{", []string{accept}, 400, ""},
		{"array of nothing", "POST", "[]", []string{accept}, 400, ""},
		{"no accept", "POST", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil, 400, ""},
		// The SDK answers these in JSON-RPC, as the transport spec has it.
		{"call before initialize", "POST", `{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`, []string{accept}, 200, "invalid during session initialization"},
		{"unknown session", "POST", `{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`, []string{accept, "Mcp-Session-Id: nope"}, 404, ""},
		{"unknown method", "POST", `{"jsonrpc":"2.0","id":1,"method":"nope/nope"}`, []string{accept, "MCP-Protocol-Version: 2026-07-28"}, 404, "-32601"},
		{"get without session", "GET", "", []string{"Accept: text/event-stream"}, 400, ""},
		{"delete without session", "DELETE", "", nil, 400, ""},
		{"too large", "POST", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", 9<<20) + `"}}`, []string{accept}, 413, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do(tc.method, "/mcp", e.Admin, tc.body, tc.headers...)
			if r.Status != tc.want {
				t.Fatalf("status %d, want %d: %.300s", r.Status, tc.want, r.Body)
			}
			if !strings.Contains(string(r.Body), tc.says) {
				t.Fatalf("body %.300s does not say %q", r.Body, tc.says)
			}
			if r.Header.Get("Mcp-Session-Id") != "" {
				t.Fatalf("a bad request opened session %s", r.Header.Get("Mcp-Session-Id"))
			}
		})
	}
}

// TestPromptPages lists more live prompts than a page holds, across
// projects: every prompt once, pages of at most 500, the cursor carrying
// the listing from one project to the next.
func TestPromptPages(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 1,030 prompts through git (a minute on a busy machine): run without -short")
	}
	e := testenv.New(t)
	ctx := context.Background()
	by := quire.Actor{Name: "seed", Email: "seed@example.com"}
	want := map[string]bool{}
	for i, n := range []int{480, 40, 510} {
		pid := e.CreateProject(e.Admin, fmt.Sprintf("pages-%d", i))
		for j := range n {
			as := &quire.Asset{ProjectID: pid, Kind: quire.KindPrompt, Name: fmt.Sprintf("P %d", j), Slug: fmt.Sprintf("p-%d", j)}
			if err := e.Store.CreateAsset(ctx, by, as); err != nil {
				t.Fatal(err)
			}
			if j%7 == 3 {
				continue // no live version: not listed
			}
			if _, err := e.Store.CreateVersion(ctx, by, as, quire.Base{Empty: true}, []quire.FileContent{{Path: quire.PromptTemplateFile, Content: []byte("Hi {{name}}")}}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Store.PublishVersion(ctx, by, as, 1, nil); err != nil {
				t.Fatal(err)
			}
			want[fmt.Sprintf("pages-%d/p-%d", i, j)] = true
		}
	}
	cs := connect(t, e, e.Admin, "", nil)
	seen := map[string]bool{}
	cursor, pages := "", 0
	for {
		res, err := cs.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(res.Prompts) > 500 {
			t.Fatalf("page %d holds %d prompts", pages, len(res.Prompts))
		}
		for _, p := range res.Prompts {
			if seen[p.Name] || !want[p.Name] {
				t.Fatalf("page %d: %s listed twice or not live", pages, p.Name)
			}
			seen[p.Name] = true
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	if len(seen) != len(want) || pages < 2 {
		t.Fatalf("listed %d of %d live prompts in %d pages", len(seen), len(want), pages)
	}
	if _, err := cs.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: "garbage"}); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Fatalf("a bad cursor: %v, want -32602", err)
	}
}
