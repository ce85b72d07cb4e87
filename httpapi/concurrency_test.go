package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// do sends a request from any goroutine: it reports failures with
// t.Errorf, never Fatal, and returns the status and body.
func do(t *testing.T, e *testenv.Env, method, path, token string, body any) (int, string) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Error(err)
	}
	return res.StatusCode, string(b)
}

// TestConcurrentUpserts: 32 clients upsert 32 distinct files into one
// draft at once, while others read it. Every write lands: 32 files and
// exactly 32 new commits, one per file.
func TestConcurrentUpserts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "busy")
	s.draft(t, nil)
	before := s.count(t, "refs/heads/draft/1")

	const writers = 32
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for i := 0; i < 2; i++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, p := range []string{s.vurl(1), s.vurl(1, "/files"), s.url("/versions")} {
					if st, body := do(t, e, "GET", p, e.Admin, nil); st != http.StatusOK {
						t.Errorf("GET %s during writes: %d %s", p, st, body)
						return
					}
				}
			}
		}()
	}
	commits := make([]string, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			st, body := do(t, e, "POST", s.vurl(1, "/files"), e.Admin, map[string]string{
				"file_path": fmt.Sprintf("dir%d/file-%02d.txt", i%4, i), "content": fmt.Sprintf("content %d\n", i),
			})
			if st != http.StatusOK {
				t.Errorf("upsert %d: %d %s", i, st, body)
			}
			commits[i] = body
		}(i)
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	if t.Failed() {
		t.FailNow()
	}

	if got := s.count(t, "refs/heads/draft/1"); got != before+writers {
		t.Fatalf("draft/1 has %d commits, want %d + %d", got, before, writers)
	}
	files := strings.Fields(s.git(t, "ls-tree", "-r", "--name-only", "draft/1"))
	if len(files) != writers {
		t.Fatalf("%d files in the tree, want %d", len(files), writers)
	}
	msgs := strings.Split(s.git(t, "log", "--format=%s", "-n", fmt.Sprint(writers), "draft/1"), "\n")
	sort.Strings(msgs)
	for i := 0; i < writers; i++ {
		want := fmt.Sprintf("Add dir%d/file-%02d.txt", i%4, i)
		if j := sort.SearchStrings(msgs, want); j == len(msgs) || msgs[j] != want {
			t.Fatalf("no commit %q in %v", want, msgs)
		}
		if got := s.git(t, "show", fmt.Sprintf("draft/1:dir%d/file-%02d.txt", i%4, i)); got != fmt.Sprintf("content %d", i) {
			t.Fatalf("file %d holds %q", i, got)
		}
	}
	// Each commit has exactly one parent: a straight line, nothing lost.
	if merges := s.git(t, "rev-list", "--min-parents=2", "draft/1"); merges != "" {
		t.Fatalf("merge commits: %s", merges)
	}
	if n := len(arr(t, e.Must(200, "GET", s.vurl(1, "/files"), e.Admin, nil).JSON(t), "files")); n != writers {
		t.Fatalf("API lists %d files", n)
	}
	s.fsck(t)
}

// TestConcurrentSameFile: racing writes to one file are serialized; each
// makes its own commit on top of the last, so none is lost.
func TestConcurrentSameFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "race")
	s.draft(t, nil)
	before := s.count(t, "refs/heads/draft/1")
	const n = 16
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if st, body := do(t, e, "POST", s.vurl(1, "/files"), e.Admin, map[string]string{"file_path": "same.txt", "content": fmt.Sprint("v", i)}); st != 200 {
				t.Errorf("upsert %d: %d %s", i, st, body)
			}
		}(i)
	}
	wg.Wait()
	if got := s.count(t, "refs/heads/draft/1"); got != before+n {
		t.Fatalf("%d commits, want %d", got, before+n)
	}
	// Every value was the file's content at some commit.
	seen := map[string]bool{}
	for _, c := range strings.Fields(s.git(t, "rev-list", "-n", fmt.Sprint(n), "draft/1")) {
		seen[s.git(t, "show", c+":same.txt")] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct contents in history, want %d", len(seen), n)
	}
	s.fsck(t)
}

// TestConcurrentCreates: version numbers and metadata writes stay unique
// and complete under concurrent creation.
func TestConcurrentCreates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "many")
	const n = 12
	var wg sync.WaitGroup
	var mu sync.Mutex
	numbers := map[int]bool{}
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			st, body := do(t, e, "POST", s.url("/versions"), e.Admin, nil)
			if st != 201 {
				t.Errorf("create version: %d %s", st, body)
			}
			var v struct {
				Version struct{ Version int } `json:"version"`
			}
			json.Unmarshal([]byte(body), &v)
			mu.Lock()
			numbers[v.Version.Version] = true
			mu.Unlock()
		}()
		go func(i int) {
			defer wg.Done()
			if st, body := do(t, e, "POST", "/v1/projects", e.Admin, map[string]string{"name": fmt.Sprint("Parallel ", i)}); st != 201 {
				t.Errorf("create project: %d %s", st, body)
			}
		}(i)
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	refs := s.refs(t)
	for i := 1; i <= n; i++ {
		if refs[fmt.Sprintf("refs/heads/draft/%d", i)] == "" {
			t.Fatalf("no draft/%d: %v", i, refs)
		}
	}
	if len(numbers) != n {
		t.Fatalf("version numbers handed out: %v", numbers)
	}
	if ps := arr(t, e.Must(200, "GET", "/v1/projects?limit=500", e.Admin, nil).JSON(t), "projects"); len(ps) != n+1 {
		t.Fatalf("%d projects, want %d", len(ps), n+1)
	}
	s.fsck(t)
}
