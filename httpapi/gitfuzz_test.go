package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/gitstore"
	"github.com/quire/quire/internal/testenv"
)

// gitFuzzClock fixes the store's clock, so the git fixture's commits, and
// with them the object ids in the captured seeds, are the same in every
// run: a captured fetch wants commits the fuzzed server has, a captured
// push updates its draft from the right old id.
func gitFuzzClock() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// newGitFuzzFixture is the fixed-clock fixture, before the change a
// captured fetch fetches; fuzzFixtureChange makes that change.
func newGitFuzzFixture(t testing.TB) *gitFixture {
	return newGitFixture(t, testenv.Options{Now: gitFuzzClock, Git: gitstore.GitOptions{MaxPushBytes: 4 << 20}})
}

func fuzzFixtureChange(fx *gitFixture) { fx.upsert(2, "fetched.md", "new on the server\n") }

// FuzzGitEndpoints posts any body to git-upload-pack or git-receive-pack
// of a skill with version 1 live and draft 2 open. The protocol leaves
// two answers: 400 with a JSON error when the request is refused before
// any of the response is written (not pkt-lines, a bad object id, an
// unexpected line, a bad gzip stream), 200 otherwise, errors after that
// point being said in-band (ERR, "ng <ref> <reason>", "unpack <reason>")
// as git expects. 413 for a pack over the push limit. Never 5xx; no
// version moves unless the push report says "ok" for draft 2; no
// quarantine is left; the repository stays fsck-clean.
func FuzzGitEndpoints(f *testing.F) {
	fx := newGitFuzzFixture(f)
	fuzzFixtureChange(fx)
	e := fx.e
	live, draft := fx.version(1)["commit"].(string), fx.version(2)["commit"].(string)
	pkt := func(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }
	f.Add(false, []byte(uploadRequest(live)))
	f.Add(false, []byte(pkt("want "+draft+" multi_ack_detailed no-done side-band-64k thin-pack ofs-delta deepen-since deepen-not agent=git/2.39.5\n")+"0000"+pkt("have "+live+"\n")+"0000"))
	f.Add(false, []byte(pkt("want "+live+" side-band-64k shallow\n")+pkt("deepen 1\n")+"0000"))
	f.Add(false, []byte(pkt("want "+live+"\n")+pkt("deepen-since 1700000000\n")+"0000"+pkt("done\n")))
	f.Add(false, []byte("0000"))
	f.Add(true, []byte(pkt(draft+" "+live+" refs/heads/draft/2\x00report-status side-band-64k\n")+"0000"))
	f.Add(true, []byte(pkt(live+" "+strings.Repeat("0", 40)+" refs/heads/main\x00report-status\n")+"0000"))
	f.Add(true, []byte(pkt(draft+" "+live+" refs/heads/draft/2\x00report-status\n")+"0000PACK\x00\x00\x00\x02\x00\x00\x00\x01garbage"))
	before := versionStates(f, fx)
	repo := fx.repo()
	f.Fuzz(func(t *testing.T, push bool, body []byte) {
		service := quire.GitUploadPack
		if push {
			service = quire.GitReceivePack
		}
		req, err := http.NewRequest("POST", e.URL+"/git/demo/skills/pdf.git/"+service, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-"+service+"-request")
		req.SetBasicAuth("git", e.Admin)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		switch res.StatusCode {
		case http.StatusOK:
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			if !bytes.HasPrefix(out, []byte(`{"error":`)) {
				t.Fatalf("%s: %d answer is not an APIError: %.300q", service, res.StatusCode, out)
			}
		default:
			t.Fatalf("%s: status %d for body %.200q: %.300q", service, res.StatusCode, body, out)
		}
		after := versionStates(t, fx)
		accepted := push && bytes.Contains(out, []byte("ok refs/heads/draft/2"))
		for n, st := range after {
			if before[n] != st && !(accepted && n == 2) {
				t.Fatalf("%s answered %d, yet version %d went from %q to %q: %.300q", service, res.StatusCode, n, before[n], st, out)
			}
		}
		if accepted {
			before = after
		}
		if m, _ := filepath.Glob(filepath.Join(repo, "incoming-*")); len(m) > 0 {
			t.Fatalf("quarantine left behind: %v", m)
		}
	})
	fx.fsck()
}

// versionStates is each version's state and commit, by number.
func versionStates(t testing.TB, fx *gitFixture) map[int]string {
	t.Helper()
	a, err := fx.e.Store.Asset(t.Context(), quire.KindSkill, fx.sid)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := fx.e.Store.Versions(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	m := map[int]string{}
	for _, v := range vs {
		m[v.Number] = string(v.State) + " " + v.Commit
	}
	return m
}

// TestWriteGitFuzzSeeds captures what the real git client sends to quire
// (clone, shallow clone, fetch with haves, push with a pack) from the
// fixed-clock fixture FuzzGitEndpoints uses, and writes each request as a
// seed for it and for gitstore's targets. It runs only when asked:
//
//	QUIRE_WRITE_FUZZ_SEEDS=1 go test -run TestWriteGitFuzzSeeds ./httpapi
func TestWriteGitFuzzSeeds(t *testing.T) {
	if os.Getenv("QUIRE_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set QUIRE_WRITE_FUZZ_SEEDS=1 to capture the git fuzz seeds")
	}
	fx := newGitFuzzFixture(t)
	var captured []gitRequest
	proxy := httptest.NewServer(recordGit(t, fx.e.URL, &captured))
	defer proxy.Close()
	u, _ := url.Parse(proxy.URL + "/git/demo/skills/pdf.git")
	u.User = url.UserPassword("git", fx.e.Admin)
	g := fx.g
	g.env = append(g.env, "GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z")
	dir := t.TempDir()
	g.must(dir, "clone", "-q", u.String(), "full")
	g.must(dir, "clone", "-q", "--depth", "1", "-b", "draft/2", u.String(), "shallow")
	g.must(filepath.Join(dir, "shallow"), "fetch", "-q", "--unshallow")
	fuzzFixtureChange(fx)
	g.must(filepath.Join(dir, "full"), "fetch", "-q", "origin")
	w := filepath.Join(dir, "full")
	g.must(w, "checkout", "-q", "-b", "draft/2", "origin/draft/2")
	g.commitFile(w, "pushed.md", "pushed over git\n")
	g.must(w, "push", "-q", "origin", "draft/2")
	g.commitFile(w, "atomic.md", "pushed with --atomic\n")
	g.must(w, "push", "-q", "--atomic", "origin", "HEAD:refs/heads/draft/2")
	// Refused pushes: main, a tag, a deletion, a draft that does not exist.
	g.fails(w, "push", "-q", "origin", "HEAD:main")
	g.must(w, "tag", "v9")
	g.fails(w, "push", "-q", "origin", "v9")
	g.fails(w, "push", "-q", "origin", ":draft/2")
	g.fails(w, "push", "-q", "origin", "HEAD:draft/7")

	root := filepath.Join("..")
	for i, r := range captured {
		name := fmt.Sprintf("git-%02d-%s", i, r.service)
		push := r.service == quire.GitReceivePack
		writeSeed(t, filepath.Join("testdata", "fuzz", "FuzzGitEndpoints", name), "bool("+strconv.FormatBool(push)+")", r.body)
		target := "FuzzUploadRequest"
		if push {
			target = "FuzzReceivePack"
			writeSeed(t, filepath.Join(root, "gitproto", "testdata", "fuzz", "FuzzPushCommands", name), r.body)
		}
		writeSeed(t, filepath.Join(root, "gitproto", "testdata", "fuzz", target, name), r.body)
	}
	t.Logf("wrote %d captured requests", len(captured))
}

type gitRequest struct {
	service string
	body    []byte
}

// recordGit forwards every request to upstream, recording the bodies of
// upload-pack and receive-pack requests ungzipped.
func recordGit(t *testing.T, upstream string, into *[]gitRequest) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
			r.Header.Del("Content-Encoding")
		}
		if svc := filepath.Base(r.URL.Path); svc == quire.GitUploadPack || svc == quire.GitReceivePack {
			*into = append(*into, gitRequest{svc, body})
		}
		req, _ := http.NewRequest(r.Method, upstream+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		io.Copy(w, res.Body)
	})
}

// writeSeed writes one corpus file in Go's fuzz format: a bool line when
// given, then the body.
func writeSeed(t *testing.T, path string, args ...any) {
	t.Helper()
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		switch v := a.(type) {
		case string:
			b.WriteString(v + "\n")
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGitFuzzSeedsMatchFixture replays the captured push on the fuzz
// fixture: it must be accepted, or the fixture changed and the seeds no
// longer reach past the first checks (capture them again).
func TestGitFuzzSeedsMatchFixture(t *testing.T) {
	fx := newGitFuzzFixture(t)
	fuzzFixtureChange(fx)
	seed, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzGitEndpoints", "git-06-git-receive-pack"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(seed), "\n")
	body, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[2], "[]byte("), ")"))
	if err != nil {
		t.Fatal(err)
	}
	r := fx.e.Do("POST", "/git/demo/skills/pdf.git/git-receive-pack", fx.e.Admin, body, "Content-Type: application/x-git-receive-pack-request")
	if r.Status != 200 || !strings.Contains(string(r.Body), "ok refs/heads/draft/2") {
		t.Fatalf("captured push: status %d, report %q", r.Status, r.Body)
	}
	fx.fsck()
}
