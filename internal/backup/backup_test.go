package backup_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire/gitstore"
	"github.com/quire/quire/internal/backup"
	"github.com/quire/quire/internal/testenv"
)

// TestBackupUnderLoad: a backup taken while writers keep writing (and
// the repacker, triggered often, folds their objects into packs) and
// restored into a new data root serves every write acknowledged before
// the backup began, every repository passes git fsck --strict, and the
// events listed before the backup are all there. A corrupted archive is
// refused with a clear error and leaves no data root behind.
func TestBackupUnderLoad(t *testing.T) {
	root := t.TempDir()
	e := testenv.NewWith(t, testenv.Options{Root: root, Git: gitstore.GitOptions{RepackLoose: 16, RepackPacks: 2}})
	pid := e.CreateProject(e.Admin, "kept")
	sid := e.CreateSkill(e.Admin, pid, "docs")
	e.Must(201, "POST", "/v1/skills/"+sid+"/versions", e.Admin, nil)
	prompt := e.CreatePrompt(e.Admin, pid, "greet")
	e.Must(201, "POST", "/v1/prompts/"+prompt+"/versions", e.Admin, map[string]string{"template": "Hello {{name}}"})
	e.Must(200, "POST", "/v1/prompts/"+prompt+"/versions/1/publish", e.Admin, nil)

	// Writers: each write is acknowledged when its answer arrives; those
	// acknowledged before the backup starts must all be in it.
	var (
		mu      sync.Mutex
		acked   = map[string]string{} // path -> content
		started bool
		wg      sync.WaitGroup
	)
	stop := make(chan struct{})
	// A third writer creates skills: every skill the restored metadata
	// lists must have its repository.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			e.Do("POST", "/v1/projects/"+pid+"/skills", e.Admin, map[string]string{"name": fmt.Sprintf("made %d", i), "slug": fmt.Sprintf("made-%d", i)})
		}
	}()
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p, c := fmt.Sprintf("w%d/f%04d.md", w, i), fmt.Sprintf("writer %d, file %d\n", w, i)
				r := e.Do("POST", "/v1/skills/"+sid+"/versions/1/files", e.Admin, map[string]string{"file_path": p, "content": c})
				if r.Status != 200 {
					continue // a 409 from a file limit would be a test bug; the check below says so
				}
				mu.Lock()
				if !started {
					acked[p] = c
				}
				mu.Unlock()
			}
		}()
	}
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 40 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	events := e.Must(200, "GET", "/v1/projects/"+pid+"/events?limit=500", e.Admin, nil).JSON(t)["events"].([]any)
	mu.Lock()
	started = true
	mu.Unlock()

	archive := filepath.Join(t.TempDir(), "quire.tar.gz")
	var progress bytes.Buffer
	m, err := backup.Backup(context.Background(), root, archive, &progress)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if m.Repositories < 3 || !strings.Contains(progress.String(), "quire backup: system repository") || !strings.Contains(progress.String(), "quire backup: repository 1/") {
		t.Errorf("manifest of %d repositories; progress:\n%s", m.Repositories, progress.String())
	}

	restored := filepath.Join(t.TempDir(), "restored")
	if _, err := backup.Restore(context.Background(), archive, restored, &progress); err != nil {
		t.Fatal(err)
	}
	fscked := 0
	filepath.WalkDir(restored, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasSuffix(p, ".git") {
			testenv.Git(t, p, "fsck", "--strict", "--no-dangling")
			fscked++
			return fs.SkipDir
		}
		return nil
	})
	if fscked != m.Repositories {
		t.Errorf("%d repositories checked, the manifest says %d", fscked, m.Repositories)
	}

	e2 := testenv.NewWith(t, testenv.Options{Root: restored})
	for p, c := range acked {
		if r := e2.Must(200, "GET", "/v1/skills/"+sid+"/versions/1/files/"+p, e2.Admin, nil); string(r.Body) != c {
			t.Fatalf("%s after the restore: %q, want %q", p, r.Body, c)
		}
	}
	skills := e2.Must(200, "GET", "/v1/projects/"+pid+"/skills?limit=500", e2.Admin, nil).JSON(t)["skills"].([]any)
	for _, sk := range skills {
		id := sk.(map[string]any)["id"].(string)
		e2.Must(200, "GET", "/v1/skills/"+id+"/versions", e2.Admin, nil)
	}
	r := e2.Must(200, "POST", "/v1/prompts/"+prompt+"/render", e2.Admin, map[string]any{"variables": map[string]string{"name": "Ann"}}).JSON(t)
	if r["rendered"] != "Hello Ann" {
		t.Errorf("render after the restore: %v", r)
	}
	after := e2.Must(200, "GET", "/v1/projects/"+pid+"/events?limit=500", e2.Admin, nil).JSON(t)["events"].([]any)
	have := map[any]bool{}
	for _, ev := range after {
		have[ev.(map[string]any)["id"]] = true
	}
	for _, ev := range events {
		if id := ev.(map[string]any)["id"]; !have[id] {
			t.Errorf("event %v lost in the restore", id)
		}
	}
	if len(events) == 0 {
		t.Error("no events before the backup: the check above checked nothing")
	}

	// A corrupted archive: one byte changed in the middle.
	b, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x55
	bad := filepath.Join(t.TempDir(), "bad.tar.gz")
	if err := os.WriteFile(bad, b, 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "never")
	_, err = backup.Restore(context.Background(), bad, target, &progress)
	if !errors.Is(err, backup.ErrCorrupt) || !strings.Contains(err.Error(), "backup is corrupt") {
		t.Fatalf("restore of a corrupted archive: %v", err)
	}
	if _, serr := os.Stat(target); serr == nil {
		t.Error("a refused restore left its data root behind")
	}
	t.Logf("refused: %v", err)

	// A file changed inside a well-formed archive: its digest gives it
	// away.
	zr, err := gzip.NewReader(bytes.NewReader(mustRead(t, archive)))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	// The event log is plain JSON lines: rewrite what one event says.
	changed := bytes.Replace(raw, []byte(`"type":"asset.created"`), []byte(`"type":"asset.deleted"`), 1)
	if bytes.Equal(changed, raw) {
		t.Fatal("the archive does not hold the event log")
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(changed)
	zw.Close()
	if err := os.WriteFile(bad, zb.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = backup.Restore(context.Background(), bad, target, &progress)
	if !errors.Is(err, backup.ErrCorrupt) || !strings.Contains(err.Error(), "does not match its digest") {
		t.Fatalf("restore of a tampered archive: %v", err)
	}
	if _, serr := os.Stat(target); serr == nil {
		t.Error("a refused restore left its data root behind")
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
