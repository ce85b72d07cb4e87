package valid

import (
	"errors"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quire/quire"
)

// The fuzz targets check each rule against an independent statement of
// what it promises. Seeds live in testdata/fuzz/<target>/; go test runs
// them, scripts/fuzz.sh fuzzes.

// invalid checks err is the EINVALID *quire.Error a rule must return.
func invalid(t *testing.T, what string, err error) {
	t.Helper()
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Code != quire.EINVALID || qe.Message == "" {
		t.Fatalf("%s: error %#v is not an EINVALID quire error with a message", what, err)
	}
}

func FuzzFilePath(f *testing.F) {
	for _, tc := range gitSpecialPaths {
		f.Add(tc.path)
	}
	for _, s := range []string{"SKILL.md", "scripts/run.py", "a/b/c/d.txt", "../etc/passwd", "a/../../b", "/abs", "a//b", "a/./b",
		"a\\b", "C:\\x", "a\x00b", "\x7f", "\u0085", "a/", ".", "..", "é/ü.md", "\xff\xfe", strings.Repeat("a/", 2049)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := FilePath(p)
		if err != nil {
			invalid(t, "FilePath", err)
			if !strings.HasPrefix(quire.ErrorMessage(err), "invalid file_path: ") {
				t.Fatalf("message %q does not name the field", quire.ErrorMessage(err))
			}
			return
		}
		// Accepted: it stays inside any directory it is joined to, and it
		// is in the one canonical spelling.
		if p == "" || len(p) > MaxPathBytes || !utf8.ValidString(p) {
			t.Fatalf("accepted %q: empty, too long or not UTF-8", p)
		}
		if !filepath.IsLocal(p) || path.Clean(p) != p || strings.HasPrefix(p, "/") {
			t.Fatalf("accepted %q, which is not a clean relative path", p)
		}
		if !strings.HasPrefix(filepath.Join("/data/repo", p), "/data/repo/") {
			t.Fatalf("accepted %q, which escapes the directory it is joined to", p)
		}
		for _, r := range p {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\\' {
				t.Fatalf("accepted %q holding %U", p, r)
			}
		}
		for _, c := range strings.Split(p, "/") {
			// What NTFS and HFS+ would make of the name.
			folded := strings.ToLower(strings.TrimRight(hfsFold(c), ". "))
			if i := strings.IndexByte(folded, ':'); i >= 0 {
				folded = folded[:i]
			}
			if folded == ".git" || folded == "git~1" || folded == ".gitmodules" {
				t.Fatalf("accepted %q whose component %q git reads as %s", p, c, folded)
			}
		}
		if err2 := FilePath(p); err2 != nil {
			t.Fatalf("FilePath(%q) is not deterministic: %v", p, err2)
		}
	})
}

// slugOK states the slug rule without a regular expression.
func slugOK(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && i > 0) {
			return false
		}
	}
	return true
}

func FuzzSlug(f *testing.F) {
	for _, s := range []string{"pdf-tools", "a", "-a", "a-", "A", "ab--cd", strings.Repeat("a", 63), strings.Repeat("a", 64),
		"My Skill!", "  Ünïcödé  name ", "x\u0130y", "", "0", "a b", "a\nb", strings.Repeat("ab-", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := Slug(s)
		if (err == nil) != slugOK(s) {
			t.Fatalf("Slug(%q) = %v, but the rule says ok=%v", s, err, slugOK(s))
		}
		if err != nil {
			invalid(t, "Slug", err)
		}
		// A derived slug is valid (or empty), and deriving again keeps it.
		d := SlugFrom(s)
		if d != "" && Slug(d) != nil {
			t.Fatalf("SlugFrom(%q) = %q, which is not a valid slug", s, d)
		}
		if SlugFrom(d) != d {
			t.Fatalf("SlugFrom(%q) = %q but SlugFrom(%q) = %q", s, d, d, SlugFrom(d))
		}
	})
}

func FuzzSkillManifest(f *testing.F) {
	for _, tc := range []struct{ content, slug string }{
		{"---\nname: pdf\ndescription: Fill PDFs.\n---\n# PDF\n", "pdf"},
		{"\xef\xbb\xbf---\r\nname: pdf\r\ndescription: x\r\n---\r\n", "pdf"},
		{"---\nname: PDF\ndescription: <b>x</b>\n---\n", "pdf"},
		{"---\nname: [a, b]\ndescription: {x: 1}\n---\n", "a"},
		{"---\n---\n", "a"},
		{"------\n", "a"},
		{"---\nname: a\ndescription: x\n", "a"},
		{"no front matter", "a"},
		{"---\n: : :\n\t- bad yaml\n---\n", "a"},
		{"---\na: &a [*a, *a]\nname: a\n---\n", "a"},
		{"---\nx: &x [1,2]\ny: &y [*x,*x,*x,*x]\nz: [*y,*y,*y,*y]\nname: a\ndescription: d\n---\n", "a"},
		{"---\nname: a\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", "a"},
		{"---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", strings.Repeat("a", 65)},
	} {
		f.Add([]byte(tc.content), tc.slug)
	}
	f.Fuzz(func(t *testing.T, content []byte, slug string) {
		if SkillManifest(content, false, slug) == nil {
			t.Fatal("a missing SKILL.md passed")
		}
		err := SkillManifest(content, true, slug)
		if err == nil {
			// The name is the slug, so the slug must be a valid skill name.
			if len(slug) > 64 || !skillNameRE.MatchString(slug) {
				t.Fatalf("passed with slug %q, which is not a valid skill name", slug)
			}
			return
		}
		var qe *quire.Error
		if !errors.As(err, &qe) || qe.Code != quire.EUNPROCESSABLE {
			t.Fatalf("error %#v is not EUNPROCESSABLE", err)
		}
		reasons, _ := qe.Details["reasons"].([]string)
		if len(reasons) == 0 {
			t.Fatalf("error %q lists no reasons", qe.Message)
		}
		for _, r := range reasons {
			if !strings.Contains(qe.Message, r) {
				t.Fatalf("message %q leaves out reason %q", qe.Message, r)
			}
		}
	})
}

func FuzzVersionNumber(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "01", "+1", "1.0", "9223372036854775807", "9223372036854775808", " 1", "1e3", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := VersionNumber(s)
		if err != nil {
			invalid(t, "VersionNumber", err)
			return
		}
		if n <= 0 || strconv.Itoa(n) != s {
			t.Fatalf("VersionNumber(%q) = %d", s, n)
		}
	})
}
