package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestRawFileHeaders: a raw file is never served as something a browser
// runs on quire's origin, whatever its name or content says.
func TestRawFileHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "raw")
	n := s.draft(t, map[string]any{"from": "empty"})
	const plain = "text/plain; charset=utf-8"
	for _, tc := range []struct {
		path, content, ct string
	}{
		{"index.html", "<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>", plain},
		{"page.htm", "<html><script>alert(1)</script></html>", plain},
		{"a.svg", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>`, plain},
		{"a.xml", `<?xml version="1.0"?><x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(1)</x:script>`, plain},
		{"a.xhtml", `<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>`, plain},
		{"app.js", "alert(1)\n", plain},
		{"noext", "<html><script>alert(1)</script></html>", plain},
		{"notes.txt", "<html><script>alert(1)</script></html>", plain},
		{"README.md", "<script>alert(1)</script>\n# Readme\n", "text/markdown; charset=utf-8"},
		{"scripts/run.py", "print(1)\n", plain},
		{"pic.gif", "GIF89a\x01\x00\x01\x00", "image/gif"},
		{"data.bin", "\x00\x01\x02binary", "application/octet-stream"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			s.put(t, n, tc.path, tc.content)
			r := e.Must(200, "GET", s.vurl(n, "/files/", tc.path), e.Admin, nil)
			if string(r.Body) != tc.content {
				t.Errorf("body %q, want %q", r.Body, tc.content)
			}
			if got := r.Header.Get("Content-Type"); got != tc.ct {
				t.Errorf("Content-Type %q, want %q", got, tc.ct)
			}
			wantRawHeaders(t, r.Header.Get)
			// A revalidation carries them too.
			r = e.Do("GET", s.vurl(n, "/files/", tc.path), e.Admin, nil, "If-None-Match: "+r.Header.Get("ETag"))
			if r.Status != 304 {
				t.Fatalf("If-None-Match: status %d", r.Status)
			}
			wantRawHeaders(t, r.Header.Get)
		})
	}
	t.Run("download", func(t *testing.T) {
		r := e.Must(200, "GET", s.vurl(n, "/download"), e.Admin, nil)
		wantRawHeaders(t, r.Header.Get)
		if !strings.HasPrefix(r.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("Content-Disposition %q", r.Header.Get("Content-Disposition"))
		}
	})
	t.Run("patch", func(t *testing.T) {
		m := s.draft(t, map[string]any{"from": "empty"})
		s.put(t, m, "index.html", "<script>alert(1)</script>")
		r := e.Must(200, "GET", s.url(fmt.Sprintf("/diff?from=%d&to=%d&format=patch", n, m)), e.Admin, nil)
		wantRawHeaders(t, r.Header.Get)
	})
}

func wantRawHeaders(t *testing.T, get func(string) string) {
	t.Helper()
	if got := get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", got)
	}
	if got := get("Content-Security-Policy"); !strings.HasPrefix(got, "sandbox") || !strings.Contains(got, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q, want sandbox; default-src 'none'", got)
	}
}

const (
	cafeNFC = "caf\u00e9.md"  // é precomposed
	cafeNFD = "cafe\u0301.md" // e and a combining acute accent
)

// TestPathCollisions: a path that a checkout on macOS or Windows would
// merge with one the version holds is 409 naming that one; bidi controls
// in a path are 400 naming the rule. Writing the same path again is an
// update.
func TestPathCollisions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "paths")
	for _, tc := range []struct {
		name     string
		existing []string
		path     string
		status   int
		detail   string // details.existing (409) or a word of details.rule (400)
		message  string
	}{
		{"same path is an update", []string{"README.md"}, "README.md", 200, "", ""},
		{"other name in the same directory", []string{"Docs/a.md"}, "Docs/b.md", 200, "", ""},
		{"file case", []string{"README.md"}, "readme.md", 409, "README.md", "path readme.md collides with README.md after case folding"},
		{"file case deep", []string{"a/b/Run.py"}, "a/b/run.py", 409, "a/b/Run.py", "after case folding"},
		{"directory case", []string{"Docs/a.md"}, "docs/b.md", 409, "Docs/", "path docs/b.md collides with Docs/ after case folding"},
		{"directory case deep", []string{"x/Docs/a.md"}, "x/docs/b.md", 409, "x/Docs/", "collides with x/Docs/"},
		{"directory over a file", []string{"docs"}, "Docs/a.md", 409, "docs", "collides with docs after case folding"},
		{"file over a directory", []string{"Docs/a.md"}, "docs", 409, "Docs/", "collides with Docs/"},
		{"NFD after NFC", []string{cafeNFC}, cafeNFD, 409, cafeNFC, "after Unicode normalization (NFC)"},
		{"NFC after NFD", []string{cafeNFD}, cafeNFC, 409, cafeNFD, "after Unicode normalization (NFC)"},
		{"full case folding", []string{"stra\u00dfe.md"}, "STRASSE.md", 409, "stra\u00dfe.md", "after case folding"},
		{"kelvin sign", []string{"k.md"}, "\u212a.md", 409, "k.md", "after case folding"},
		{"right-to-left override", nil, "evil\u202etxt.exe", 400, "bidirectional", "must not contain bidirectional control characters"},
		{"isolate in a directory", nil, "dir\u2066/a.md", 400, "bidirectional", "bidirectional"},
		{"right-to-left mark", nil, "a\u200f.md", 400, "bidirectional", "bidirectional"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := s.draft(t, map[string]any{"from": "empty"})
			for _, p := range tc.existing {
				s.put(t, n, p, "existing\n")
			}
			before := s.git(t, "rev-parse", fmt.Sprintf("refs/heads/draft/%d", n))
			r := e.Do("POST", s.vurl(n, "/files"), e.Admin, map[string]string{"file_path": tc.path, "content": "new\n"})
			if tc.status == 200 {
				if r.Status != 200 {
					t.Fatalf("status %d, want 200\n%s", r.Status, r.Body)
				}
				return
			}
			m := wantError(t, r, tc.status, tc.message)
			d, _ := m["details"].(map[string]any)
			switch tc.status {
			case 409:
				if m["code"] != "conflict" || d["existing"] != tc.detail || d["path"] != tc.path {
					t.Errorf("code %v, details %v: want existing %q, path %q", m["code"], d, tc.detail, tc.path)
				}
			case 400:
				if rule, _ := d["rule"].(string); !strings.Contains(rule, tc.detail) {
					t.Errorf("details %v: want a rule naming %q", d, tc.detail)
				}
			}
			if after := s.git(t, "rev-parse", fmt.Sprintf("refs/heads/draft/%d", n)); after != before {
				t.Errorf("draft moved from %s to %s", before, after)
			}
		})
	}
	s.fsck(t)
}

// TestZipImportCollisions: an uploaded zip whose paths collide among
// themselves is refused whole, naming both, and makes no version.
func TestZipImportCollisions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "zipcollide")
	for _, tc := range []struct {
		name    string
		files   []string
		status  int
		message string
	}{
		{"file case", []string{"README.md", "a", "readme.md", "b"}, 409, "path readme.md collides with README.md after case folding"},
		{"directory case under a stripped folder", []string{"s/Docs/a.md", "a", "s/docs/b.md", "b"}, 409, "path docs/b.md collides with Docs/ after case folding"},
		{"NFC and NFD", []string{cafeNFC, "a", cafeNFD, "b"}, 409, "after Unicode normalization (NFC)"},
		{"bidi control", []string{"evil\u202etxt.exe", "a"}, 400, "bidirectional control characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.refs(t)
			wantError(t, e.Do("POST", s.url("/versions"), e.Admin, zipOf(t, tc.files...), "Content-Type: application/zip"), tc.status, tc.message)
			wantError(t, e.Do("POST", s.url("/versions/upload"), e.Admin, zipOf(t, tc.files...), "Content-Type: application/zip"), tc.status, tc.message)
			sameRefs(t, before, s.refs(t))
		})
	}
	s.fsck(t)
}
