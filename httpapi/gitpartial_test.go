package httpapi_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// withProtocol returns a client that speaks git protocol version v
// (GIT_CONFIG_* environment: protocol.version=v).
func (g *gitClient) withProtocol(v string) *gitClient {
	c := *g
	c.env = append(slices.Clip(g.env), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=protocol.version", "GIT_CONFIG_VALUE_0="+v)
	return &c
}

// types lists the object types a clone holds (not fetching any).
func (g *gitClient) types(w string) []string {
	g.t.Helper()
	var out []string
	for _, l := range strings.Split(g.must(w, "cat-file", "--batch-all-objects", "--batch-check=%(objecttype)"), "\n") {
		switch l {
		case "commit", "tree", "blob", "tag":
			out = append(out, l)
		} // else git's warning that the repository has promisor remotes
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// newDraft opens a new draft of the skill and returns its number.
func (f *gitFixture) newDraft() int {
	f.t.Helper()
	r := f.e.Must(201, "POST", "/v1/skills/pdf/versions", f.e.Admin, nil)
	return int(r.JSON(f.t)["version"].(map[string]any)["version"].(float64))
}

// missing lists the objects a partial clone lacks.
func (g *gitClient) missing(w string) []string {
	g.t.Helper()
	var out []string
	for _, l := range strings.Split(g.must(w, "rev-list", "--objects", "--all", "--missing=print"), "\n") {
		if h, ok := strings.CutPrefix(l, "?"); ok {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// partialFixture is the git fixture with v2 published (live), changing
// scripts/run.py and adding big.md (200 bytes), and v1 as the older tag.
func partialFixture(t *testing.T) (*gitFixture, map[string]string) {
	f := newGitFixture(t)
	f.upsert(2, "scripts/run.py", "print(2)\n")
	f.upsert(2, "big.md", strings.Repeat("b", 199)+"\n")
	f.upsert(2, "SKILL.md", testenv.SkillManifest("pdf"))
	f.e.Must(200, "POST", "/v1/skills/pdf/versions/2/publish", f.e.Admin, nil)
	blob := func(spec string) string { return testenv.Git(t, f.repo(), "rev-parse", spec) }
	return f, map[string]string{
		"big":      blob("v2:big.md"),
		"run1":     blob("v1:scripts/run.py"),
		"run2":     blob("v2:scripts/run.py"),
		"root1":    blob("v1^{tree}"),
		"root2":    blob("v2^{tree}"),
		"notes":    blob("v2:notes.md"),
		"skill":    blob("v1:SKILL.md"),
		"scripts1": blob("v1:scripts"),
	}
}

// TestGitPartialClone clones with each filter quire supports, over
// protocol v0 and v2, and checks what the clone lacks and that checking
// out an older version fetches it lazily.
func TestGitPartialClone(t *testing.T) {
	f, obj := partialFixture(t)
	for _, proto := range []string{"0", "2"} {
		g := f.g.withProtocol(proto)
		clone := func(t *testing.T, args ...string) string {
			dir := t.TempDir()
			g.must(dir, append(append([]string{"-c", "transfer.fsckObjects=true", "clone", "-q", "--no-checkout"}, args...), g.url(f.e.Admin, "demo/skills/pdf.git"), "w")...)
			return filepath.Join(dir, "w")
		}
		t.Run("v"+proto+"/blob:none then checkout of an older tag", func(t *testing.T) {
			w := clone(t, "--filter=blob:none")
			miss := g.missing(w)
			for _, k := range []string{"big", "run1", "run2", "notes", "skill"} {
				if !slices.Contains(miss, obj[k]) {
					t.Errorf("blob %s (%s) was sent; blob:none should leave it out (missing %v)", k, obj[k], miss)
				}
			}
			for _, k := range []string{"root1", "root2"} {
				if slices.Contains(miss, obj[k]) {
					t.Errorf("tree %s missing; blob:none sends every tree", k)
				}
			}
			// Lazy fetches: wants of blobs, no haves.
			g.must(w, "-c", "transfer.fsckObjects=true", "checkout", "-q", "v1")
			if got := readFile(t, filepath.Join(w, "scripts", "run.py")); got != "print(1)\n" {
				t.Errorf("v1 run.py = %q", got)
			}
			g.must(w, "checkout", "-q", "main")
			if got := readFile(t, filepath.Join(w, "scripts", "run.py")); got != "print(2)\n" {
				t.Errorf("main run.py = %q", got)
			}
			g.must(w, "fsck")
			// A later fetch of a partial clone stays partial.
			n := f.newDraft()
			f.upsert(n, "later.md", "later\n")
			g.must(w, "fetch", "-q")
			later := testenv.Git(t, f.repo(), "rev-parse", fmt.Sprintf("draft/%d:later.md", n))
			if !slices.Contains(g.missing(w), later) {
				t.Error("a fetch into a blob:none clone sent a blob")
			}
			if got := g.must(w, "show", fmt.Sprintf("origin/draft/%d:later.md", n)); got != "later" {
				t.Errorf("later.md = %q", got)
			}
			g.must(w, "fsck")
		})
		t.Run("v"+proto+"/blob:limit", func(t *testing.T) {
			w := clone(t, "--filter=blob:limit=100")
			if miss := g.missing(w); !slices.Equal(miss, []string{obj["big"]}) {
				t.Errorf("blob:limit=100 left out %v, want only big.md %s", miss, obj["big"])
			}
			g.must(w, "checkout", "-q", "main")
			if got := readFile(t, filepath.Join(w, "big.md")); len(got) != 200 {
				t.Errorf("big.md has %d bytes", len(got))
			}
			g.must(w, "fsck")
			// 1k is 1024 bytes, as git counts: nothing is left out.
			if miss := g.missing(clone(t, "--filter=blob:limit=1k")); len(miss) != 0 {
				t.Errorf("blob:limit=1k left out %v", miss)
			}
			// Blobs of exactly n bytes are left out, as git does.
			if miss := g.missing(clone(t, "--filter=blob:limit=200")); !slices.Equal(miss, []string{obj["big"]}) {
				t.Errorf("blob:limit=200 left out %v, want only big.md", miss)
			}
		})
		t.Run("v"+proto+"/tree:0", func(t *testing.T) {
			w := clone(t, "--filter=tree:0")
			if got := g.types(w); !slices.Equal(got, []string{"commit", "tag"}) {
				t.Errorf("tree:0 sent %v, want commits and tags only", got)
			}
			if miss := g.missing(w); !slices.Contains(miss, obj["root1"]) || !slices.Contains(miss, obj["root2"]) {
				t.Errorf("root trees not missing: %v", miss)
			}
			g.must(w, "checkout", "-q", "v1")
			if got := readFile(t, filepath.Join(w, "scripts", "run.py")); got != "print(1)\n" {
				t.Errorf("v1 run.py = %q", got)
			}
			g.must(w, "fsck")
		})
		t.Run("v"+proto+"/tree:1", func(t *testing.T) {
			// Root trees only: blobs, even at the root, and subtrees are left out.
			w := clone(t, "--filter=tree:1")
			if got := g.types(w); !slices.Equal(got, []string{"commit", "tag", "tree"}) {
				t.Errorf("tree:1 sent %v, want commits, tags and trees", got)
			}
			miss := g.missing(w)
			if slices.Contains(miss, obj["root1"]) || !slices.Contains(miss, obj["skill"]) || !slices.Contains(miss, obj["scripts1"]) {
				t.Errorf("tree:1 left out %v", miss)
			}
			// tree:2 adds what is directly in a root: SKILL.md and scripts/, not run.py.
			miss = g.missing(clone(t, "--filter=tree:2"))
			if slices.Contains(miss, obj["skill"]) || slices.Contains(miss, obj["scripts1"]) || !slices.Contains(miss, obj["run1"]) {
				t.Errorf("tree:2 left out %v", miss)
			}
		})
		t.Run("v"+proto+"/unsupported filters are refused", func(t *testing.T) {
			for _, spec := range []string{"sparse:oid=main:SKILL.md", "object:type=blob", "combine:blob:none+tree:1"} {
				out := g.fails(t.TempDir(), "clone", "--filter="+spec, g.url(f.e.Admin, "demo/skills/pdf.git"), "w")
				if !strings.Contains(out, "is not supported: quire supports the filters blob:none, blob:limit=<n> and tree:<depth>") {
					t.Errorf("--filter=%s: git printed\n%s", spec, out)
				}
			}
		})
		t.Run("v"+proto+"/shallow and filtered", func(t *testing.T) {
			w := clone(t, "--depth=1", "--filter=blob:none")
			if n := g.must(w, "rev-list", "--count", "HEAD"); n != "1" {
				t.Errorf("depth 1 clone has %s commits", n)
			}
			if miss := g.missing(w); !slices.Contains(miss, obj["run2"]) || slices.Contains(miss, obj["run1"]) {
				t.Errorf("missing %v: want v2's blobs (only the tip's are known)", miss)
			}
			g.must(w, "checkout", "-q", "main")
			if got := readFile(t, filepath.Join(w, "scripts", "run.py")); got != "print(2)\n" {
				t.Errorf("run.py = %q", got)
			}
			g.must(w, "fsck")
		})
	}
	f.fsck()
}

// TestGitWantReachableObjects: a blob or tree reachable from an advertised
// ref may be wanted; one only the hidden refs reach may not.
func TestGitWantReachableObjects(t *testing.T) {
	f, obj := partialFixture(t)
	ask := func(want string) *testenv.Response {
		return f.e.Do("POST", "/git/demo/skills/pdf.git/git-upload-pack", f.e.Admin, uploadRequest(want), "Content-Type: application/x-git-upload-pack-request")
	}
	for _, k := range []string{"run1", "root1", "big"} {
		r := ask(obj[k])
		if r.Status != 200 || !strings.Contains(string(r.Body), "PACK") || strings.Contains(string(r.Body), "ERR") {
			t.Errorf("want %s: status %d, body %.80q", k, r.Status, r.Body)
		}
	}
	hidden := testenv.Git(t, f.repo(), "rev-parse", "refs/quire/versions^{tree}")
	if r := ask(hidden); !strings.Contains(string(r.Body), "ERR upload-pack: not our ref "+hidden) {
		t.Errorf("hidden tree: body %q", r.Body)
	}
	f.fsck()
}

// pkt frames lines as pkt-lines.
func pkt(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		switch l {
		case "0000", "0001":
			b.WriteString(l)
		default:
			fmt.Fprintf(&b, "%04x%s", len(l)+4, l)
		}
	}
	return b.String()
}

// TestGitProtocolV2 checks the v2 capability advertisement and ls-refs
// as bytes, then git itself over v2 and v0.
func TestGitProtocolV2(t *testing.T) {
	f, _ := partialFixture(t)
	e := f.e
	live := f.version(2)["commit"].(string)
	v1 := f.version(1)["commit"].(string)
	v2proto := "Git-Protocol: version=2"

	t.Run("advertisement", func(t *testing.T) {
		r := e.Do("GET", "/git/demo/skills/pdf.git/info/refs?service=git-upload-pack", e.Admin, nil, v2proto)
		want := pkt("version 2\n", "agent=quire/1\n", "ls-refs\n", "fetch=shallow filter\n", "object-format=sha1\n", "0000")
		if r.Status != 200 || string(r.Body) != want {
			t.Errorf("status %d, body %q, want %q", r.Status, r.Body, want)
		}
		if got := r.Header.Get("Vary"); got != "Git-Protocol" {
			t.Errorf("Vary %q", got)
		}
		// Without the header (or for a push), the v0 refs.
		r = e.Do("GET", "/git/demo/skills/pdf.git/info/refs?service=git-receive-pack", e.Admin, nil, v2proto)
		if !strings.HasPrefix(string(r.Body), "001f# service=git-receive-pack\n") {
			t.Errorf("receive-pack over v2 header: %q", r.Body[:40])
		}
	})

	lsRefs := func(args ...string) *testenv.Response {
		body := pkt(append(append([]string{"command=ls-refs\n", "agent=test\n", "object-format=sha1\n", "0001"}, args...), "0000")...)
		return e.Do("POST", "/git/demo/skills/pdf.git/git-upload-pack", e.Admin, body, v2proto, "Content-Type: application/x-git-upload-pack-request")
	}
	t.Run("ls-refs with ref-prefix, peel and symrefs", func(t *testing.T) {
		tag1 := testenv.Git(t, f.repo(), "rev-parse", "refs/tags/v1")
		tag2 := testenv.Git(t, f.repo(), "rev-parse", "refs/tags/v2")
		r := lsRefs("peel\n", "symrefs\n", "ref-prefix HEAD\n", "ref-prefix refs/tags/\n")
		want := pkt(live+" HEAD symref-target:refs/heads/main\n",
			tag1+" refs/tags/v1 peeled:"+v1+"\n",
			tag2+" refs/tags/v2 peeled:"+live+"\n", "0000")
		if r.Status != 200 || string(r.Body) != want {
			t.Errorf("status %d\n got %q\nwant %q", r.Status, r.Body, want)
		}
		r = lsRefs("ref-prefix refs/heads/main\n")
		if want := pkt(live+" refs/heads/main\n", "0000"); string(r.Body) != want {
			t.Errorf("got %q, want %q", r.Body, want)
		}
	})
	t.Run("bad v2 requests are 400", func(t *testing.T) {
		for name, body := range map[string]string{
			"unknown command":  pkt("command=object-info\n", "0000"),
			"bad argument":     pkt("command=ls-refs\n", "0001", "frobnicate\n", "0000"),
			"sha256":           pkt("command=ls-refs\n", "object-format=sha256\n", "0000"),
			"fetch no want":    pkt("command=fetch\n", "0001", "done\n", "0000"),
			"fetch bad want":   pkt("command=fetch\n", "0001", "want zz\n", "0000"),
			"unterminated":     pkt("command=ls-refs\n"),
			"response-end pkt": "0002",
		} {
			r := e.Do("POST", "/git/demo/skills/pdf.git/git-upload-pack", e.Admin, body, v2proto, "Content-Type: application/x-git-upload-pack-request")
			if r.Status != 400 || r.JSON(t)["code"] == nil {
				t.Errorf("%s: status %d, body %s", name, r.Status, r.Body)
			}
		}
	})

	trace := func(g *gitClient) *gitClient {
		c := *g
		c.env = append(slices.Clip(g.env), "GIT_TRACE_PACKET=1")
		return &c
	}
	t.Run("git ls-remote with a prefix over v2 sends ref-prefix", func(t *testing.T) {
		out := trace(f.g.withProtocol("2")).must(t.TempDir(), "ls-remote", "--tags", f.g.url(e.Admin, "demo/skills/pdf.git"))
		if !strings.Contains(out, "> ref-prefix refs/tags/") || !strings.Contains(out, "git< version 2") {
			t.Errorf("no v2 ls-refs in the trace:\n%s", out)
		}
		if strings.Contains(out, "refs/heads/draft") {
			t.Errorf("ls-refs sent refs outside the prefix:\n%s", out)
		}
		if !strings.Contains(out, live+"\trefs/tags/v2^{}") {
			t.Errorf("ls-remote --tags lacks the peeled v2:\n%s", out)
		}
	})
	for _, proto := range []string{"0", "2"} {
		g := f.g.withProtocol(proto)
		t.Run("v"+proto+" clone, fetch and shallow", func(t *testing.T) {
			dir := t.TempDir()
			out := trace(g).must(dir, "-c", "transfer.fsckObjects=true", "clone", "-q", g.url(e.Admin, "demo/skills/pdf.git"), "w")
			if used := strings.Contains(out, "> command=fetch"); used != (proto == "2") {
				t.Errorf("protocol.version=%s: v2 fetch used: %v", proto, used)
			}
			w := filepath.Join(dir, "w")
			if got := g.must(w, "rev-parse", "HEAD"); got != live {
				t.Errorf("HEAD %s, want %s", got, live)
			}
			g.must(w, "fsck", "--strict")
			n := f.newDraft()
			draft := fmt.Sprintf("draft/%d", n)
			tip := f.upsert(n, "n.md", "protocol "+proto+"\n")
			out = g.must(w, "fetch", "--progress")
			if got := g.must(w, "rev-parse", "origin/"+draft); got != tip {
				t.Errorf("origin/%s = %s, want %s", draft, got, tip)
			}
			// The draft's first commit (v2's tree) and the upsert's commit,
			// root tree and blob.
			if n := sent(t, out); n != 4 {
				t.Errorf("incremental fetch sent %d objects, want 4", n)
			}
			// Shallow, then deepen, then unshallow.
			s := filepath.Join(t.TempDir(), "s")
			g.must(filepath.Dir(s), "clone", "-q", "--depth=1", "-b", draft, g.url(e.Admin, "demo/skills/pdf.git"), s)
			if n := g.must(s, "rev-list", "--count", "HEAD"); n != "1" {
				t.Errorf("depth 1 clone has %s commits", n)
			}
			g.must(s, "fetch", "-q", "--deepen=1")
			if n := g.must(s, "rev-list", "--count", "HEAD"); n != "2" {
				t.Errorf("after --deepen=1: %s commits", n)
			}
			g.must(s, "fetch", "-q", "--unshallow")
			if n, full := g.must(s, "rev-list", "--count", "HEAD"), testenv.Git(t, f.repo(), "rev-list", "--count", draft); n != full {
				t.Errorf("after --unshallow: %s commits, want %s", n, full)
			}
			g.must(s, "fsck", "--strict")
			out = g.fails(t.TempDir(), "clone", "--shallow-since=2000-01-01", g.url(e.Admin, "demo/skills/pdf.git"), "w")
			// v0 does not advertise deepen-since, so git refuses itself;
			// v2 has it with shallow, and quire answers with ERR.
			if !strings.Contains(out, "not --shallow-since") && !strings.Contains(out, "Server does not support --shallow-since") {
				t.Errorf("--shallow-since: %s", out)
			}
		})
	}
	f.fsck()
}
