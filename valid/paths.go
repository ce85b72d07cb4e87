package valid

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quire/quire"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Paths of one version must stay distinct where they are checked out:
// macOS and Windows file systems ignore case, and macOS also Unicode
// normalization, so "Readme.md" and "README.md", or "é.md" written
// precomposed and decomposed, would be one file there. Directories count
// too: "Docs/a.md" and "docs/b.md" would merge into one directory, so they
// collide as well. Paths equal byte for byte are the same path (an update),
// never a collision.

// FoldName returns the form of one path component such file systems
// compare: canonical caseless matching (Unicode NFC of the full case
// folding of the NFD form).
func FoldName(name string) string {
	if isASCII(name) {
		return asciiLower(name)
	}
	return norm.NFC.String(cases.Fold().String(norm.NFD.String(name)))
}

// Folded is a name folded once, to compare with many others (the entries
// of a directory) cheaply: an upsert compares the name it writes with
// every entry of the directory it goes in.
type Folded struct {
	key   string
	ascii bool
}

// Fold folds name for Matches.
func Fold(name string) Folded {
	k := FoldName(name)
	return Folded{key: k, ascii: isASCII(k)}
}

// Matches reports whether other is the same name after folding (equal
// names included). Folding maps each character on its own and an ASCII
// character to its lower case, so ASCII is compared byte by byte and only
// names holding other characters are folded.
func (f Folded) Matches(other string) bool {
	if !f.ascii {
		return !isASCII(other) && FoldName(other) == f.key
	}
	n := min(len(other), len(f.key))
	for i := 0; i < n; i++ {
		c := other[i]
		if c >= 0x80 {
			return FoldName(other) == f.key
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != f.key[i] {
			return false
		}
	}
	if len(other) == len(f.key) || isASCII(other[n:]) {
		return len(other) == len(f.key)
	}
	return FoldName(other) == f.key
}

// PathCollision is the error for path p, which collides with the path
// existing already in the version: 409, naming both. existing ends in "/"
// when it is a directory, and so may p.
func PathCollision(p, existing string) *quire.Error {
	// The names that collide: the last of existing, and p's at its depth.
	b := strings.TrimSuffix(existing, "/")
	depth := strings.Count(b, "/")
	b = b[strings.LastIndexByte(b, '/')+1:]
	a := ""
	if comps := strings.Split(strings.TrimSuffix(p, "/"), "/"); depth < len(comps) {
		a = comps[depth]
	}
	how, show, showExisting := "case folding", Display(p), Display(existing)
	if norm.NFC.String(a) == norm.NFC.String(b) {
		// They look the same: show their code points.
		how, show, showExisting = "Unicode normalization (NFC)", strconv.QuoteToASCII(p), strconv.QuoteToASCII(existing)
	}
	return quire.Errorf(quire.ECONFLICT, "path %s collides with %s after %s: macOS and Windows would check them out as one", show, showExisting, how).
		WithDetail("path", p).WithDetail("existing", existing).
		WithDetail("rule", "paths must differ after Unicode normalization and case folding")
}

// PathSet is a set of paths of one version with the directories they
// imply, by folded form: adding a path that collides with one added
// before is an error naming that one.
type PathSet struct {
	m map[string]string // folded prefix -> exact prefix, "/" ending a directory
}

// NewPathSet returns an empty set sized for about n paths.
func NewPathSet(n int) *PathSet {
	return &PathSet{m: make(map[string]string, n)}
}

// Add adds the file path p (dir false) or directory path p (dir true), or
// returns PathCollision when p or one of its directories collides with a
// path in the set. A path already in the set byte for byte is no
// collision; a file where a directory of the same name is (or the
// reverse) is left to the caller.
func (s *PathSet) Add(p string, dir bool) error {
	var key strings.Builder
	for i := 0; i <= len(p); {
		j := strings.IndexByte(p[i:], '/')
		isDir := j >= 0 || dir
		if j < 0 {
			j = len(p)
		} else {
			j += i
		}
		if i > 0 {
			key.WriteByte('/')
		}
		key.WriteString(FoldName(p[i:j]))
		exact := p[:j]
		if isDir {
			exact += "/"
		}
		k := key.String()
		switch old, ok := s.m[k]; {
		case !ok:
			s.m[k] = exact
		case strings.TrimSuffix(old, "/") != p[:j]:
			if dir {
				return PathCollision(p+"/", old)
			}
			return PathCollision(p, old)
		}
		i = j + 1
	}
	return nil
}

// Paths checks a whole set of file paths (a zip, the files of one
// request) for collisions among themselves.
func Paths(paths []string) error {
	s := NewPathSet(len(paths))
	for _, p := range paths {
		if err := s.Add(p, false); err != nil {
			return err
		}
	}
	return nil
}

// Display returns path p as a message may show it: unchanged when every
// character is visible, else quoted with escapes, so that a bidi control
// or an invisible character cannot make it read as another path.
func Display(p string) string {
	if !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return !unicode.IsGraphic(r) }) {
		return strconv.QuoteToGraphic(p)
	}
	return p
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// asciiLower lowers s without allocating when it has no upper case.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// bidiControl reports whether r is a bidirectional formatting character:
// in a path it can make a name display as another (U+202E turns
// "evil\u202Etxt.exe" into "evilexe.txt").
func bidiControl(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f
}

// PromptLayout checks the root of a prompt version: a template
// (prompt.txt) or messages (messages/), never both, which is the rule the
// API applies to its template and messages fields.
func PromptLayout(hasTemplate, hasMessages bool) error {
	if hasTemplate && hasMessages {
		return quire.Errorf(quire.EINVALID, "a prompt version holds %s or %s/, not both", quire.PromptTemplateFile, quire.PromptMessagesDir).
			WithDetail("rule", "prompt layout")
	}
	return nil
}
