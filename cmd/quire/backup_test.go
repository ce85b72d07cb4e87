package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire/quire/cli"
	"github.com/quire/quire/internal/testenv"
)

// TestBackupCommand: quire backup and quire restore as an operator runs
// them: progress on stderr, the archive and the restored data root
// there; a missing flag is a usage error (exit code 2), a corrupt archive
// an error that says so.
func TestBackupCommand(t *testing.T) {
	root := t.TempDir()
	e := testenv.NewWith(t, testenv.Options{Root: root})
	e.CreateProject(e.Admin, "ops")
	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"backup", "--data", root, "--to", archive}, &stdout, &stderr); err != nil {
		t.Fatalf("backup: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "quire backup: system repository") || !strings.Contains(stderr.String(), "written to "+archive) {
		t.Errorf("progress:\n%s", stderr.String())
	}
	restored := filepath.Join(t.TempDir(), "new")
	if err := run(context.Background(), []string{"restore", "--from", archive, "--data", restored}, &stdout, &stderr); err != nil {
		t.Fatalf("restore: %v\n%s", err, stderr.String())
	}
	testenv.Git(t, filepath.Join(restored, "_system.git"), "fsck", "--strict")
	err := run(context.Background(), []string{"restore", "--from", archive}, &stdout, &stderr)
	if cli.ExitCode(err) != 2 {
		t.Errorf("restore without --data: %v (exit %d)", err, cli.ExitCode(err))
	}
	if err := os.WriteFile(archive, []byte("not a backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"restore", "--from", archive, "--data", filepath.Join(t.TempDir(), "x")}, &stdout, &stderr)
	if err == nil || !strings.Contains(cli.Message(err), "backup is corrupt") {
		t.Errorf("restore of garbage: %v", err)
	}
}
