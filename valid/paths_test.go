package valid

import (
	"strconv"
	"strings"
	"testing"

	"github.com/quire/quire"
)

func TestFilePathBidi(t *testing.T) {
	for _, r := range []rune{0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f} {
		for _, p := range []string{"evil" + string(r) + "txt.exe", "dir" + string(r) + "/a.md", "a/" + string(r)} {
			err := FilePath(p)
			if quire.ErrorCode(err) != quire.EINVALID || !strings.Contains(quire.ErrorMessage(err), "bidirectional control") {
				t.Errorf("FilePath(%q) = %v, want the bidi rule", p, err)
			}
			if rule, _ := quire.ErrorDetails(err)["rule"].(string); !strings.Contains(rule, "bidirectional") {
				t.Errorf("FilePath(%q): rule detail %q", p, rule)
			}
		}
	}
	// Neighbours of the refused ranges stay allowed.
	for _, p := range []string{"a\u2029b.md", "a\u206ab.md", "a\u2010b.md", "\u05e9\u05dc\u05d5\u05dd.md"} {
		if err := FilePath(p); err != nil {
			t.Errorf("FilePath(%q) = %v, want ok", p, err)
		}
	}
}

func TestPaths(t *testing.T) {
	const (
		nfc = "caf\u00e9.md"  // é precomposed
		nfd = "cafe\u0301.md" // e + combining acute
	)
	for _, tc := range []struct {
		name     string
		paths    []string
		existing string // "" when the set is fine
		how      string
	}{
		{"distinct", []string{"SKILL.md", "scripts/run.py", "scripts/Run2.py", "docs/a.md", "docs/b.md"}, "", ""},
		{"same path twice is no collision", []string{"a.md", "a.md", "d/x", "d/x"}, "", ""},
		{"case", []string{"README.md", "readme.md"}, "README.md", "case folding"},
		{"case deep", []string{"a/b/File.txt", "a/b/file.TXT"}, "a/b/File.txt", "case folding"},
		{"directory case", []string{"Docs/a.md", "docs/b.md"}, "Docs/", "case folding"},
		{"file and directory case", []string{"docs", "Docs/b.md"}, "docs", "case folding"},
		{"directory then file", []string{"Docs/b.md", "docs"}, "Docs/", "case folding"},
		{"NFC and NFD", []string{nfc, nfd}, nfc, "Unicode normalization (NFC)"},
		{"NFD directory", []string{"caf\u00e9/x", "cafe\u0301/y"}, "caf\u00e9/", "Unicode normalization (NFC)"},
		{"full folding sharp s", []string{"stra\u00dfe.md", "STRASSE.md"}, "stra\u00dfe.md", "case folding"},
		{"kelvin sign", []string{"k.md", "\u212a.md"}, "k.md", "case folding"},
		{"greek final sigma", []string{"\u03c3.md", "\u03c2.md"}, "\u03c3.md", "case folding"},
		{"dotless and dotted i differ", []string{"i.md", "\u0131.md"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Paths(tc.paths)
			if tc.existing == "" {
				if err != nil {
					t.Fatalf("Paths(%q) = %v, want ok", tc.paths, err)
				}
				return
			}
			if quire.ErrorCode(err) != quire.ECONFLICT {
				t.Fatalf("Paths(%q) = %v, want a conflict", tc.paths, err)
			}
			d := quire.ErrorDetails(err)
			last := tc.paths[len(tc.paths)-1]
			if d["existing"] != tc.existing || d["path"] != last {
				t.Errorf("details %v, want existing %q, path %q", d, tc.existing, last)
			}
			want := "path " + last + " collides with " + tc.existing + " after " + tc.how
			if strings.Contains(tc.how, "NFC") { // they look the same: code points shown
				want = "path " + strconv.QuoteToASCII(last) + " collides with " + strconv.QuoteToASCII(tc.existing) + " after " + tc.how
			}
			if msg := quire.ErrorMessage(err); !strings.HasPrefix(msg, want) {
				t.Errorf("message %q, want it to start %q", msg, want)
			}
		})
	}
}

func TestFoldedMatches(t *testing.T) {
	names := []string{"a", "A", "ab", "AB", "aB", "k", "K", "\u212a", "s", "\u017f", "ss", "\u00df", "SS",
		"caf\u00e9", "cafe\u0301", "CAF\u00c9", "x.md", "X.MD", "x.mD", "\u0130", "i\u0307", "i", "I", "\u0131", ""}
	for _, a := range names {
		f := Fold(a)
		for _, b := range names {
			if got, want := f.Matches(b), FoldName(a) == FoldName(b); got != want {
				t.Errorf("Fold(%q).Matches(%q) = %v, want %v", a, b, got, want)
			}
		}
	}
}

func TestPromptLayout(t *testing.T) {
	if err := PromptLayout(true, true); quire.ErrorCode(err) != quire.EINVALID || !strings.Contains(quire.ErrorMessage(err), "prompt.txt or messages/, not both") {
		t.Fatalf("both: %v", err)
	}
	for _, c := range [][2]bool{{true, false}, {false, true}, {false, false}} {
		if err := PromptLayout(c[0], c[1]); err != nil {
			t.Errorf("PromptLayout(%v) = %v", c, err)
		}
	}
}

// FuzzPaths checks PathSet against its statement: two paths collide when
// some prefix of one (whole components) folds, component by component, to
// a prefix of the other without being equal to it.
func FuzzPaths(f *testing.F) {
	f.Add("README.md", "readme.md")
	f.Add("Docs/a.md", "docs/b.md")
	f.Add("caf\u00e9", "cafe\u0301/x")
	f.Add("a/b", "a/b")
	f.Add("stra\u00dfe/x", "STRASSE")
	f.Fuzz(func(t *testing.T, a, b string) {
		if FilePath(a) != nil || FilePath(b) != nil {
			return
		}
		err := Paths([]string{a, b})
		ca, cb := strings.Split(a, "/"), strings.Split(b, "/")
		want := false
		for i := 0; i < min(len(ca), len(cb)); i++ {
			if ca[i] == cb[i] {
				continue
			}
			want = FoldName(ca[i]) == FoldName(cb[i])
			break
		}
		if (err != nil) != want {
			t.Fatalf("Paths(%q, %q) = %v, want collision %v", a, b, err, want)
		}
		if err != nil && quire.ErrorCode(err) != quire.ECONFLICT {
			t.Fatalf("Paths(%q, %q): code %s", a, b, quire.ErrorCode(err))
		}
	})
}

func TestDisplay(t *testing.T) {
	for in, want := range map[string]string{
		"scripts/run.py":      "scripts/run.py",
		"caf\u00e9/\u05e9.md": "caf\u00e9/\u05e9.md",
		"evil\u202etxt.exe":   `"evil\u202etxt.exe"`,
		"a\u200bb":            `"a\u200bb"`,
		"bad\xff":             `"bad\xff"`,
	} {
		if got := Display(in); got != want {
			t.Errorf("Display(%q) = %s, want %s", in, got, want)
		}
	}
}

// FuzzFold checks the byte-wise fast path of Folded.Matches against
// folding both names.
func FuzzFold(f *testing.F) {
	f.Add("README.md", "readme.md")
	f.Add("k.md", "\u212a.md")
	f.Add("strasse", "stra\u00dfe")
	f.Add("file-0500.md", "file-0501.md")
	f.Add("ab", "a\u0301")
	f.Fuzz(func(t *testing.T, a, b string) {
		if got, want := Fold(a).Matches(b), FoldName(a) == FoldName(b); got != want {
			t.Fatalf("Fold(%q).Matches(%q) = %v; FoldName equal: %v", a, b, got, want)
		}
	})
}
