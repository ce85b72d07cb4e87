package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// newEnv starts a quire for one test and, when the test ends, fails it if
// the server answered any request with a 5xx: bad input must never be a
// server error, so every test doubles as a check of that rule.
func newEnv(t *testing.T, opts ...testenv.Options) *testenv.Env {
	t.Helper()
	var o testenv.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	e := testenv.NewWith(t, o)
	t.Cleanup(func() { no5xx(t, e) })
	return e
}

// no5xx fails t if the access log of e holds a 5xx answer.
func no5xx(t *testing.T, e *testenv.Env) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(e.Log.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg    string `json:"msg"`
			Status int    `json:"status"`
			Route  string `json:"route"`
			Method string `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Status >= 500 {
			t.Errorf("server answered %d to %s %s:\n%s", line.Status, line.Method, line.Route, sc.Text())
		}
	}
}

// wantError asserts an APIError answer: the status, a JSON body with a
// non-empty "error" string, and each of subs in the message (any case).
func wantError(t testing.TB, r *testenv.Response, status int, subs ...string) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d\n%s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error Content-Type %q, want application/json\n%s", ct, r.Body)
	}
	m := r.JSON(t)
	msg, ok := m["error"].(string)
	if !ok || msg == "" {
		t.Fatalf("error body without an error string: %s", r.Body)
	}
	for _, s := range subs {
		if !strings.Contains(strings.ToLower(msg), strings.ToLower(s)) {
			t.Fatalf("error %q does not mention %q", msg, s)
		}
	}
	return m
}

// get walks a decoded JSON value along keys (object keys or array indexes).
func get(t testing.TB, v any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				t.Fatalf("no key %q in %v", k, x)
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				t.Fatalf("no index %q in array of %d", k, len(x))
			}
			v = x[i]
		default:
			t.Fatalf("cannot take %q of %T", k, v)
		}
	}
	return v
}

func str(t testing.TB, v any, keys ...string) string {
	t.Helper()
	s, ok := get(t, v, keys...).(string)
	if !ok {
		t.Fatalf("%v is not a string", strings.Join(keys, "."))
	}
	return s
}

func num(t testing.TB, v any, keys ...string) int {
	t.Helper()
	f, ok := get(t, v, keys...).(float64)
	if !ok {
		t.Fatalf("%v is not a number", strings.Join(keys, "."))
	}
	return int(f)
}

func arr(t testing.TB, v any, keys ...string) []any {
	t.Helper()
	a, ok := get(t, v, keys...).([]any)
	if !ok {
		t.Fatalf("%v is not an array", strings.Join(keys, "."))
	}
	return a
}

// skill is a project with one skill in it, as the admin made them.
type skill struct {
	e         *testenv.Env
	projectID string
	id        string
	slug      string
	repo      string
}

func newSkill(t *testing.T, e *testenv.Env, slug string) *skill {
	t.Helper()
	pid := e.CreateProject(e.Admin, "proj-"+slug)
	id := e.CreateSkill(e.Admin, pid, slug)
	return &skill{e: e, projectID: pid, id: id, slug: slug, repo: e.RepoPath(quire.KindSkill, id)}
}

// url is the skill's API path followed by parts.
func (s *skill) url(parts ...string) string {
	return "/v1/skills/" + s.id + strings.Join(parts, "")
}

func (s *skill) vurl(n int, parts ...string) string {
	return s.url(fmt.Sprintf("/versions/%d", n)) + strings.Join(parts, "")
}

// draft opens a draft with body (nil: from live) and returns its number.
func (s *skill) draft(t *testing.T, body any) int {
	t.Helper()
	r := s.e.Must(201, "POST", s.url("/versions"), s.e.Admin, body)
	m := r.JSON(t)
	if st := str(t, m, "version", "state"); st != "draft" {
		t.Fatalf("new version state %q", st)
	}
	return num(t, m, "version", "version")
}

// put upserts one file as the admin and returns the answer.
func (s *skill) put(t *testing.T, n int, path, content string) map[string]any {
	t.Helper()
	return s.e.Must(200, "POST", s.vurl(n, "/files"), s.e.Admin, map[string]string{"file_path": path, "content": content}).JSON(t)
}

// publishable makes draft n publishable (a valid SKILL.md) and publishes it.
func (s *skill) publish(t *testing.T, n int) map[string]any {
	t.Helper()
	s.put(t, n, "SKILL.md", testenv.SkillManifest(s.slug))
	return s.e.Must(200, "POST", s.vurl(n, "/publish"), s.e.Admin, nil).JSON(t)
}

// git runs the git CLI in the skill's repository.
func (s *skill) git(t *testing.T, args ...string) string {
	t.Helper()
	return testenv.Git(t, s.repo, args...)
}

// refs maps every ref of the skill's repository to its object id.
func (s *skill) refs(t *testing.T) map[string]string {
	t.Helper()
	return refsOf(t, s.repo)
}

func refsOf(t *testing.T, repo string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(testenv.Git(t, repo, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		if line == "" {
			continue
		}
		name, id, _ := strings.Cut(line, " ")
		out[name] = id
	}
	return out
}

// count is git rev-list --count of rev.
func (s *skill) count(t *testing.T, rev string) int {
	t.Helper()
	n, err := strconv.Atoi(s.git(t, "rev-list", "--count", rev))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// fsck runs git fsck --strict on the skill's repository.
func (s *skill) fsck(t *testing.T) {
	t.Helper()
	s.git(t, "fsck", "--strict", "--no-dangling")
}

func sameRefs(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("refs changed:\nbefore %v\nafter  %v", before, after)
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("ref %s moved from %s to %s", k, v, after[k])
		}
	}
}

// sequentialHeavy skips a test under the race detector: one that sends
// thousands of requests one after another (the authorization matrix, the
// Mustache spec, the hostile and bad-input tables, the write fuzzer's
// seeds, the tables of refused pushes by the git binary) or whose cost
// is bcrypt's or a zip's own. The detector finds
// nothing in a single request sequence that the concurrency tests do
// not, and makes these the slowest tests by minutes; make test runs them
// without it (Makefile; internal/archtest checks the two lists agree).
func sequentialHeavy(t testing.TB) {
	t.Helper()
	if raceDetector {
		t.Skip("sequential and heavy: make test runs it without -race")
	}
}
