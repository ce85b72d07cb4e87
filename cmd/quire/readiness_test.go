package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// mountTmpfs mounts a tmpfs of size (mount -o size=) on a new directory,
// or skips the test when this process may not mount.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// TestReadinessFullDisk: a full data root makes /readyz answer 503 (a new
// empty file still fits, a written block does not), and freeing space
// makes it ready again. /healthz answers 200 throughout.
func TestReadinessFullDisk(t *testing.T) {
	root := mountTmpfs(t, "8m")
	m, _ := start(t, filepath.Join(root, "data"), "")
	readyz := func(wantCode int, wantError string) {
		t.Helper()
		// The probe's answer is kept for a second: poll.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			code, body := call(t, m, "GET", "/readyz", "", nil)
			if code == wantCode && (wantError == "" || body["error"] == wantError && body["code"] == "unavailable") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("readyz: %d %v, want %d %s", code, body, wantCode, wantError)
			}
		}
	}
	readyz(200, "")

	fill := filepath.Join(root, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	readyz(503, "data root full")
	if code, _ := call(t, m, "GET", "/healthz", "", nil); code != 200 {
		t.Fatalf("healthz on a full disk: %d", code)
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	readyz(200, "")
}
