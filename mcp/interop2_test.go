package mcp_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTypeScriptClientV2 runs the official TypeScript SDK v2 client
// (@modelcontextprotocol/client, pinned in testdata/interop2), which
// negotiates protocol 2026-07-28 and checks what that revision requires
// (resultType, cache hints, the skills extension's digests), against
// /mcp: prompts, every skill file and directory, a tool, and a publish
// seen on subscriptions/listen. It needs node and `npm ci` in
// testdata/interop2 (.ci/run does both).
func TestTypeScriptClientV2(t *testing.T) {
	driverHeavy(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the TypeScript SDK v2 interop test is skipped")
	}
	dir, _ := filepath.Abs("testdata/interop2")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "client")); err != nil {
		t.Skip("the TypeScript SDK v2 is not installed: run `npm ci` in mcp/testdata/interop2")
	}
	for _, bridged := range []bool{false, true} {
		name := "http"
		if bridged {
			name = "stdio"
		}
		t.Run(name, func(t *testing.T) { typeScriptV2(t, node, dir, bridged) })
	}
}

// typeScriptV2 runs interop2.mjs against /mcp, or against `quire mcp`
// when bridged, and checks what it saw.
func typeScriptV2(t *testing.T, node, dir string, bridged bool) {
	f := newFixture(t)
	args := []string{"interop2.mjs", f.e.URL + "/mcp", f.e.Admin}
	if bridged {
		args = append(args, binary(t))
	}
	cmd := exec.Command(node, args...)
	cmd.Env = append(os.Environ(), "QUIRE_CONFIG_DIR="+t.TempDir())
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	time.AfterFunc(60*time.Second, func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
		}
	})
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	var last string
	for sc.Scan() {
		line := sc.Text()
		if line == "listening" {
			f.publishPrompt(t, "fresh", map[string]any{"template": "new"})
			f.e.Must(201, "POST", "/v1/skills/"+f.skill+"/versions", f.e.Admin, nil)
			f.e.Must(200, "POST", "/v1/skills/"+f.skill+"/versions/2/publish", f.e.Admin, nil)
			continue
		}
		last = line
	}
	err = cmd.Wait()
	close(done)
	if err != nil {
		t.Fatalf("node interop2.mjs: %v\n%s", err, last)
	}
	var got struct {
		ProtocolVersion string         `json:"protocolVersion"`
		Era             string         `json:"era"`
		Capabilities    map[string]any `json:"capabilities"`
		Prompts         []string       `json:"prompts"`
		Get             struct {
			ResultType string `json:"resultType"`
			Messages   []struct {
				Role    string                `json:"role"`
				Content struct{ Text string } `json:"content"`
			} `json:"messages"`
		} `json:"get"`
		Missing *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"missing"`
		Resources []string `json:"resources"`
		Read      struct {
			Contents []struct{ URI, MimeType, Text string } `json:"contents"`
		} `json:"read"`
		SkillsSupported bool `json:"skillsSupported"`
		Skills          []struct {
			URI, Got string
			Files    []struct {
				URI      string `json:"uri"`
				Verified bool   `json:"verified"`
			} `json:"files"`
			Dir    []string `json:"dir"`
			DirTTL *int     `json:"dirTtl"`
		} `json:"skills"`
		Tools []string `json:"tools"`
		Tool  struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"tool"`
		Honored         map[string]any `json:"honored"`
		ListChanged     bool           `json:"listChanged"`
		ResourceUpdated any            `json:"resourceUpdated"`
	}
	if err := json.Unmarshal([]byte(last), &got); err != nil {
		t.Fatalf("interop2 output: %v\n%s", err, last)
	}
	if got.ProtocolVersion != "2026-07-28" || got.Era != "modern" {
		t.Errorf("negotiated %q (%s)", got.ProtocolVersion, got.Era)
	}
	if ext, _ := got.Capabilities["extensions"].(map[string]any); ext["io.modelcontextprotocol/skills"] == nil {
		t.Errorf("capabilities %v", got.Capabilities)
	}
	if strings.Join(got.Prompts, ",") != "demo/greet,demo/support" {
		t.Errorf("prompts %v", got.Prompts)
	}
	if len(got.Get.Messages) != 3 || got.Get.Messages[0].Content.Text != "You help with quire." {
		t.Errorf("get %+v", got.Get)
	}
	if got.Missing == nil || got.Missing.Code != -32602 || !strings.Contains(got.Missing.Message, "question") {
		t.Errorf("missing argument: %+v", got.Missing)
	}
	if len(got.Read.Contents) != 1 || !strings.Contains(got.Read.Contents[0].Text, "name: pdf-tools") {
		t.Errorf("read %+v", got.Read)
	}
	if !got.SkillsSupported || len(got.Skills) != 1 {
		t.Fatalf("skills %+v", got.Skills)
	}
	s := got.Skills[0]
	if s.Got != "skill://demo/pdf-tools/SKILL.md" || len(s.Files) != 2 || s.DirTTL == nil || len(s.Dir) != 2 {
		t.Errorf("skill %+v", s)
	}
	for _, f := range s.Files {
		if !f.Verified {
			t.Errorf("file %s not verified", f.URI)
		}
	}
	if len(got.Tools) == 0 || got.Tool.IsError || got.Tool.StructuredContent["text"] != "Hello Ts, you are nobody." {
		t.Errorf("tools %v, call %+v", got.Tools, got.Tool)
	}
	if got.Honored["promptsListChanged"] != true || !got.ListChanged {
		t.Errorf("subscriptions/listen: honored %v, list_changed seen %v", got.Honored, got.ListChanged)
	}
	if got.ResourceUpdated != "skill://demo/pdf-tools/SKILL.md" {
		t.Errorf("subscriptions/listen: resources/updated %v after the skill's publish (honored %v)", got.ResourceUpdated, got.Honored)
	}
}
