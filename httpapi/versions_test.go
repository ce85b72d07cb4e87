package httpapi_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
)

// TestVersionLifecycle walks a skill through every version transition over
// HTTP and checks each step in the repository with the git CLI.
func TestVersionLifecycle(t *testing.T) {
	t.Parallel()
	forEachRedis(t, func(t *testing.T, o testenv.Options) {
		e := newEnv(t, o)
		s := newSkill(t, e, "pdf")
		if vs := arr(t, e.Must(200, "GET", s.url("/versions"), e.Admin, nil).JSON(t), "versions"); len(vs) != 0 {
			t.Fatalf("new skill has versions %v", vs)
		}
		wantError(t, e.Do("GET", s.vurl(1), e.Admin, nil), 404)

		// Draft 1 from the (absent) live version: one commit, an empty tree.
		r := e.Must(201, "POST", s.url("/versions"), e.Admin, nil)
		v := r.JSON(t)
		if num(t, v, "version", "version") != 1 || get(t, v, "version", "live") != false || str(t, v, "version", "skill_id") != s.id {
			t.Fatalf("draft 1: %s", r.Body)
		}
		draft1 := s.git(t, "rev-parse", "refs/heads/draft/1")
		if str(t, v, "version", "commit") != draft1 || r.Header.Get("ETag") != `"`+draft1+`"` {
			t.Fatalf("commit %s / ETag %s, git says %s", str(t, v, "version", "commit"), r.Header.Get("ETag"), draft1)
		}
		if s.count(t, "refs/heads/draft/1") != 1 || s.git(t, "ls-tree", "-r", "draft/1") != "" {
			t.Fatal("draft 1 is not one commit of an empty tree")
		}

		// SPEC endpoint 2: upsert → 200 {file, version}, one commit per file.
		manifest := testenv.SkillManifest("pdf")
		r = e.Must(200, "POST", s.vurl(1, "/files"), e.Admin, map[string]string{"file_path": "SKILL.md", "content": manifest})
		up := r.JSON(t)
		if str(t, up, "file", "file_path") != "SKILL.md" || num(t, up, "file", "size") != len(manifest) {
			t.Fatalf("upsert answer: %s", r.Body)
		}
		if sha := s.git(t, "rev-parse", "draft/1:SKILL.md"); str(t, up, "file", "sha") != sha {
			t.Fatalf("file sha %s, git blob %s", str(t, up, "file", "sha"), sha)
		}
		if c := s.git(t, "rev-parse", "draft/1"); str(t, up, "version", "commit") != c || str(t, up, "version", "state") != "draft" || r.Header.Get("ETag") != `"`+c+`"` {
			t.Fatalf("version after upsert: %s (git %s)", r.Body, c)
		}
		if got := s.git(t, "show", "draft/1:SKILL.md"); got != strings.TrimSpace(manifest) {
			t.Fatalf("git show: %q", got)
		}
		if got := s.git(t, "log", "-1", "--format=%an <%ae>|%s", "draft/1"); got != "Admin <admin@example.com>|Add SKILL.md" {
			t.Fatalf("commit: %q", got)
		}
		s.put(t, 1, "scripts/run.py", "print(1)\n")
		s.put(t, 1, "SKILL.md", manifest+"\nMore.\n")
		if got := s.git(t, "log", "-1", "--format=%s", "draft/1"); got != "Update SKILL.md" {
			t.Fatalf("update message %q", got)
		}
		// A custom message is the commit message.
		e.Must(200, "POST", s.vurl(1, "/files"), e.Admin, map[string]string{"file_path": "notes.txt", "content": "n", "message": "Add notes for reviewers"})
		if got := s.git(t, "log", "-1", "--format=%s", "draft/1"); got != "Add notes for reviewers" {
			t.Fatalf("custom message %q", got)
		}
		if s.count(t, "draft/1") != 5 {
			t.Fatalf("draft/1 has %d commits, want 5", s.count(t, "draft/1"))
		}
		// The same content again makes no commit.
		before := s.refs(t)
		s.put(t, 1, "scripts/run.py", "print(1)\n")
		sameRefs(t, before, s.refs(t))

		// List.
		fl := e.Must(200, "GET", s.vurl(1, "/files"), e.Admin, nil).JSON(t)
		files := arr(t, fl, "files")
		if len(files) != 3 || str(t, files[0], "file_path") != "SKILL.md" || str(t, files[2], "file_path") != "scripts/run.py" || num(t, files[2], "size") != 9 || str(t, fl, "next_cursor") != "" {
			t.Fatalf("files: %v", fl)
		}
		if str(t, files[2], "sha") != s.git(t, "rev-parse", "draft/1:scripts/run.py") {
			t.Fatal("listed sha is not the blob id")
		}
		if p := e.Must(200, "GET", s.vurl(1, "/files?limit=1&cursor=1"), e.Admin, nil).JSON(t); len(arr(t, p, "files")) != 1 || str(t, p, "next_cursor") != "2" {
			t.Fatalf("paged files: %v", p)
		}

		// Raw read with ETag; If-None-Match → 304.
		r = e.Must(200, "GET", s.vurl(1, "/files/scripts/run.py"), e.Admin, nil)
		etag := r.Header.Get("ETag")
		if string(r.Body) != "print(1)\n" || etag != `"`+str(t, files[2], "sha")+`"` {
			t.Fatalf("raw read %q etag %s", r.Body, etag)
		}
		r = e.Must(304, "GET", s.vurl(1, "/files/scripts/run.py"), e.Admin, nil, "If-None-Match: "+etag)
		if len(r.Body) != 0 {
			t.Fatalf("304 with a body %q", r.Body)
		}
		e.Must(304, "GET", s.vurl(1, "/files/scripts/run.py"), e.Admin, nil, `If-None-Match: "zzz", `+etag)
		e.Must(200, "GET", s.vurl(1, "/files/scripts/run.py"), e.Admin, nil, `If-None-Match: "0000"`)
		if ct := e.Must(200, "GET", s.vurl(1, "/files/SKILL.md"), e.Admin, nil).Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/markdown") {
			t.Fatalf("SKILL.md served as %q", ct)
		}
		wantError(t, e.Do("GET", s.vurl(1, "/files/missing.txt"), e.Admin, nil), 404)
		wantError(t, e.Do("GET", s.vurl(1, "/files/scripts"), e.Admin, nil), 404)

		// If-Match guards writes: a stale commit is 412 and writes nothing.
		head := s.git(t, "rev-parse", "draft/1")
		before = s.refs(t)
		wantError(t, e.Do("POST", s.vurl(1, "/files"), e.Admin, map[string]string{"file_path": "x.txt", "content": "x"}, `If-Match: "`+draft1+`"`), 412)
		wantError(t, e.Do("DELETE", s.vurl(1, "/files/notes.txt"), e.Admin, nil, `If-Match: "`+draft1+`"`), 412)
		sameRefs(t, before, s.refs(t))
		e.Must(200, "POST", s.vurl(1, "/files"), e.Admin, map[string]string{"file_path": "x.txt", "content": "x"}, `If-Match: "`+head+`"`)
		// "*" matches any current version; a weak tag compares by value.
		e.Must(200, "POST", s.vurl(1, "/files"), e.Admin, map[string]string{"file_path": "x.txt", "content": "x2"}, "If-Match: *")
		e.Must(200, "POST", s.vurl(1, "/files"), e.Admin, map[string]string{"file_path": "x.txt", "content": "x3"}, `If-Match: W/"`+s.git(t, "rev-parse", "draft/1")+`"`)

		// Delete a file: one commit; the file is gone; deleting again is 404.
		r = e.Must(200, "DELETE", s.vurl(1, "/files/x.txt"), e.Admin, nil)
		if got := s.git(t, "log", "-1", "--format=%s", "draft/1"); got != "Delete x.txt" {
			t.Fatalf("delete message %q", got)
		}
		if str(t, r.JSON(t), "version", "commit") != s.git(t, "rev-parse", "draft/1") {
			t.Fatal("delete answer is not the new commit")
		}
		wantError(t, e.Do("GET", s.vurl(1, "/files/x.txt"), e.Admin, nil), 404)
		wantError(t, e.Do("DELETE", s.vurl(1, "/files/x.txt"), e.Admin, nil), 404)

		// Publish: annotated tag v1 at the draft's last commit, main moved,
		// the branch gone.
		last := s.git(t, "rev-parse", "draft/1")
		v = e.Must(200, "POST", s.vurl(1, "/publish"), e.Admin, nil).JSON(t)
		if str(t, v, "version", "state") != "published" || get(t, v, "version", "live") != true || str(t, v, "version", "commit") != last {
			t.Fatalf("published: %v", v)
		}
		refs := s.refs(t)
		if _, ok := refs["refs/heads/draft/1"]; ok {
			t.Fatal("draft/1 kept after publish")
		}
		if refs["refs/heads/main"] != last || s.git(t, "cat-file", "-t", "refs/tags/v1") != "tag" || s.git(t, "rev-parse", "v1^{commit}") != last {
			t.Fatalf("refs after publish: %v", refs)
		}
		if s.git(t, "symbolic-ref", "HEAD") != "refs/heads/main" {
			t.Fatal("HEAD is not main")
		}
		if _, err := time.Parse(time.RFC3339, str(t, v, "version", "published_at")); err != nil {
			t.Fatalf("published_at: %v", err)
		}
		e.Must(304, "GET", s.vurl(1), e.Admin, nil, `If-None-Match: "`+last+`"`)

		// A published version is read-only (409), and writes leave no trace.
		before = s.refs(t)
		wantError(t, e.Do("POST", s.vurl(1, "/files"), e.Admin, map[string]string{"file_path": "y", "content": "y"}), 409, "published")
		wantError(t, e.Do("DELETE", s.vurl(1, "/files/notes.txt"), e.Admin, nil), 409)
		wantError(t, e.Do("POST", s.vurl(1, "/publish"), e.Admin, nil), 409)
		wantError(t, e.Do("DELETE", s.vurl(1), e.Admin, nil), 409)
		sameRefs(t, before, s.refs(t))

		// Draft 2 from live: parented on v1, same tree.
		if n := s.draft(t, nil); n != 2 {
			t.Fatalf("second draft is %d", n)
		}
		if s.git(t, "rev-parse", "draft/2^") != last || s.git(t, "rev-parse", "draft/2^{tree}") != s.git(t, "rev-parse", "v1^{tree}") {
			t.Fatal("draft 2 does not start from v1")
		}
		if got := num(t, e.Must(200, "GET", s.vurl(2), e.Admin, nil).JSON(t), "version", "base_version"); got != 1 {
			t.Fatalf("base_version %d", got)
		}
		s.put(t, 2, "scripts/run.py", "print(2)\n")
		s.put(t, 2, "added.txt", "new\n")
		e.Must(200, "DELETE", s.vurl(2, "/files/notes.txt"), e.Admin, nil)
		v2 := s.git(t, "rev-parse", "draft/2")
		e.Must(200, "POST", s.vurl(2, "/publish"), e.Admin, nil)
		if s.git(t, "rev-parse", "refs/heads/main") != v2 {
			t.Fatal("main did not move to v2")
		}
		if get(t, e.Must(200, "GET", s.vurl(1), e.Admin, nil).JSON(t), "version", "live") != false {
			t.Fatal("v1 still live")
		}

		// Diff, JSON and patch.
		d := e.Must(200, "GET", s.url("/diff?from=1&to=2"), e.Admin, nil).JSON(t)
		status := map[string]string{}
		for _, f := range arr(t, d, "files") {
			status[str(t, f, "file_path")] = str(t, f, "status")
		}
		if fmt.Sprint(status) != "map[added.txt:added notes.txt:deleted scripts/run.py:modified]" {
			t.Fatalf("diff: %v", d)
		}
		patch := string(e.Must(200, "GET", s.url("/diff?from=1&to=2&format=patch"), e.Admin, nil).Body)
		if !strings.Contains(patch, "-print(1)") || !strings.Contains(patch, "+print(2)") || !strings.Contains(patch, "+new") {
			t.Fatalf("patch:\n%s", patch)
		}
		if d := e.Must(200, "GET", s.url("/diff?from=2&to=2"), e.Admin, nil).JSON(t); len(arr(t, d, "files")) != 0 {
			t.Fatalf("self diff: %v", d)
		}
		wantError(t, e.Do("GET", s.url("/diff?from=1&to=9"), e.Admin, nil), 404)
		for _, q := range []string{"", "?from=1", "?from=a&to=2", "?from=0&to=1", "?from=-1&to=2"} {
			wantError(t, e.Do("GET", s.url("/diff"+q), e.Admin, nil), 400)
		}

		// Promote (rollback) and its refusals.
		v = e.Must(200, "POST", s.vurl(1, "/promote"), e.Admin, nil).JSON(t)
		if get(t, v, "version", "live") != true || s.git(t, "rev-parse", "refs/heads/main") != last {
			t.Fatalf("rollback to v1: %v", v)
		}
		e.Must(200, "POST", s.vurl(1, "/promote"), e.Admin, nil) // already live: no-op
		n3 := s.draft(t, map[string]int{"from": 2})
		if s.git(t, "rev-parse", "draft/3^") != v2 {
			t.Fatal(`draft {"from": 2} is not parented on v2`)
		}
		wantError(t, e.Do("POST", s.vurl(n3, "/promote"), e.Admin, nil), 409)
		wantError(t, e.Do("POST", s.vurl(9, "/promote"), e.Admin, nil), 404)

		// SPEC endpoint 5: archive → 200 {version}. v2 is not live now.
		r = e.Must(200, "POST", s.vurl(2, "/archive"), e.Admin, nil)
		v = r.JSON(t)
		if str(t, v, "version", "state") != "archived" || num(t, v, "version", "version") != 2 {
			t.Fatalf("archive: %s", r.Body)
		}
		refs = s.refs(t)
		if refs["refs/tags/v2"] == "" || s.git(t, "cat-file", "-t", "refs/tags/archive/v2") != "tag" || s.git(t, "rev-parse", "archive/v2^{commit}") != v2 {
			t.Fatalf("refs after archive: %v", refs)
		}
		before = s.refs(t)
		wantError(t, e.Do("POST", s.vurl(2, "/archive"), e.Admin, nil), 409, "archived")
		wantError(t, e.Do("POST", s.vurl(1, "/archive"), e.Admin, nil), 409, "live")
		wantError(t, e.Do("POST", s.vurl(2, "/promote"), e.Admin, nil), 409)
		wantError(t, e.Do("POST", s.vurl(2, "/files"), e.Admin, map[string]string{"file_path": "z", "content": "z"}), 409)
		wantError(t, e.Do("DELETE", s.vurl(2), e.Admin, nil), 409)
		wantError(t, e.Do("POST", s.vurl(9, "/archive"), e.Admin, nil), 404)
		sameRefs(t, before, s.refs(t))
		// An archived version is still readable, and can still be a base.
		e.Must(200, "GET", s.vurl(2, "/files/added.txt"), e.Admin, nil)

		// Archive a draft: the branch goes, the tag comes.
		e.Must(200, "POST", s.vurl(n3, "/archive"), e.Admin, nil)
		refs = s.refs(t)
		if _, ok := refs["refs/heads/draft/3"]; ok || refs["refs/tags/archive/v3"] == "" {
			t.Fatalf("refs after archiving draft 3: %v", refs)
		}

		// From empty: a root commit of an empty tree.
		n4 := s.draft(t, map[string]string{"from": "empty"})
		if s.count(t, fmt.Sprintf("draft/%d", n4)) != 1 || s.git(t, "ls-tree", fmt.Sprintf("draft/%d", n4)) != "" {
			t.Fatal(`draft {"from":"empty"} is not a root commit of an empty tree`)
		}
		wantError(t, e.Do("POST", s.url("/versions"), e.Admin, map[string]int{"from": 42}), 404)
		wantError(t, e.Do("POST", s.url("/versions"), e.Admin, map[string]int{"from": 0}), 400)

		// Delete a draft: 204, branch gone, its number never reused.
		r = e.Must(204, "DELETE", s.vurl(n4), e.Admin, nil)
		if len(r.Body) != 0 {
			t.Fatalf("204 with a body %q", r.Body)
		}
		if _, ok := s.refs(t)[fmt.Sprintf("refs/heads/draft/%d", n4)]; ok {
			t.Fatal("deleted draft's branch remains")
		}
		wantError(t, e.Do("GET", s.vurl(n4), e.Admin, nil), 404)
		wantError(t, e.Do("DELETE", s.vurl(n4), e.Admin, nil), 404)
		if n := s.draft(t, map[string]string{"from": "1"}); n != n4+1 {
			t.Fatalf("after deleting draft %d the next is %d", n4, n)
		}

		// List, filtered by state.
		vl := arr(t, e.Must(200, "GET", s.url("/versions"), e.Admin, nil).JSON(t), "versions")
		var got []string
		for _, x := range vl {
			got = append(got, fmt.Sprintf("%d:%s", num(t, x, "version"), str(t, x, "state")))
		}
		if strings.Join(got, " ") != "1:published 2:archived 3:archived 5:draft" {
			t.Fatalf("versions: %v", got)
		}
		if vl := arr(t, e.Must(200, "GET", s.url("/versions?state=archived"), e.Admin, nil).JSON(t), "versions"); len(vl) != 2 {
			t.Fatalf("archived: %v", vl)
		}

		// History: every commit, newest first, credited to a version.
		h := e.Must(200, "GET", s.url("/history?limit=100"), e.Admin, nil).JSON(t)
		commits := arr(t, h, "commits")
		if len(commits) == 0 || str(t, commits[len(commits)-1], "message") != "Open draft 1" || num(t, commits[len(commits)-1], "version") != 1 {
			t.Fatalf("history: %v", commits)
		}
		all := strings.Fields(s.git(t, "rev-list", "--all"))
		ids := map[string]bool{}
		for _, c := range commits {
			ids[str(t, c, "id")] = true
		}
		for _, c := range strings.Fields(s.git(t, "rev-list", "v1", "v2", "archive/v3", "draft/5")) {
			if !ids[c] {
				t.Fatalf("history misses commit %s (rev-list --all has %d)", c, len(all))
			}
		}
		// Pages of two follow the full list in order; the cursor is opaque.
		p := e.Must(200, "GET", s.url("/history?limit=2"), e.Admin, nil).JSON(t)
		p2 := e.Must(200, "GET", s.url("/history?limit=2&cursor="+str(t, p, "next_cursor")), e.Admin, nil).JSON(t)
		paged := append(arr(t, p, "commits"), arr(t, p2, "commits")...)
		if len(paged) != 4 {
			t.Fatalf("history pages: %v then %v", p, p2)
		}
		for i, c := range paged {
			if str(t, c, "id") != str(t, commits[i], "id") || str(t, c, "message") != str(t, commits[i], "message") {
				t.Fatalf("history page entry %d is %v, want %v", i, c, commits[i])
			}
		}

		// Download v1 as a zip under the slug's folder.
		r = e.Must(200, "GET", s.vurl(1, "/download"), e.Admin, nil)
		if r.Header.Get("Content-Type") != "application/zip" || !strings.Contains(r.Header.Get("Content-Disposition"), "pdf-v1.zip") {
			t.Fatalf("download headers %v", r.Header)
		}
		z := unzip(t, r.Body)
		if len(z) != 3 || z["pdf/scripts/run.py"] != "print(1)\n" || z["pdf/SKILL.md"] != s.git(t, "show", "v1:SKILL.md")+"\n" {
			t.Fatalf("zip: %v", z)
		}
		wantError(t, e.Do("GET", s.vurl(1, "/download?format=rar"), e.Admin, nil), 400)
		wantError(t, e.Do("GET", s.vurl(9, "/download"), e.Admin, nil), 404)

		s.fsck(t)
	})
}

func unzip(t *testing.T, b []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		c, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = string(c)
	}
	return out
}

// TestNestedPaths covers directories: nested files, a file where a
// directory is (and the reverse), and empty directories disappearing.
func TestNestedPaths(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "nest")
	s.draft(t, nil)
	s.put(t, 1, "a/b/c.txt", "c")
	s.put(t, 1, "a/d.txt", "d")
	s.put(t, 1, "ünïcode/ファイル.md", "u")
	before := s.refs(t)
	wantError(t, e.Do("POST", s.vurl(1, "/files"), e.Admin, map[string]string{"file_path": "a/b", "content": "x"}), 409)
	wantError(t, e.Do("POST", s.vurl(1, "/files"), e.Admin, map[string]string{"file_path": "a/d.txt/e", "content": "x"}), 409)
	wantError(t, e.Do("DELETE", s.vurl(1, "/files/a"), e.Admin, nil), 404)
	sameRefs(t, before, s.refs(t))
	if got := string(e.Must(200, "GET", s.vurl(1, "/files/ünïcode/ファイル.md"), e.Admin, nil).Body); got != "u" {
		t.Fatalf("unicode path read %q", got)
	}
	e.Must(200, "DELETE", s.vurl(1, "/files/a/b/c.txt"), e.Admin, nil)
	if tree := s.git(t, "-c", "core.quotePath=false", "ls-tree", "-r", "--name-only", "draft/1"); tree != "a/d.txt\nünïcode/ファイル.md" {
		t.Fatalf("tree after delete:\n%s", tree)
	}
	if out := s.git(t, "ls-tree", "draft/1:a"); strings.Contains(out, "\tb") {
		t.Fatalf("empty directory b kept:\n%s", out)
	}
	s.fsck(t)
}

// fastZip is a zip writer that deflates at the fastest level: the bombs
// below are megabytes of one byte, and the race detector makes the default
// level slow.
func fastZip(w io.Writer) *zip.Writer {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestSpeed)
	})
	return zw
}

// zipOf builds a zip archive of name → content.
func zipOf(t *testing.T, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := fastZip(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		w, err := zw.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestUploadZip(t *testing.T) {
	t.Parallel()
	sequentialHeavy(t)
	e := newEnv(t)
	s := newSkill(t, e, "zipped")

	// A zip with one top folder imports as the folder's content, in one commit.
	body := zipOf(t, "zipped/SKILL.md", testenv.SkillManifest("zipped"), "zipped/scripts/a.py", "a\n", "zipped/scripts/b.py", "b\n")
	r := e.Must(201, "POST", s.url("/versions"), e.Admin, body, "Content-Type: application/zip")
	m := r.JSON(t)
	n := num(t, m, "version", "version")
	if num(t, m, "files") != 3 || str(t, m, "version", "state") != "draft" {
		t.Fatalf("upload: %s", r.Body)
	}
	ref := fmt.Sprintf("draft/%d", n)
	if got := s.git(t, "ls-tree", "-r", "--name-only", ref); got != "SKILL.md\nscripts/a.py\nscripts/b.py" {
		t.Fatalf("uploaded tree:\n%s", got)
	}
	if s.count(t, ref) != 1 || s.git(t, "show", ref+":scripts/b.py") != "b" {
		t.Fatal("upload is not one commit with the content")
	}
	e.Must(200, "POST", s.vurl(n, "/publish"), e.Admin, nil)

	// Download and upload again: the very same tree.
	dl := e.Must(200, "GET", s.vurl(n, "/download"), e.Admin, nil).Body
	m = e.Must(201, "POST", s.url("/versions/upload"), e.Admin, dl, "Content-Type: application/zip").JSON(t)
	n2 := num(t, m, "version", "version")
	if s.git(t, "rev-parse", fmt.Sprintf("draft/%d^{tree}", n2)) != s.git(t, "rev-parse", fmt.Sprintf("v%d^{tree}", n)+"") {
		t.Fatal("download → upload changed the tree")
	}

	// Multipart, the "file" part.
	var mp bytes.Buffer
	boundary := "quireboundary"
	fmt.Fprintf(&mp, "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"s.zip\"\r\nContent-Type: application/zip\r\n\r\n", boundary)
	mp.Write(zipOf(t, "SKILL.md", "x", "README.md", "y"))
	fmt.Fprintf(&mp, "\r\n--%s--\r\n", boundary)
	m = e.Must(201, "POST", s.url("/versions/upload"), e.Admin, mp.Bytes(), "Content-Type: multipart/form-data; boundary="+boundary).JSON(t)
	if num(t, m, "files") != 2 {
		t.Fatalf("multipart upload: %v", m)
	}
	wantError(t, e.Do("POST", s.url("/versions/upload"), e.Admin, "--x--\r\n", "Content-Type: multipart/form-data; boundary=x"), 400, "file")

	// Hostile archives: nothing is written, whatever the rejection.
	big := strings.Repeat("\x00", 2<<20)
	mib := strings.Repeat("A", 1<<20)
	var eleven []string
	for i := 0; i < 11; i++ {
		eleven = append(eleven, fmt.Sprintf("f%02d.bin", i), mib)
	}
	var many []string
	for i := 0; i < 1001; i++ {
		many = append(many, fmt.Sprintf("f%04d", i), "x")
	}
	for _, tc := range []struct {
		name   string
		body   []byte
		status int
		msg    string
	}{
		{"zip slip", zipOf(t, "../evil.txt", "x"), 400, ".."},
		{"zip slip nested", zipOf(t, "ok/../../evil.txt", "x", "ok/a", "a"), 400, ".."},
		{"absolute", zipOf(t, "/etc/passwd", "x"), 400, "leading /"},
		{"backslash", zipOf(t, "..\\evil.txt", "x"), 400, "backslash"},
		{"dot git", zipOf(t, ".git/config", "x"), 400, ".git"},
		{"dot git in folder", zipOf(t, "top/.GIT/hooks/pre-commit", "x"), 400, ".git"},
		{"duplicate", zipOf(t, "a.txt", "1", "a.txt", "2"), 400, "twice"},
		{"file over 1 MiB (bomb)", zipOf(t, "bomb.bin", big), 413, "larger"},
		{"version over 10 MiB", zipOf(t, eleven...), 413, "bytes"},
		{"too many files", zipOf(t, many...), 413, "files"},
		{"lying header", lyingZip(t), 0, ""},
		{"symlink", symlinkZip(t), 400, "regular"},
		{"not a zip", []byte("PK not really"), 400, "zip"},
		{"empty body", nil, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.refs(t)
			r := e.Do("POST", s.url("/versions/upload"), e.Admin, tc.body, "Content-Type: application/zip")
			if tc.status == 0 { // either rejection is right; a 2xx is not
				if r.Status != 400 && r.Status != 413 {
					t.Fatalf("status %d: %s", r.Status, r.Body)
				}
				wantError(t, r, r.Status)
			} else {
				wantError(t, r, tc.status, tc.msg)
			}
			sameRefs(t, before, s.refs(t))
		})
	}
	s.fsck(t)
}

// lyingZip holds an entry whose header claims 10 bytes but whose deflated
// data expands to 2 MiB.
func lyingZip(t *testing.T) []byte {
	t.Helper()
	var raw bytes.Buffer
	{
		var tmp bytes.Buffer
		zw := fastZip(&tmp)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "x", Method: zip.Deflate})
		w.Write(bytes.Repeat([]byte{0}, 2<<20))
		zw.Close()
		zr, err := zip.NewReader(bytes.NewReader(tmp.Bytes()), int64(tmp.Len()))
		if err != nil {
			t.Fatal(err)
		}
		rc, err := zr.File[0].OpenRaw()
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(&raw, rc)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "bomb.bin", Method: zip.Deflate, CRC32: 0, CompressedSize64: uint64(raw.Len()), UncompressedSize64: 10})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(raw.Bytes())
	zw.Close()
	return buf.Bytes()
}

func symlinkZip(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	h := &zip.FileHeader{Name: "link"}
	h.SetMode(0o777 | os.ModeSymlink)
	w, err := zw.CreateHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("/etc/passwd"))
	zw.Close()
	return buf.Bytes()
}
