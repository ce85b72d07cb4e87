package main

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
)

// TestReadinessFullDisk: a full data root makes /readyz answer 503 (a new
// empty file still fits, a written block does not), and freeing space
// makes it ready again. /healthz answers 200 throughout.
func TestReadinessFullDisk(t *testing.T) {
	root := testenv.MountTmpfs(t, "8m")
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
