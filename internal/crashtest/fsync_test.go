package crashtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFsyncOption watches the server's system calls with strace while it
// answers a file upsert and a publish, and checks what --fsync promises:
// before the response is written, every object and ref is fsynced before
// it is renamed into place, the directories up to the repository of every
// new object are fsynced before any ref moves (so no ref can point at an
// object a power loss may take), and the directories of every renamed or
// removed ref are fsynced.
// Without --fsync no fsync happens at all (the weaker default that
// docs/reliability.md describes).
func TestFsyncOption(t *testing.T) {
	bin := quireBinary(t)
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed")
	}
	if out, err := exec.Command("strace", "-f", "-o", os.DevNull, "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here: %v %s", err, out)
	}
	for _, fsync := range []bool{true, false} {
		t.Run(fmt.Sprintf("fsync=%v", fsync), func(t *testing.T) {
			events := traceWrites(t, bin, fsync)
			resp := []int{}
			for i, e := range events {
				if e.kind == "response" {
					resp = append(resp, i)
				}
			}
			if len(resp) < 3 {
				t.Fatalf("saw %d HTTP responses in the trace, want at least 3", len(resp))
			}
			windows := map[string][2]int{
				"upsert":  {resp[len(resp)-3], resp[len(resp)-2]},
				"publish": {resp[len(resp)-2], resp[len(resp)-1]},
			}
			for name, w := range windows {
				win := events[w[0]+1 : w[1]]
				if fsync {
					for _, problem := range checkDurable(win) {
						t.Errorf("%s: %s", name, problem)
					}
					continue
				}
				for _, e := range win {
					if e.kind == "fsync" {
						t.Errorf("%s without --fsync: fsync(%s)", name, e.path)
					}
				}
			}
		})
	}
}

// event is one successful system call of interest.
type event struct {
	kind     string // fsync, rename, unlink, response
	path     string // fsync: the file; rename: the target; unlink: the path
	from     string // rename: the source
	response string
}

// traceWrites runs quire under strace, makes a project, a skill and a
// draft, upserts a file and publishes, and returns the trace.
func traceWrites(t *testing.T, bin string, fsync bool) []event {
	t.Helper()
	root := t.TempDir()
	trace := filepath.Join(t.TempDir(), "trace")
	wrap := []string{"strace", "-f", "-y", "-qq", "-s", "48", "-o", trace,
		"-e", "trace=fsync,fdatasync,rename,renameat,renameat2,unlink,unlinkat,write,writev"}
	srv, err := startWrapped(t, wrap, bin, root, fsync, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		// SIGTERM the traced server itself (strace would only detach), then
		// strace exits with it.
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", srv.Pid(), srv.Pid())); err == nil {
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					syscall.Kill(pid, syscall.SIGTERM)
				}
			}
		}
		select {
		case <-srv.Exited:
		case <-time.After(30 * time.Second):
			srv.kill()
		}
	}()
	c := newClient(srv.URL, "")
	defer c.close()
	step := func(method, path string, body any, want int) *reply {
		t.Helper()
		r, err := c.call(method, path, body)
		if err != nil {
			t.Fatal(err)
		}
		if err := expect(r, want, method+" "+path); err != nil {
			t.Fatal(err)
		}
		return r
	}
	var login struct{ Token string }
	step("POST", "/v1/auth/login", map[string]string{"email": adminEmail, "password": adminPassword}, 200).decode(&login)
	c = c.with(login.Token)
	var proj struct{ Project struct{ ID string } }
	step("POST", "/v1/projects", map[string]string{"name": "Traced", "slug": "traced"}, 201).decode(&proj)
	step("POST", "/v1/projects/"+proj.Project.ID+"/skills", map[string]string{"name": "Traced", "slug": "traced"}, 201)
	step("POST", "/v1/skills/traced/versions", nil, 201)
	step("POST", "/v1/skills/traced/versions/1/files", map[string]string{"file_path": "SKILL.md", "content": manifest("traced", "traced")}, 200)
	step("POST", "/v1/skills/traced/versions/1/publish", nil, 200)
	// strace logs a write when it returns, which may be after the client
	// has its answer: wait for the last answers (the upsert's and the
	// publish's, after the third 201) to be in the trace.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		events := parseTrace(t, trace)
		created, after := 0, 0
		for _, e := range events {
			switch {
			case e.kind != "response":
			case e.response == "201":
				created++
			case created == 3:
				after++
			}
		}
		if created == 3 && after >= 2 || time.Now().After(deadline) {
			return events
		}
	}
}

var (
	traceLine = regexp.MustCompile(`^(\d+)\s+(.*)$`)
	quoted    = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
	fdPath    = regexp.MustCompile(`^\w+\(\d+<([^>]*)>`)
	respLine  = regexp.MustCompile(`HTTP/1\.1 (\d{3})`)
)

func parseTrace(t *testing.T, path string) []event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pending := map[string]string{}
	var out []event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := traceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pid, call := m[1], m[2]
		if i := strings.Index(call, " resumed>"); strings.HasPrefix(call, "<... ") && i > 0 {
			call = pending[pid] + call[i+len(" resumed>"):]
			delete(pending, pid)
		} else if strings.HasSuffix(call, "<unfinished ...>") {
			pending[pid] = strings.TrimSuffix(call, "<unfinished ...>")
			continue
		}
		eq := strings.LastIndex(call, " = ")
		if eq < 0 || strings.HasPrefix(call[eq+3:], "-") {
			continue // failed or not finished
		}
		name, _, _ := strings.Cut(call, "(")
		args := quoted.FindAllStringSubmatch(call, -1)
		switch name {
		case "fsync", "fdatasync":
			if p := fdPath.FindStringSubmatch(call); p != nil {
				out = append(out, event{kind: "fsync", path: filepath.Clean(p[1])})
			}
		case "rename", "renameat", "renameat2":
			if len(args) >= 2 {
				out = append(out, event{kind: "rename", from: filepath.Clean(args[0][1]), path: filepath.Clean(args[1][1])})
			}
		case "unlink", "unlinkat":
			if len(args) >= 1 {
				out = append(out, event{kind: "unlink", path: filepath.Clean(args[0][1])})
			}
		case "write", "writev":
			if r := respLine.FindStringSubmatch(call); r != nil {
				out = append(out, event{kind: "response", response: r[1]})
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// repoOf returns the repository directory (…/x.git) holding path.
func repoOf(path string) string {
	if i := strings.Index(path, ".git/"); i >= 0 {
		return path[:i+4]
	}
	return ""
}

// dirsUp lists dir(path) and its parents up to the repository.
func dirsUp(path string) []string {
	repo := repoOf(path)
	var out []string
	for d := filepath.Dir(path); repo != "" && len(d) >= len(repo); d = filepath.Dir(d) {
		out = append(out, d)
	}
	return out
}

// checkDurable checks the trace of one request against the --fsync promise.
func checkDurable(win []event) []string {
	var problems []string
	synced := func(path string, from, to int) bool {
		for i := from; i < to; i++ {
			if win[i].kind == "fsync" && win[i].path == path {
				return true
			}
		}
		return false
	}
	firstRef := len(win)
	var objects, refs, removed int
	for i, e := range win {
		if e.kind == "rename" && strings.Contains(e.path, "/refs/") && i < firstRef {
			firstRef = i
		}
	}
	for i, e := range win {
		switch {
		case e.kind == "rename" && strings.Contains(e.path, "/objects/"):
			objects++
			// The object's content before it gets its name, and every
			// directory up to the repository before any ref moves.
			if !synced(e.from, 0, i) {
				problems = append(problems, fmt.Sprintf("object %s: its content %s was not fsynced before the rename", filepath.Base(e.path), e.from))
			}
			for _, p := range dirsUp(e.path) {
				if !synced(p, i+1, firstRef) {
					problems = append(problems, fmt.Sprintf("object %s: directory %s not fsynced before the first ref update", filepath.Base(e.path), p))
				}
			}
		case e.kind == "rename" && strings.Contains(e.path, "/refs/"):
			refs++
			if !synced(e.from, 0, i) {
				problems = append(problems, fmt.Sprintf("ref %s: its new value %s was not fsynced before the rename", e.path, e.from))
			}
			for _, p := range dirsUp(e.path) {
				if !synced(p, i+1, len(win)) {
					problems = append(problems, fmt.Sprintf("ref %s: directory %s not fsynced after the rename", e.path, p))
				}
			}
		case e.kind == "unlink" && strings.Contains(e.path, "/refs/"):
			removed++
			for _, p := range dirsUp(e.path) {
				if !synced(p, i+1, len(win)) {
					problems = append(problems, fmt.Sprintf("removed ref %s: directory %s not fsynced after the removal", e.path, p))
				}
			}
		}
	}
	if objects == 0 || refs == 0 {
		problems = append(problems, fmt.Sprintf("trace shows %d object and %d ref renames; the request must make both", objects, refs))
	}
	return problems
}
