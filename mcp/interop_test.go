package mcp_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire/quire/mcp"
)

// TestTypeScriptClient runs the official TypeScript SDK's client
// (@modelcontextprotocol/sdk, pinned in testdata/interop/package.json)
// against /mcp: an independent implementation must agree on the wire.
// It needs node and `npm ci` in testdata/interop (.ci/run does both).
func TestTypeScriptClient(t *testing.T) {
	driverHeavy(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the TypeScript SDK interop test is skipped")
	}
	dir, _ := filepath.Abs("testdata/interop")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("the TypeScript SDK is not installed: run `npm ci` in mcp/testdata/interop")
	}
	f := newFixture(t)
	cmd := exec.Command(node, "interop.mjs", f.e.URL+"/mcp", f.e.Admin)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node interop.mjs: %v\n%s", err, out)
	}
	var got struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Prompts    struct{ ListChanged bool } `json:"prompts"`
			Extensions map[string]any             `json:"extensions"`
		} `json:"capabilities"`
		Prompts []struct {
			Name      string `json:"name"`
			Arguments []struct {
				Name     string `json:"name"`
				Required bool   `json:"required"`
			} `json:"arguments"`
		} `json:"prompts"`
		Get struct {
			Messages []struct {
				Role    string                `json:"role"`
				Content struct{ Text string } `json:"content"`
			} `json:"messages"`
		} `json:"get"`
		Missing *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"missing"`
		Read struct {
			Contents []struct {
				URI, MimeType, Text string
			} `json:"contents"`
		} `json:"read"`
		Skills struct {
			Skills []struct {
				URI         string         `json:"uri"`
				Frontmatter map[string]any `json:"frontmatter"`
				Resources   []struct {
					URI, Digest string
					Size        int
				} `json:"resources"`
			} `json:"skills"`
		} `json:"skills"`
		Dir struct {
			Resources []struct{ URI, MimeType string } `json:"resources"`
		} `json:"dir"`
		Tool struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"tool"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("interop output: %v\n%s", err, out)
	}
	if got.ProtocolVersion != "2025-11-25" || !got.Capabilities.Prompts.ListChanged {
		t.Errorf("negotiated %q with prompts %+v", got.ProtocolVersion, got.Capabilities.Prompts)
	}
	if len(got.Prompts) != 2 || len(got.Get.Messages) != 3 || got.Get.Messages[0].Role != "user" || got.Get.Messages[0].Content.Text != "You help with quire." {
		t.Errorf("prompts %+v, get %+v", got.Prompts, got.Get)
	}
	if got.Missing == nil || got.Missing.Code != -32602 || !strings.Contains(got.Missing.Message, "question") {
		t.Errorf("missing argument: %+v", got.Missing)
	}
	if len(got.Read.Contents) != 1 || got.Read.Contents[0].MimeType != "text/markdown" || !strings.Contains(got.Read.Contents[0].Text, "name: pdf-tools") {
		t.Errorf("read %+v", got.Read)
	}
	if ext, ok := got.Capabilities.Extensions[mcp.SkillsExtension].(map[string]any); !ok || ext["directoryRead"] != true {
		t.Errorf("extensions %+v", got.Capabilities.Extensions)
	}
	if s := got.Skills.Skills; len(s) != 1 || s[0].URI != "skill://demo/pdf-tools/SKILL.md" || s[0].Frontmatter["name"] != "pdf-tools" ||
		len(s[0].Resources) != 2 || !strings.HasPrefix(s[0].Resources[0].Digest, "sha256:") {
		t.Errorf("skills/list %+v", got.Skills)
	}
	if d := got.Dir.Resources; len(d) != 2 || d[1].URI != "skill://demo/pdf-tools/scripts" || d[1].MimeType != "inode/directory" {
		t.Errorf("resources/directory/read %+v", got.Dir)
	}
	if got.Tool.IsError || got.Tool.StructuredContent["text"] != "Hello Ts, you are nobody." {
		t.Errorf("tool %+v", got.Tool)
	}
}
