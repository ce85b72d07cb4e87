package hatest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/quire/quire/internal/cluster"
)

const (
	adminEmail    = "admin@example.com"
	adminPassword = "ha-test-password"
)

var build struct {
	once   sync.Once
	path   string
	remove func()
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.remove != nil {
		build.remove()
	}
	os.Exit(code)
}

// quireBinary builds cmd/quire once per test process.
func quireBinary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() { build.path, build.remove, build.err = cluster.Build(false) })
	if build.err != nil {
		t.Skipf("cannot build quire: %v", build.err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the git binary is required")
	}
	return build.path
}

// The nodes, the balancer in front of them and its replies are
// internal/cluster's, shared with the benchmark's HA section.
type (
	node     = cluster.Node
	balancer = cluster.Balancer
	reply    = cluster.Reply
)

var (
	newNode     = cluster.NewNode
	newBalancer = cluster.NewBalancer
)

func decode(t testing.TB, r reply, want int, v any) {
	t.Helper()
	if r.Lost != nil || r.Status != want {
		t.Fatalf("want %d: %s", want, r)
	}
	if v != nil {
		if err := json.Unmarshal(r.Body, v); err != nil {
			t.Fatalf("decode: %v: %s", err, r.Body)
		}
	}
}

// gitOut runs git in dir.
func gitOut(dir string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	return string(out), err
}

// holdRepackLock takes the repository's repack lock (the flock a quire
// repack takes before it lists objects, and holds until it has removed
// what it replaced) and returns its release.
func holdRepackLock(t *testing.T, dir string) func() {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "quire-repack.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatalf("repack lock: %v", err)
	}
	for {
		if err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		t.Fatalf("repack lock: %v", err)
	}
	return func() { f.Close() }
}

// findRepos lists every bare repository under root.
func findRepos(root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasSuffix(p, ".git") {
			if _, err := os.Stat(filepath.Join(p, "HEAD")); err == nil {
				out = append(out, p)
				return filepath.SkipDir
			}
		}
		return nil
	})
	return out
}
