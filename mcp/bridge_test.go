package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/mcp"
)

var (
	buildOnce sync.Once
	quireBin  string
	buildErr  error
)

// binary builds cmd/quire once for the package's tests.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "quire-mcp-")
		if err != nil {
			buildErr = err
			return
		}
		quireBin = filepath.Join(dir, "quire")
		out, err := exec.Command("go", "build", "-o", quireBin, "github.com/quire/quire/cmd/quire").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build quire: %v", buildErr)
	}
	return quireBin
}

// runQuire runs the binary with env added and returns its combined output.
func runQuire(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// bridge starts `quire mcp` with env and connects the SDK's client to it.
func bridge(t *testing.T, env []string, opts *sdk.ClientOptions, args ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"mcp"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	c := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, opts)
	mcp.RegisterSkillMethods(c)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to quire mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestBridge(t *testing.T) {
	driverHeavy(t)
	f := newFixture(t)
	e := f.e
	config := "QUIRE_CONFIG_DIR=" + t.TempDir()
	env := []string{config, "QUIRE_TOKEN=", "QUIRE_SERVER="}

	// quire login: email and password, the token kept in the config dir.
	out, err := runQuire(t, append(env, "QUIRE_PASSWORD="+testenv.AdminPassword), "login", "--server", e.URL, "--email", testenv.AdminEmail)
	if err != nil || !strings.Contains(out, "saved in") {
		t.Fatalf("quire login: %v\n%s", err, out)
	}
	if out, err := runQuire(t, append(env, "QUIRE_PASSWORD=wrong"), "login", "--server", e.URL, "--email", testenv.AdminEmail); err == nil || !strings.Contains(out, "password") {
		t.Fatalf("login with a wrong password: %v\n%s", err, out)
	}

	changed := make(chan struct{}, 16)
	cs := bridge(t, env, &sdk.ClientOptions{
		PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) { changed <- struct{}{} },
	})
	ctx := context.Background()
	if _, ok := cs.InitializeResult().Capabilities.Extensions[mcp.SkillsExtension]; !ok {
		t.Fatalf("the bridge does not declare %s", mcp.SkillsExtension)
	}
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(list.Prompts) != 2 {
		t.Fatalf("prompts through the bridge: %v %s", err, dump(list))
	}
	res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/greet", Arguments: map[string]string{"name": "Cy"}})
	if err != nil || text(res.Messages[0]) != "Hello Cy, you are nobody." {
		t.Fatalf("get through the bridge: %v %s", err, dump(res))
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/greet"}); rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "name") {
		t.Fatalf("missing argument through the bridge: %v (code %d)", err, rpcCode(err))
	}
	read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "skill://demo/pdf-tools/scripts/fill.py"})
	if err != nil || read.Contents[0].Text != "print(1)\n" {
		t.Fatalf("read through the bridge: %v %s", err, dump(read))
	}
	skills, err := sdk.CallCustomMethod[*mcp.ListSkillsParams, *mcp.ListSkillsResult](ctx, cs, "skills/list", &mcp.ListSkillsParams{})
	if err != nil || len(skills.Skills) != 1 {
		t.Fatalf("skills/list through the bridge: %v %s", err, dump(skills))
	}
	if ext := cs.InitializeResult().Capabilities.Extensions[mcp.SkillsExtension]; dump(ext) != `{"directoryRead":true}` {
		t.Fatalf("the bridge declares the skills extension as %s", dump(ext))
	}
	dir, err := sdk.CallCustomMethod[*mcp.ReadDirectoryParams, *mcp.ReadDirectoryResult](ctx, cs, "resources/directory/read", &mcp.ReadDirectoryParams{URI: "skill://demo/pdf-tools/scripts"})
	if err != nil || len(dir.Resources) != 1 || dir.Resources[0].URI != "skill://demo/pdf-tools/scripts/fill.py" {
		t.Fatalf("resources/directory/read through the bridge: %v %s", err, dump(dir))
	}
	tool, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "render_prompt", Arguments: map[string]any{"slug": "demo/greet", "variables": map[string]any{"name": "Di"}}})
	if err != nil || tool.IsError || !strings.Contains(dump(tool.StructuredContent), "Hello Di") {
		t.Fatalf("tool through the bridge: %v %s", err, dump(tool))
	}

	f.publishPrompt(t, "later", map[string]any{"template": "later"})
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no prompts/list_changed through the bridge within 30s of a publish")
	}

	// QUIRE_TOKEN wins over the saved token: a read key's write tool is
	// refused.
	key := e.CreateKey(e.Admin, "read")
	rcs := bridge(t, []string{config, "QUIRE_TOKEN=" + key}, nil, "--server", e.URL)
	refused, err := rcs.CallTool(ctx, &sdk.CallToolParams{Name: "open_draft", Arguments: map[string]any{"slug": "demo/pdf-tools"}})
	if err != nil || !refused.IsError || !strings.Contains(dump(refused.Content), "forbidden") {
		t.Fatalf("a read key's open_draft through the bridge: %v %s", err, dump(refused))
	}

	// No token at all: quire mcp says how to get one.
	if out, err := runQuire(t, []string{"QUIRE_CONFIG_DIR=" + t.TempDir(), "QUIRE_TOKEN="}, "mcp", "--server", e.URL); err == nil || !strings.Contains(out, "quire login") {
		t.Fatalf("quire mcp without a token: %v\n%s", err, out)
	}
}
