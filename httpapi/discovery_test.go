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
	Version string `json:"version"`
	Skills  []struct {
		Name        string           `json:"name"`
		Description string           `json:"description"`
		Digest      string           `json:"digest"`
		Files       []skillpack.File `json:"files"`
		Package     struct {
			URL    string `json:"url"`
			Digest string `json:"digest"`
		} `json:"package"`
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

// checkIndex verifies every digest of an index against what the server
// serves: each file at base/{name}/{path}, the skill digest over them,
// the package's bytes.
func checkIndex(t *testing.T, e *testenv.Env, token, base string, idx indexDoc) {
	t.Helper()
	if idx.Version != "0.2.0" {
		t.Errorf("version %q", idx.Version)
	}
	for _, s := range idx.Skills {
		if len(s.Files) == 0 || s.Files[0].Path != "SKILL.md" {
			t.Errorf("%s: SKILL.md is not first in %v", s.Name, s.Files)
		}
		var got []skillpack.File
		for _, f := range s.Files {
			r := e.Must(200, "GET", base+"/"+s.Name+"/"+f.Path, token, nil)
			if d := skillpack.Digest(r.Body); d != f.Digest {
				t.Errorf("%s/%s: served digest %s, index %s", s.Name, f.Path, d, f.Digest)
			}
			got = append(got, skillpack.File{Path: f.Path, Digest: skillpack.Digest(r.Body)})
		}
		if d := skillpack.SkillDigest(got); d != s.Digest {
			t.Errorf("%s: skill digest %s, index %s", s.Name, d, s.Digest)
		}
		pkg := e.Must(200, "GET", s.Package.URL, token, nil)
		if d := skillpack.Digest(pkg.Body); d != s.Package.Digest {
			t.Errorf("%s: package digest %s, index %s", s.Name, d, s.Package.Digest)
		}
		if !strings.HasSuffix(s.Package.URL, ".tar.gz") {
			t.Errorf("%s: package url %s", s.Name, s.Package.URL)
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
	// The older project's pdf-tools wins, its files served.
	if d := idx.Skills[1].Description; d != "Old PDF tools." {
		t.Errorf("pdf-tools description %q: the older project must win", d)
	}
	if len(idx.Skills[1].Files) != 2 {
		t.Errorf("pdf-tools files %v", idx.Skills[1].Files)
	}
	checkIndex(t, e, e.Admin, "/.well-known/agent-skills", idx)
	e.Must(200, "HEAD", "/.well-known/agent-skills/index.json", e.Admin, nil)
	e.Must(200, "HEAD", "/.well-known/agent-skills/pdf-tools/SKILL.md", e.Admin, nil)

	// One project's index.
	var pidx indexDoc
	e.Must(200, "GET", "/v1/projects/newer/agent-skills/index.json", e.Admin, nil).Decode(t, &pidx)
	if len(pidx.Skills) != 2 || pidx.Skills[1].Name != "pdf-tools" || pidx.Skills[1].Description != "New PDF tools." {
		t.Fatalf("project index %+v", pidx.Skills)
	}
	checkIndex(t, e, e.Admin, "/v1/projects/newer/agent-skills", pidx)

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
