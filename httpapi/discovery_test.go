package httpapi_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/skillpack"
)

// archiveFixture is the git fixture with draft 2 made executable by a
// push (scripts/run.py 100755) and published: the live version.
func archiveFixture(t *testing.T) *gitFixture {
	f := newGitFixture(t)
	w := f.clone(f.e.Admin)
	f.g.must(w, "checkout", "-q", "draft/2")
	f.g.must(w, "update-index", "--chmod=+x", "scripts/run.py")
	f.g.must(w, "commit", "-q", "-m", "run.py is executable")
	f.g.must(w, "push", "-q", "origin", "draft/2")
	f.e.Must(200, "POST", "/v1/skills/pdf/versions/2/publish", f.e.Admin, nil)
	return f
}

type archiveEntry struct {
	name string
	mode int64
	time time.Time
	body string
}

func zipEntries(t *testing.T, b []byte) []archiveEntry {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out []archiveEntry
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(rc)
		rc.Close()
		out = append(out, archiveEntry{f.Name, int64(f.Mode().Perm()), f.Modified.UTC(), string(body)})
	}
	return out
}

func tarEntries(t *testing.T, b []byte) []archiveEntry {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out []archiveEntry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		out = append(out, archiveEntry{h.Name, h.Mode, h.ModTime.UTC(), string(body)})
	}
}

func TestSkillArchives(t *testing.T) {
	f := archiveFixture(t)
	e := f.e
	commit := f.version(2)["commit"].(string)
	unix, err := strconv.ParseInt(testenv.Git(t, f.repo(), "show", "-s", "--format=%ct", commit), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Unix(unix, 0).UTC()
	want := []archiveEntry{
		{"SKILL.md", 0o644, when, testenv.SkillManifest("pdf")},
		{"notes.md", 0o644, when, "draft two\n"},
		{"scripts/run.py", 0o755, when, "print(1)\n"},
	}
	for _, c := range []struct {
		ext, ct string
		read    func(*testing.T, []byte) []archiveEntry
	}{
		{"zip", "application/zip", zipEntries},
		{"tar.gz", "application/gzip", tarEntries},
	} {
		t.Run(c.ext, func(t *testing.T) {
			a := e.Must(200, "GET", "/v1/skills/pdf/versions/2/archive."+c.ext, e.Admin, nil)
			// The same bytes again, and for "live" (version 2 is live).
			b := e.Must(200, "GET", "/v1/skills/pdf/versions/2/archive."+c.ext, e.Admin, nil)
			live := e.Must(200, "GET", "/v1/skills/"+f.sid+"/versions/live/archive."+c.ext, e.Admin, nil)
			if !bytes.Equal(a.Body, b.Body) || !bytes.Equal(a.Body, live.Body) {
				t.Fatal("the same version gave different archive bytes")
			}
			sum := sha256.Sum256(a.Body)
			if got, want := a.Header.Get("ETag"), `"sha256:`+hex.EncodeToString(sum[:])+`"`; got != want {
				t.Errorf("ETag %s, want %s", got, want)
			}
			if got, want := a.Header.Get("Repr-Digest"), "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":"; got != want {
				t.Errorf("Repr-Digest %s, want %s", got, want)
			}
			if ct := a.Header.Get("Content-Type"); ct != c.ct {
				t.Errorf("Content-Type %s, want %s", ct, c.ct)
			}
			got := c.read(t, a.Body)
			if len(got) != len(want) {
				t.Fatalf("entries %+v, want %+v", got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
				}
			}
			e.Must(304, "GET", "/v1/skills/pdf/versions/2/archive."+c.ext, e.Admin, nil, "If-None-Match: "+a.Header.Get("ETag"))
			h := e.Must(200, "HEAD", "/v1/skills/pdf/versions/2/archive."+c.ext, e.Admin, nil)
			if h.Header.Get("ETag") != a.Header.Get("ETag") || len(h.Body) != 0 {
				t.Errorf("HEAD: ETag %s, %d body bytes", h.Header.Get("ETag"), len(h.Body))
			}
			// Version 1 differs (no notes.md, run.py not executable).
			v1 := e.Must(200, "GET", "/v1/skills/pdf/versions/1/archive."+c.ext, e.Admin, nil)
			if bytes.Equal(v1.Body, a.Body) {
				t.Error("versions 1 and 2 gave the same archive")
			}
		})
	}
}

func TestSkillArchiveBadInput(t *testing.T) {
	f := archiveFixture(t)
	e := f.e
	for _, c := range []struct {
		path   string
		status int
		msg    string
	}{
		{"/v1/skills/pdf/versions/0/archive.zip", 400, "version"},
		{"/v1/skills/pdf/versions/-1/archive.zip", 400, "version"},
		{"/v1/skills/pdf/versions/Bad%20Label/archive.zip", 400, "version"},
		{"/v1/skills/pdf/versions/99/archive.zip", 404, "not found"},
		{"/v1/skills/pdf/versions/stable/archive.tar.gz", 404, "label"},
		{"/v1/skills/nope/versions/1/archive.zip", 404, "not found"},
	} {
		wantError(t, e.Do("GET", c.path, e.Admin, nil), c.status, c.msg)
	}
	// A skill with no live version has no live archive.
	pid := e.CreateProject(e.Admin, "empty")
	e.CreateSkill(e.Admin, pid, "unpublished")
	wantError(t, e.Do("GET", "/v1/skills/unpublished/versions/live/archive.zip", e.Admin, nil), 404, "live")
}

type indexDoc struct {
	Schema string `json:"$schema"`
	Skills []struct {
		Name        string `json:"name"`
		Type        string `json:"type"`
		Description string `json:"description"`
		URL         string `json:"url"`
		Digest      string `json:"digest"`
	} `json:"skills"`
}

// indexV1 is the v0.1 form of /.well-known/skills/index.json.
type indexV1 struct {
	Skills []struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Files       []string `json:"files"`
	} `json:"skills"`
}

// publishSkill makes skill slug in project pid with files, published.
func publishSkill(t *testing.T, e *testenv.Env, pid, slug, desc string, files map[string]string) string {
	t.Helper()
	id := e.CreateSkill(e.Admin, pid, slug)
	e.Must(201, "POST", "/v1/skills/"+id+"/versions", e.Admin, nil)
	manifest := "---\nname: " + slug + "\ndescription: " + desc + "\n---\n# " + slug + "\n"
	e.Must(200, "POST", "/v1/skills/"+id+"/versions/1/files", e.Admin, map[string]string{"file_path": "SKILL.md", "content": manifest})
	for p, c := range files {
		e.Must(200, "POST", "/v1/skills/"+id+"/versions/1/files", e.Admin, map[string]string{"file_path": p, "content": c})
	}
	e.Must(200, "POST", "/v1/skills/"+id+"/versions/1/publish", e.Admin, nil)
	return id
}

// checkIndex verifies an index as the RFC v0.2.0 client does: the
// $schema, each artifact fetched from its url (path-absolute) with its
// bytes matching the digest, a skill-md artifact being SKILL.md at
// base/{name}/SKILL.md and an archive a .tar.gz with SKILL.md at its
// root.
func checkIndex(t *testing.T, e *testenv.Env, token, base string, idx indexDoc) {
	t.Helper()
	if idx.Schema != "https://schemas.agentskills.io/discovery/0.2.0/schema.json" {
		t.Errorf("$schema %q", idx.Schema)
	}
	for _, s := range idx.Skills {
		r := e.Must(200, "GET", s.URL, token, nil)
		if d := skillpack.Digest(r.Body); d != s.Digest {
			t.Errorf("%s: artifact digest %s, index %s", s.Name, d, s.Digest)
		}
		switch s.Type {
		case "skill-md":
			if s.URL != base+"/"+s.Name+"/SKILL.md" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/markdown") {
				t.Errorf("%s: skill-md at %s as %s", s.Name, s.URL, r.Header.Get("Content-Type"))
			}
		case "archive":
			if !strings.HasSuffix(s.URL, ".tar.gz") || r.Header.Get("Content-Type") != "application/gzip" {
				t.Errorf("%s: archive at %s as %s", s.Name, s.URL, r.Header.Get("Content-Type"))
			}
			if ents := tarEntries(t, r.Body); len(ents) < 2 || ents[0].name != "SKILL.md" {
				t.Errorf("%s: archive entries %v", s.Name, ents)
			}
		default:
			t.Errorf("%s: type %q", s.Name, s.Type)
		}
	}
}

func TestDiscoveryIndex(t *testing.T) {
	e := newEnv(t)
	older := e.CreateProject(e.Admin, "older")
	newer := e.CreateProject(e.Admin, "newer")
	publishSkill(t, e, older, "pdf-tools", "Old PDF tools.", map[string]string{"scripts/fill.py": "print(1)\n"})
	publishSkill(t, e, newer, "pdf-tools", "New PDF tools.", nil)
	publishSkill(t, e, newer, "code-review", "Review code.", map[string]string{"references/a.md": "# A\n"})
	e.CreateSkill(e.Admin, newer, "unpublished") // no live version: not listed

	r := e.Must(200, "GET", "/.well-known/agent-skills/index.json", e.Admin, nil)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %s", ct)
	}
	var idx indexDoc
	r.Decode(t, &idx)
	if len(idx.Skills) != 2 || idx.Skills[0].Name != "code-review" || idx.Skills[1].Name != "pdf-tools" {
		t.Fatalf("skills %+v", idx.Skills)
	}
	// The older project's pdf-tools wins, its files served: SKILL.md and
	// a script make an archive.
	if d := idx.Skills[1].Description; d != "Old PDF tools." || idx.Skills[1].Type != "archive" {
		t.Errorf("pdf-tools %+v: the older project's must win", idx.Skills[1])
	}
	checkIndex(t, e, e.Admin, "/.well-known/agent-skills", idx)
	e.Must(200, "GET", "/.well-known/agent-skills/pdf-tools/scripts/fill.py", e.Admin, nil)
	e.Must(200, "HEAD", "/.well-known/agent-skills/index.json", e.Admin, nil)
	e.Must(200, "HEAD", "/.well-known/agent-skills/pdf-tools/SKILL.md", e.Admin, nil)

	// One project's index.
	var pidx indexDoc
	e.Must(200, "GET", "/v1/projects/newer/agent-skills/index.json", e.Admin, nil).Decode(t, &pidx)
	if len(pidx.Skills) != 2 || pidx.Skills[1].Name != "pdf-tools" || pidx.Skills[1].Description != "New PDF tools." || pidx.Skills[1].Type != "skill-md" {
		t.Fatalf("project index %+v", pidx.Skills)
	}
	if u := pidx.Skills[1].URL; u != "/v1/projects/"+newer+"/agent-skills/pdf-tools/SKILL.md" {
		t.Errorf("skill-md url %s", u)
	}
	checkIndex(t, e, e.Admin, "/v1/projects/"+newer+"/agent-skills", pidx)

	// A member of one project sees that project's skills only.
	uid, member := e.CreateUser("member@example.com")
	e.Must(200, "POST", "/v1/projects/newer/members", e.Admin, map[string]string{"user_id": uid, "role": "viewer"})
	var midx indexDoc
	e.Must(200, "GET", "/.well-known/agent-skills/index.json", member, nil).Decode(t, &midx)
	if len(midx.Skills) != 2 || midx.Skills[1].Description != "New PDF tools." {
		t.Fatalf("member index %+v", midx.Skills)
	}
	checkIndex(t, e, member, "/.well-known/agent-skills", midx)

	for _, c := range []struct {
		path   string
		status int
	}{
		{"/.well-known/agent-skills/pdf-tools/missing.md", 404},
		{"/.well-known/agent-skills/nope/SKILL.md", 404},
		{"/.well-known/agent-skills/unpublished/SKILL.md", 404},
		{"/.well-known/agent-skills/Bad--name/SKILL.md", 404},
		{"/.well-known/agent-skills/pdf-tools/../x", 400},
		{"/v1/projects/nope/agent-skills/index.json", 404},
		{"/v1/projects/older/agent-skills/code-review/SKILL.md", 404},
	} {
		if r := e.Do("GET", c.path, e.Admin, nil); r.Status != c.status {
			t.Errorf("GET %s: %d, want %d\n%s", c.path, r.Status, c.status, r.Body)
		}
	}
}

// TestDiscoveryV1 is the v0.1 path and form that older installers ask,
// requested as such a client does: the index, then each listed file
// under /.well-known/skills/{name}/.
func TestDiscoveryV1(t *testing.T) {
	e := newEnv(t)
	pid := e.CreateProject(e.Admin, "demo")
	publishSkill(t, e, pid, "pdf-tools", "PDF tools.", map[string]string{"scripts/fill.py": "print(1)\n", "references/a.md": "# A\n"})
	var idx indexV1
	r := e.Must(200, "GET", "/.well-known/skills/index.json", e.Admin, nil, "Accept: application/json")
	r.Decode(t, &idx)
	if strings.Contains(string(r.Body), "$schema") {
		t.Errorf("the v0.1 index has a $schema: %s", r.Body)
	}
	if len(idx.Skills) != 1 || idx.Skills[0].Name != "pdf-tools" || idx.Skills[0].Description != "PDF tools." ||
		strings.Join(idx.Skills[0].Files, ",") != "SKILL.md,references/a.md,scripts/fill.py" {
		t.Fatalf("v0.1 index %s", r.Body)
	}
	for _, f := range idx.Skills[0].Files {
		e.Must(200, "GET", "/.well-known/skills/pdf-tools/"+f, e.Admin, nil)
	}
	wantError(t, e.Do("GET", "/.well-known/skills/pdf-tools/nope.md", e.Admin, nil), 404)
	e.Must(200, "HEAD", "/.well-known/skills/index.json", e.Admin, nil)
}

// TestDiscoveryCaching: indexes, files and archives carry an ETag and
// Cache-Control, revalidate with 304, and only anonymous answers (of a
// public project) are shared-cacheable and readable from any origin.
func TestDiscoveryCaching(t *testing.T) {
	e := newEnv(t)
	pid := e.CreateProject(e.Admin, "demo")
	id := publishSkill(t, e, pid, "pdf-tools", "PDF tools.", map[string]string{"scripts/fill.py": "print(1)\n"})
	paths := []string{
		"/.well-known/agent-skills/index.json",
		"/.well-known/agent-skills/pdf-tools/SKILL.md",
		"/.well-known/skills/index.json",
		"/.well-known/skills/pdf-tools/scripts/fill.py",
		"/v1/projects/demo/agent-skills/index.json",
		"/v1/skills/" + id + "/versions/1/archive.tar.gz",
	}
	for _, p := range paths {
		r := e.Must(200, "GET", p, e.Admin, nil, "Origin: https://elsewhere.example")
		etag := r.Header.Get("ETag")
		if etag == "" || r.Header.Get("Cache-Control") != "private, no-cache" || r.Header.Get("Vary") != "Authorization" {
			t.Errorf("%s as a member: ETag %q, Cache-Control %q, Vary %q", p, etag, r.Header.Get("Cache-Control"), r.Header.Get("Vary"))
		}
		if a := r.Header.Get("Access-Control-Allow-Origin"); a != "" {
			t.Errorf("%s: an authenticated answer allows origin %q", p, a)
		}
		if nm := e.Do("GET", p, e.Admin, nil, "If-None-Match: "+etag); nm.Status != 304 || len(nm.Body) != 0 {
			t.Errorf("%s revalidated: %d", p, nm.Status)
		}
	}
	// Private: to an anonymous caller the server-wide indexes list none
	// of it and its files are not found, as if absent; the project's and
	// the skill's own routes are 401. No CORS header on any of them.
	for i, want := range []int{200, 404, 200, 404, 401, 401} {
		r := e.Do("GET", paths[i], "", nil, "Origin: https://elsewhere.example")
		if r.Status != want || strings.Contains(string(r.Body), "pdf-tools") {
			t.Errorf("anonymous %s of a private project: %d, want %d\n%s", paths[i], r.Status, want, r.Body)
		}
		if a := r.Header.Get("Access-Control-Allow-Origin"); r.Status != 200 && a != "" {
			t.Errorf("anonymous %s: an error allows origin %q", paths[i], a)
		}
	}
	e.Must(200, "PATCH", "/v1/projects/demo", e.Admin, map[string]string{"visibility": "public"})
	for _, p := range paths {
		r := e.Must(200, "GET", p, "", nil, "Origin: https://elsewhere.example")
		if r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Cache-Control") != "public, max-age=60" || r.Header.Get("ETag") == "" {
			t.Errorf("%s anonymously: ACAO %q, Cache-Control %q, ETag %q", p, r.Header.Get("Access-Control-Allow-Origin"), r.Header.Get("Cache-Control"), r.Header.Get("ETag"))
		}
	}
	// The anonymous index lists what the member's does, as skill-md or archive.
	var anon indexDoc
	e.Must(200, "GET", paths[0], "", nil).Decode(t, &anon)
	checkIndex(t, e, "", "/.well-known/agent-skills", anon)
}
