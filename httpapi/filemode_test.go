package httpapi_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// TestFileModes: a script written through the API can be made
// executable and stays so across edits that do not say otherwise; a
// whole-tree replace takes the modes its zip records; the listing,
// the archives and the repository itself (git ls-tree, fsck) agree.
func TestFileModes(t *testing.T) {
	f := newGitFixture(t)
	e := f.e
	up := func(path, content, mode string) map[string]any {
		t.Helper()
		body := map[string]string{"file_path": path, "content": content}
		if mode != "" {
			body["mode"] = mode
		}
		return e.Must(200, "POST", "/v1/skills/pdf/versions/2/files", e.Admin, body).JSON(t)
	}
	lsTree := func(path string) string {
		t.Helper()
		c := f.version(2)["commit"].(string)
		out := testenv.Git(t, f.repo(), "ls-tree", c, "--", path)
		mode, _, _ := strings.Cut(out, " ")
		return mode
	}
	if r := up("scripts/run.sh", "#!/bin/sh\necho 1\n", "100755"); get(t, r, "file", "mode") != "100755" {
		t.Errorf("upsert answer %v", r["file"])
	}
	if m := lsTree("scripts/run.sh"); m != "100755" {
		t.Fatalf("mode in git %s, want 100755", m)
	}
	// An edit that names no mode keeps it (it used to reset it to 100644).
	up("scripts/run.sh", "#!/bin/sh\necho 2\n", "")
	if m := lsTree("scripts/run.sh"); m != "100755" {
		t.Errorf("mode after an edit without one: %s", m)
	}
	// A file pushed as executable keeps its mode through an API edit too.
	up("scripts/run.py", "print(2)\n", "")
	if m := lsTree("scripts/run.py"); m != "100644" {
		t.Errorf("run.py: %s", m)
	}
	// A mode change alone is a commit.
	before := f.version(2)["commit"]
	up("scripts/run.sh", "#!/bin/sh\necho 2\n", "100644")
	if m := lsTree("scripts/run.sh"); m != "100644" || f.version(2)["commit"] == before {
		t.Errorf("mode change alone: %s (commit moved: %v)", m, f.version(2)["commit"] != before)
	}
	up("scripts/run.sh", "#!/bin/sh\necho 2\n", "100755")
	for _, bad := range []any{"755", "0755", "100775", "120000", "160000", 755} {
		r := e.Do("POST", "/v1/skills/pdf/versions/2/files", e.Admin, map[string]any{"file_path": "x.sh", "content": "x", "mode": bad})
		wantError(t, r, 400)
	}
	files := e.Must(200, "GET", "/v1/skills/pdf/versions/2/files", e.Admin, nil).JSON(t)
	modes := map[string]any{}
	for _, fl := range arr(t, files, "files") {
		modes[get(t, fl, "file_path").(string)] = get(t, fl, "mode")
	}
	if modes["scripts/run.sh"] != "100755" || modes["SKILL.md"] != "100644" {
		t.Errorf("listing modes %v", modes)
	}
	e.Must(200, "POST", "/v1/skills/pdf/versions/2/publish", e.Admin, nil)
	for _, en := range tarEntries(t, e.Must(200, "GET", "/v1/skills/pdf/versions/2/archive.tar.gz", e.Admin, nil).Body) {
		if want := map[bool]int64{true: 0o755, false: 0o644}[en.name == "scripts/run.sh"]; en.mode != want {
			t.Errorf("archive %s mode %o, want %o", en.name, en.mode, want)
		}
	}

	// PUT files (a zip, as quire push sends): the modes it records.
	e.Must(201, "POST", "/v1/skills/pdf/versions", e.Admin, map[string]any{"from": 2})
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, zf := range []struct {
		name string
		mode uint32
	}{{"SKILL.md", 0o644}, {"scripts/run.sh", 0o644}, {"scripts/new.sh", 0o755}} {
		h := &zip.FileHeader{Name: zf.name, Method: zip.Deflate}
		h.SetMode(0o644)
		if zf.mode == 0o755 {
			h.SetMode(0o755)
		}
		w, _ := zw.CreateHeader(h)
		content := "#!/bin/sh\n"
		if zf.name == "SKILL.md" {
			content = testenv.SkillManifest("pdf")
		}
		w.Write([]byte(content))
	}
	zw.Close()
	e.Must(200, "PUT", "/v1/skills/pdf/versions/3/files", e.Admin, buf.Bytes(), "Content-Type: application/zip")
	c := e.Must(200, "GET", "/v1/skills/pdf/versions/3", e.Admin, nil).JSON(t)["version"].(map[string]any)["commit"].(string)
	tree := testenv.Git(t, f.repo(), "ls-tree", "-r", c)
	for path, mode := range map[string]string{"scripts/run.sh": "100644", "scripts/new.sh": "100755", "SKILL.md": "100644"} {
		if !strings.Contains(tree, fmt.Sprintf("%s blob", mode)) || !strings.Contains(tree, path) {
			t.Errorf("tree after PUT lacks %s %s:\n%s", mode, path, tree)
		}
		for _, line := range strings.Split(tree, "\n") {
			if strings.HasSuffix(line, "\t"+path) && !strings.HasPrefix(line, mode+" ") {
				t.Errorf("%s: %s, want %s", path, line, mode)
			}
		}
	}
	f.fsck()
}
