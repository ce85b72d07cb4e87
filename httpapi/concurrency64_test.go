package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// client sends requests bound to the test's deadline and records every
// answer that breaks the rules (a 5xx, an unexpected status).
type client struct {
	e     *testenv.Env
	ctx   context.Context
	mu    sync.Mutex
	fails []string
}

// newClient returns a client whose requests end three minutes from now,
// or ten seconds before the test's own deadline, whichever comes first, so
// a hang is reported with a goroutine dump rather than killed silently.
func newClient(t *testing.T, e *testenv.Env) *client {
	deadline := 3 * time.Minute
	if d, ok := t.Deadline(); ok && time.Until(d) < deadline+10*time.Second {
		deadline = time.Until(d) - 10*time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	t.Cleanup(cancel)
	return &client{e: e, ctx: ctx}
}

func (c *client) fail(format string, args ...any) {
	c.mu.Lock()
	c.fails = append(c.fails, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

// do sends a request and returns the status and body; status 0 means no
// answer came before the deadline.
func (c *client) do(method, path string, body any) (int, []byte) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(c.ctx, method, c.e.URL+path, rd)
	if err != nil {
		c.fail("%s %s: %v", method, path, err)
		return 0, nil
	}
	req.Header.Set("Authorization", "Bearer "+c.e.Admin)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		if c.ctx.Err() == nil {
			c.fail("%s %s: %v", method, path, err)
		}
		return 0, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 500 {
		c.fail("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	return res.StatusCode, b
}

// must is do that records any status but want.
func (c *client) must(want int, method, path string, body any) []byte {
	status, b := c.do(method, path, body)
	if status != want && status != 0 {
		c.fail("%s %s: %d, want %d: %.300s", method, path, status, want, b)
	}
	return b
}

// TestConcurrentWriters runs, at once, 64 writers on one draft, 64 writers
// each on a draft of its own (eight drafts in each of eight skills,
// created concurrently too) and readers of files and versions, and checks
// that nothing is lost: the version numbers handed out are exactly 1..8 in
// each skill, every draft holds exactly one commit per acknowledged write,
// each acknowledged commit is in its draft's history and each file holds
// its writer's last content. No request may answer 5xx, and everything
// must finish before a deadline (a deadlock fails the test with every
// goroutine's stack instead of hanging it).
func TestConcurrentWriters(t *testing.T) {
	const (
		writers = 64
		skills  = 8
		rounds  = 2 // writes by each writer
	)
	e := testenv.New(t)
	c := newClient(t, e)

	pid := e.CreateProject(e.Admin, "conc")
	shared := e.CreateSkill(e.Admin, pid, "shared")
	e.Must(201, "POST", "/v1/skills/shared/versions", e.Admin, nil)
	e.Must(200, "POST", "/v1/skills/shared/versions/1/files", e.Admin, map[string]string{"file_path": "SKILL.md", "content": testenv.SkillManifest("shared")})
	skillIDs := make([]string, skills)
	for i := range skillIDs {
		skillIDs[i] = e.CreateSkill(e.Admin, pid, fmt.Sprintf("own-%d", i))
	}

	// Phase 1: 64 drafts opened at once, eight per skill.
	own := make([]int, writers) // writer -> its draft number
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := c.must(201, "POST", "/v1/skills/"+skillIDs[w%skills]+"/versions", map[string]any{"from": "empty"})
			var out struct{ Version struct{ Version int } }
			json.Unmarshal(b, &out)
			own[w] = out.Version.Version
		}()
	}
	if !waitFor(t, c.ctx, &wg) {
		return
	}
	for s := range skills {
		var got []int
		for w := s; w < writers; w += skills {
			got = append(got, own[w])
		}
		slices.Sort(got)
		if want := []int{1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(got, want) {
			t.Errorf("skill own-%d: concurrent creates handed out versions %v, want %v", s, got, want)
		}
	}

	// Phase 2: the writers and the readers.
	type ack struct{ commit, content string }
	sharedAcks := make([][]ack, writers)
	ownAcks := make([][]ack, writers)
	upsert := func(skill string, n int, path, content string) string {
		b := c.must(200, "POST", fmt.Sprintf("/v1/skills/%s/versions/%d/files", skill, n), map[string]string{"file_path": path, "content": content})
		var out struct{ Version struct{ Commit string } }
		json.Unmarshal(b, &out)
		return out.Version.Commit
	}
	var writing sync.WaitGroup
	for w := range writers {
		writing.Add(2)
		go func() { // on the shared draft
			defer writing.Done()
			for r := range rounds {
				content := fmt.Sprintf("writer %d round %d\n", w, r)
				if commit := upsert(shared, 1, fmt.Sprintf("w%d/f.txt", w), content); commit != "" {
					sharedAcks[w] = append(sharedAcks[w], ack{commit, content})
				}
			}
		}()
		go func() { // on its own draft
			defer writing.Done()
			for r := range rounds {
				content := fmt.Sprintf("own writer %d round %d\n", w, r)
				if commit := upsert(skillIDs[w%skills], own[w], "f.txt", content); commit != "" {
					ownAcks[w] = append(ownAcks[w], ack{commit, content})
				}
			}
		}()
	}
	stop := make(chan struct{})
	var reading sync.WaitGroup
	var reads sync.Map
	for r := range 4 {
		reading.Add(1)
		go func() {
			defer reading.Done()
			n := 0
			for ; ; n++ {
				select {
				case <-stop:
					reads.Store(r, n)
					return
				case <-c.ctx.Done():
					return
				default:
				}
				switch n % 4 {
				case 0:
					c.must(200, "GET", "/v1/skills/shared/versions/1/files", nil)
				case 1:
					c.must(200, "GET", "/v1/skills/shared/versions/1/files/SKILL.md", nil)
				case 2:
					c.must(200, "GET", "/v1/skills/"+skillIDs[r]+"/versions", nil)
				case 3:
					c.must(200, "GET", fmt.Sprintf("/v1/skills/%s/versions/%d", skillIDs[r], 1+n%8), nil)
				}
			}
		}()
	}
	ok := waitFor(t, c.ctx, &writing)
	close(stop)
	if !ok || !waitFor(t, c.ctx, &reading) {
		return
	}
	for _, f := range c.fails {
		t.Error(f)
	}
	if t.Failed() {
		return
	}
	total := 0
	reads.Range(func(_, v any) bool { total += v.(int); return true })
	t.Logf("%d writes on one draft, %d on 64 drafts, %d reads, all at once", writers*rounds, writers*rounds, total)

	// Exact commit counts and every acknowledged commit in history.
	check := func(skillID string, n, want int, acks [][]ack) {
		t.Helper()
		repo := e.RepoPath(quire.KindSkill, skillID)
		ref := "refs/heads/draft/" + strconv.Itoa(n)
		history := strings.Fields(testenv.Git(t, repo, "rev-list", ref))
		if len(history) != want {
			t.Errorf("%s: %d commits, want %d", ref, len(history), want)
		}
		for _, as := range acks {
			for _, a := range as {
				if !slices.Contains(history, a.commit) {
					t.Errorf("%s: acknowledged commit %s is not in its history", ref, a.commit)
				}
			}
		}
	}
	// The shared draft: its first commit, SKILL.md, then every write.
	check(shared, 1, 2+writers*rounds, sharedAcks)
	for w := range writers {
		check(skillIDs[w%skills], own[w], 1+rounds, ownAcks[w:w+1])
		if last := sharedAcks[w][len(sharedAcks[w])-1].content; string(e.Must(200, "GET", fmt.Sprintf("/v1/skills/shared/versions/1/files/w%d/f.txt", w), e.Admin, nil).Body) != last {
			t.Errorf("w%d/f.txt does not hold its last write %q", w, last)
		}
		if last := ownAcks[w][len(ownAcks[w])-1].content; string(e.Must(200, "GET", fmt.Sprintf("/v1/skills/%s/versions/%d/files/f.txt", skillIDs[w%skills], own[w]), e.Admin, nil).Body) != last {
			t.Errorf("own draft of writer %d does not hold its last write %q", w, last)
		}
	}
	testenv.Git(t, e.RepoPath(quire.KindSkill, shared), "fsck", "--strict")
}

// waitFor waits for wg or the deadline; at the deadline it fails the test
// with every goroutine's stack.
func waitFor(t *testing.T, ctx context.Context, wg *sync.WaitGroup) bool {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		var b bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&b, 1)
		os.Stderr.Write(b.Bytes())
		t.Errorf("deadline passed with requests outstanding: a deadlock or a stall (goroutines above)")
		return false
	}
}
