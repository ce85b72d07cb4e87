package httpapi_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPushInflatedLimit: a push whose objects inflate past the push limit
// (81 MiB, as the pack's) is refused before the server inflates it into
// memory, however small the pack: here seven 12 MiB files of zeros, a
// pack of about 100 KiB inflating to 84 MiB. git shows why in remote:
// lines; the draft does not move and nothing is kept.
func TestPushInflatedLimit(t *testing.T) {
	t.Parallel()
	sequentialHeavy(t)
	f := newGitFixture(t)
	before := f.serverRefs()
	dir := filepath.Join(t.TempDir(), "pdf")
	f.g.must("", "clone", "-q", "-b", "draft/2", f.g.url(f.e.Admin, "demo/skills/pdf.git"), dir)
	zeros := make([]byte, 12<<20)
	for i := range 7 {
		zeros[0] = byte('0' + i) // seven distinct blobs
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("zeros%d.bin", i)), zeros, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.g.must(dir, "add", ".")
	f.g.must(dir, "commit", "-q", "-m", "zeros")
	out := f.g.fails(dir, "push", "origin", "draft/2")
	if !strings.Contains(out, "remote: quire: push refused: the push inflates to more than 84934656 bytes") {
		t.Errorf("push output:\n%s", out)
	}
	if after := f.serverRefs(); after != before {
		t.Errorf("refs moved:\n%s\nwant\n%s", after, before)
	}
	f.fsck()
}

// TestPushUnreachableObjects: a pack holding an object no pushed ref
// reaches is refused whole (git's pack-objects never sends one; a
// hand-made pack may, to plant a payload), and nothing is kept; the same
// push without the stray object goes through.
func TestPushUnreachableObjects(t *testing.T) {
	t.Parallel()
	f := newGitFixture(t)
	dir := filepath.Join(t.TempDir(), "pdf")
	f.g.must("", "clone", "-q", "-b", "draft/2", f.g.url(f.e.Admin, "demo/skills/pdf.git"), dir)
	old := f.g.must(dir, "rev-parse", "HEAD")
	f.g.commitFile(dir, "more.md", "more\n")
	tip := f.g.must(dir, "rev-parse", "HEAD")
	payload := filepath.Join(t.TempDir(), "payload")
	if err := os.WriteFile(payload, []byte("a payload no ref reaches\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stray := f.g.must(dir, "hash-object", "-w", payload)
	objs := f.g.must(dir, "rev-list", "--objects", tip, "^"+old)

	push := func(list string) string {
		t.Helper()
		cmd := exec.Command("git", "pack-objects", "--stdout", "-q")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(list+"\n")
		pack, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		body.WriteString(pkt(old+" "+tip+" refs/heads/draft/2\x00report-status\n", "0000"))
		body.Write(pack)
		r := f.e.Do("POST", "/git/demo/skills/pdf.git/git-receive-pack", f.e.Admin, body.Bytes(), "Content-Type: application/x-git-receive-pack-request")
		if r.Status != 200 {
			t.Fatalf("receive-pack: %d %s", r.Status, r.Body)
		}
		return string(r.Body)
	}
	rep := push(objs + "\n" + stray)
	if !strings.Contains(rep, "unpack the pack holds 1 objects that no pushed ref reaches") || !strings.Contains(rep, "ng refs/heads/draft/2 unpacker error") {
		t.Fatalf("report: %q", rep)
	}
	if err := exec.Command("git", "-C", f.repo(), "cat-file", "-e", stray).Run(); err == nil {
		t.Error("the stray object was kept")
	}
	f.fsck()
	if rep := push(objs); !strings.Contains(rep, "unpack ok") || !strings.Contains(rep, "ok refs/heads/draft/2") {
		t.Fatalf("report without the stray object: %q", rep)
	}
	f.fsck()
}
