package crashtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
)

// fill writes a file until the filesystem holding dir is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	// Smaller writes, to leave no byte free.
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	return p
}

// faultEnv is a quire with one project, one skill and one draft holding a
// SKILL.md, on the data root given.
type faultEnv struct {
	*testenv.Env
	root, skill string
}

func newFaultEnv(t *testing.T, root string) *faultEnv {
	e := testenv.NewWith(t, testenv.Options{Root: root})
	pid := e.CreateProject(e.Admin, "disk")
	id := e.CreateSkill(e.Admin, pid, "disk")
	e.Must(201, "POST", "/v1/skills/disk/versions", e.Admin, nil)
	e.Must(200, "POST", "/v1/skills/disk/versions/1/files", e.Admin, map[string]string{"file_path": "SKILL.md", "content": testenv.SkillManifest("disk")})
	return &faultEnv{Env: e, root: root, skill: id}
}

// writesFail checks that each kind of write answers status with an
// APIError carrying code, and changes nothing.
func (e *faultEnv) writesFail(t *testing.T, status int, code string) {
	t.Helper()
	repo := e.RepoPath("skill", e.skill)
	draftBefore := testenv.Git(t, repo, "rev-parse", "refs/heads/draft/1")
	systemBefore := testenv.Git(t, filepath.Join(e.root, "_system.git"), "rev-parse", "main")
	skillsDir := filepath.Dir(repo)
	reposBefore, _ := os.ReadDir(skillsDir)

	big := strings.Repeat("quire disk fault test\n", 3000) // 66 KB
	writes := []struct {
		name, method, path string
		body               any
	}{
		{"upsert", "POST", "/v1/skills/disk/versions/1/files", map[string]string{"file_path": "big.txt", "content": big}},
		{"delete file", "DELETE", "/v1/skills/disk/versions/1/files/SKILL.md", nil},
		{"create version", "POST", "/v1/skills/disk/versions", nil},
		{"publish", "POST", "/v1/skills/disk/versions/1/publish", nil},
		{"create project", "POST", "/v1/projects", map[string]string{"name": "Another", "slug": "another"}},
		{"create skill", "POST", "/v1/projects/disk/skills", map[string]string{"name": "Other", "slug": "other", "description": big[:500]}},
		{"create API key", "POST", "/v1/api-keys", map[string]string{"name": strings.Repeat("k", 150), "scope": "read"}},
	}
	for _, w := range writes {
		r := e.Do(w.method, w.path, e.Admin, w.body)
		if r.Status != status {
			t.Errorf("%s: status %d, want %d: %s", w.name, r.Status, status, r.Body)
			continue
		}
		m := r.JSON(t)
		if msg, _ := m["error"].(string); m["code"] != code || !strings.Contains(msg, "storage") {
			t.Errorf("%s: body %s, want code %q and a message about storage", w.name, r.Body, code)
		}
	}
	if got := testenv.Git(t, repo, "rev-parse", "refs/heads/draft/1"); got != draftBefore {
		t.Errorf("draft moved from %s to %s although every write failed", draftBefore, got)
	}
	if got := testenv.Git(t, filepath.Join(e.root, "_system.git"), "rev-parse", "main"); got != systemBefore {
		t.Errorf("system repository moved from %s to %s although every write failed", systemBefore, got)
	}
	// A failed write leaves no temporary file behind (nor holds one open:
	// the tmpfs could not be unmounted).
	filepath.Walk(e.root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			for _, prefix := range []string{"quire-obj-", "quire-ref-", "tmp_obj_", ".init-"} {
				if strings.HasPrefix(info.Name(), prefix) {
					t.Errorf("left behind: %s", p)
				}
			}
		}
		return nil
	})
	if reposAfter, _ := os.ReadDir(skillsDir); len(reposAfter) != len(reposBefore) {
		t.Errorf("%d entries in %s after the failed writes, %d before", len(reposAfter), skillsDir, len(reposBefore))
	}
	// Reads still work.
	e.Must(200, "GET", "/v1/skills/disk/versions/1/files/SKILL.md", e.Admin, nil)
	e.Must(200, "GET", "/v1/skills/disk/versions", e.Admin, nil)
	e.Must(200, "GET", "/v1/projects", e.Admin, nil)
}

// writesWork checks that writes succeed again once the fault is gone.
func (e *faultEnv) writesWork(t *testing.T) {
	t.Helper()
	e.Must(200, "POST", "/v1/skills/disk/versions/1/files", e.Admin, map[string]string{"file_path": "after.txt", "content": "recovered\n"})
	e.Must(200, "POST", "/v1/skills/disk/versions/1/publish", e.Admin, nil)
	e.Must(201, "POST", "/v1/projects", e.Admin, map[string]string{"name": "After", "slug": "after"})
	e.Must(200, "GET", "/readyz", "", nil)
	if got := e.Must(200, "GET", "/v1/skills/disk/versions/1/files/after.txt", e.Admin, nil).Body; string(got) != "recovered\n" {
		t.Errorf("read back %q", got)
	}
}

func (e *faultEnv) fsck(t *testing.T) {
	t.Helper()
	rep, err := checkDisk(e.root)
	if err != nil {
		t.Fatal(err)
	}
	if rep.repos < 2 {
		t.Fatalf("found %d repositories", rep.repos)
	}
}

// A full disk answers 507 insufficient_storage to every write, leaves
// every repository as it was and fsck-clean, and writes work again once
// space is freed, without a restart.
func TestDiskFull(t *testing.T) {
	root := testenv.MountTmpfs(t, "4m")
	e := newFaultEnv(t, root)
	filler := fill(t, root)
	e.writesFail(t, 507, "insufficient_storage")
	e.fsck(t)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	e.writesWork(t)
	e.fsck(t)
}

// A read-only data root answers 503 unavailable to every write (and to
// /readyz) while reads keep working; writes work again once it is
// writable, without a restart.
func TestReadOnlyDataRoot(t *testing.T) {
	var root string
	var makeRO, makeRW func()
	if os.Geteuid() == 0 {
		// chmod does not stop root: remount a tmpfs read-only instead.
		root = testenv.MountTmpfs(t, "16m")
		remount := func(mode string) {
			if out, err := exec.Command("mount", "-o", "remount,"+mode, root).CombinedOutput(); err != nil {
				t.Fatalf("remount %s: %v %s", mode, err, out)
			}
		}
		makeRO, makeRW = func() { remount("ro") }, func() { remount("rw") }
	} else {
		root = t.TempDir()
		chmod := func(mode os.FileMode) {
			err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
				if err != nil || !info.IsDir() {
					return err
				}
				return os.Chmod(p, mode)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		makeRO, makeRW = func() { chmod(0o555) }, func() { chmod(0o755) }
		t.Cleanup(makeRW)
	}
	e := newFaultEnv(t, root)
	makeRO()
	e.writesFail(t, 503, "unavailable")
	makeRW()
	e.fsck(t)
	e.writesWork(t)
	e.fsck(t)
}

// quire serve's /readyz reports a data root that cannot be written.
func TestReadyzOnReadOnlyDataRoot(t *testing.T) {
	bin := quireBinary(t)
	root := testenv.MountTmpfs(t, "16m")
	srv, err := startServer(t, bin, root, false, true)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	c := newClient(srv.URL, "")
	defer c.close()
	// The disk probe's answer is kept for a second: poll for the state.
	readyz := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			r, err := c.call("GET", "/readyz", nil)
			if err != nil {
				t.Fatal(err)
			}
			err = expect(r, want, "GET /readyz")
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
		}
	}
	readyz(200)
	remount := func(mode string) {
		if out, err := exec.Command("mount", "-o", "remount,"+mode, root).CombinedOutput(); err != nil {
			t.Fatalf("remount %s: %v %s", mode, err, out)
		}
	}
	remount("ro")
	readyz(503)
	remount("rw")
	readyz(200)
}
