// Package valid holds every rule quire applies to names, slugs, paths and
// skill front matter, so the API, the zip importer and the git push checker
// share one definition.
package valid

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gosimple/slug"
	"github.com/quire/quire"
	"gopkg.in/yaml.v3"
)

// MaxPathBytes bounds a file path.
const MaxPathBytes = 4096

// FilePath checks a file path inside a version (DESIGN.md §3).
func FilePath(p string) error {
	bad := func(rule string) error {
		return quire.Errorf(quire.EINVALID, "invalid file_path: %s", rule).WithDetail("rule", rule)
	}
	switch {
	case p == "":
		return bad("must not be empty")
	case len(p) > MaxPathBytes:
		return bad(fmt.Sprintf("must be at most %d bytes", MaxPathBytes))
	case !utf8.ValidString(p):
		return bad("must be valid UTF-8")
	case strings.HasPrefix(p, "/"):
		return bad("must be relative (no leading /)")
	case strings.Contains(p, "\\"):
		return bad("must not contain a backslash")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return bad("must not contain NUL or control characters")
		}
		if bidiControl(r) {
			return bad("must not contain bidirectional control characters (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F)")
		}
	}
	comps := strings.Split(p, "/")
	for i, c := range comps {
		switch {
		case c == "":
			return bad("must not have empty components")
		case c == "." || c == "..":
			return bad("must not have . or .. components")
		case gitName(c, "git", "", true):
			return bad("must not have a .git component")
		case gitName(c, "gitmodules", "gi7eba", false):
			return bad("must not have a .gitmodules component")
		case i < len(comps)-1 && gitName(c, "gitattributes", "gi7d29", false):
			return bad("must not have a .gitattributes directory")
		}
	}
	return nil
}

// gitName reports whether git treats the path component c as the special
// name ".<name>" on some filesystem, so git fsck and clients refuse it (or
// check it) even on Linux: in any case, with code points HFS+ ignores
// inserted, or with what NTFS drops or aliases (trailing dots and spaces,
// an alternate data stream after ':', 8.3 short names such as git~1). It
// mirrors is_hfs_dotgit and is_ntfs_dotgit of git's path.c; short is the
// hashed short-name prefix git checks for the name ("" for .git, whose
// only short name is git~1).
func gitName(c, name, short string, dotgit bool) bool {
	if strings.EqualFold(hfsFold(c), "."+name) {
		return true
	}
	// NTFS: ".name" or a short name, then only dots and spaces, or ':'.
	rest, ok := "", false
	switch {
	case len(c) > len(name) && c[0] == '.' && strings.EqualFold(c[1:1+len(name)], name):
		rest, ok = c[1+len(name):], true
	case dotgit && len(c) >= 5 && strings.EqualFold(c[:5], "git~1"):
		rest, ok = c[5:], true
	case !dotgit && len(c) >= 8 && strings.EqualFold(c[:6], name[:6]) && c[6] == '~' && c[7] >= '1' && c[7] <= '4':
		rest, ok = c[8:], true
	case !dotgit:
		rest, ok = ntfsFallbackShortName(c, short)
	}
	if !ok {
		return false
	}
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case ':':
			return true
		case '.', ' ':
		default:
			return false
		}
	}
	return true
}

// ntfsFallbackShortName matches the hashed 8.3 short name NTFS may give a
// long name: up to six characters of prefix, '~', then digits, eight
// characters in all. It returns what follows.
func ntfsFallbackShortName(c, prefix string) (string, bool) {
	if len(c) < 8 {
		return "", false
	}
	sawTilde := false
	for i := 0; i < 8; i++ {
		ch := c[i]
		switch {
		case sawTilde:
			if ch < '0' || ch > '9' {
				return "", false
			}
		case ch == '~':
			i++
			if i >= 8 || c[i] < '1' || c[i] > '9' {
				return "", false
			}
			sawTilde = true
		case i >= 6 || ch >= 0x80:
			return "", false
		case toLowerASCII(ch) != prefix[i]:
			return "", false
		}
	}
	return c[8:], true
}

func toLowerASCII(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// hfsFold drops the code points HFS+ ignores when it compares names.
func hfsFold(c string) string {
	if !strings.ContainsFunc(c, hfsIgnorable) {
		return c
	}
	return strings.Map(func(r rune) rune {
		if hfsIgnorable(r) {
			return -1
		}
		return r
	}, c)
}

func hfsIgnorable(r rune) bool {
	return r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x206a && r <= 0x206f || r == 0xfeff
}

// MaxAttributesLine is the longest line (without its newline) git accepts
// in a .gitattributes file.
const MaxAttributesLine = 2047

// FileContent checks content that git itself inspects: a .gitattributes
// file with a longer line fails git fsck and is ignored by clients.
func FileContent(p string, content []byte) error {
	if !ContentChecked(p) {
		return nil
	}
	for line := range bytes.Lines(content) {
		if len(bytes.TrimSuffix(line, []byte("\n"))) > MaxAttributesLine {
			return quire.Errorf(quire.EINVALID, "%s: a line is longer than %d bytes, which git refuses", p, MaxAttributesLine).WithDetail("rule", "gitattributes line length")
		}
	}
	return nil
}

// SlugPattern is the form of a slug: at most MaxSlug characters.
const SlugPattern = `^[a-z0-9][a-z0-9-]{0,62}$`

// ProviderPattern is a model provider's name (quire serve --llm
// NAME=BASE_URL): part of an environment variable's name, so letters,
// digits, - and _ only.
const ProviderPattern = `^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`

// MaxProvider is the longest provider name ProviderPattern allows.
const MaxProvider = 63

var providerRE = regexp.MustCompile(ProviderPattern)

// ProviderName checks a model provider's name. It says nothing of
// whether the operator configured it: providers are the server's
// configuration and change without the prompts that name them.
func ProviderName(s string) error {
	if !providerRE.MatchString(s) {
		return quire.Errorf(quire.EINVALID, "provider must be 1-63 letters, digits, - and _, starting with a letter or digit").
			WithDetail("field", "provider").WithDetail("rule", "provider")
	}
	return nil
}

var slugRE = regexp.MustCompile(SlugPattern)

// Slug checks a project, skill or prompt slug.
func Slug(s string) error {
	if !slugRE.MatchString(s) {
		return quire.Errorf(quire.EINVALID, "invalid slug %q: must match ^[a-z0-9][a-z0-9-]{0,62}$", s).WithDetail("rule", "slug")
	}
	return nil
}

// SlugFrom derives a slug from a name with gosimple/slug (which
// transliterates: "Café" becomes "cafe", "C++ & Go" "c-and-go"), then keeps
// it to the slug rule: runs of anything but [a-z0-9] become one dash, at
// most 63 characters. It returns "" when nothing usable is left.
func SlugFrom(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range slug.Make(name) {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			dash = true
			continue
		}
		need := 1
		if dash && b.Len() > 0 {
			need = 2
		}
		if b.Len()+need > 63 {
			break
		}
		if need == 2 {
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(r)
	}
	return b.String()
}

// Name checks a display name: required, at most max characters, no
// control characters.
func Name(field, s string, max int) error {
	if strings.TrimSpace(s) == "" {
		return quire.Errorf(quire.EINVALID, "%s is required", field)
	}
	return Text(field, s, max)
}

// Text checks optional text: at most max characters, valid UTF-8, no
// control characters but newline and tab.
func Text(field, s string, max int) error {
	if !utf8.ValidString(s) {
		return quire.Errorf(quire.EINVALID, "%s must be valid UTF-8", field)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return quire.Errorf(quire.EINVALID, "%s must be at most %d characters (got %d)", field, max, n)
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			return quire.Errorf(quire.EINVALID, "%s must not contain control characters", field)
		}
	}
	return nil
}

// VersionNumber parses a {version} path parameter: a positive integer.
func VersionNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || strconv.Itoa(n) != s {
		return 0, quire.Errorf(quire.EINVALID, "version must be a positive integer, got %q", s)
	}
	return n, nil
}

var (
	skillNameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	xmlTagRE    = regexp.MustCompile(`<\s*/?\s*[A-Za-z][^>]*>`)
)

// SkillFile is the file every published skill version must have.
const SkillFile = "SKILL.md"

// SkillManifest checks SKILL.md against the open Agent Skills format and
// the skill's slug. It returns nil, or an EUNPROCESSABLE error whose
// "reasons" detail lists every rule broken.
func SkillManifest(content []byte, found bool, slug string) error {
	var reasons []string
	if !found {
		reasons = append(reasons, "SKILL.md is missing at the root of the version")
	} else {
		reasons = frontMatterReasons(content, slug)
	}
	if len(reasons) == 0 {
		return nil
	}
	return quire.Errorf(quire.EUNPROCESSABLE, "SKILL.md is not valid: %s", strings.Join(reasons, "; ")).
		WithDetail("reasons", reasons)
}

// SkillFrontMatter returns the YAML front matter of a SKILL.md (nil when
// it has none or it does not parse): what an agent's skill index shows.
func SkillFrontMatter(content []byte) (map[string]any, error) {
	fm, reason := frontMatter(content)
	if reason != "" {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "%s", reason)
	}
	return fm, nil
}

// frontMatter splits and parses the front matter of a SKILL.md; reason
// says why it could not.
func frontMatter(content []byte) (fm map[string]any, reason string) {
	text := bytes.TrimPrefix(content, []byte("\xef\xbb\xbf"))
	text = bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(text, []byte("---\n")) {
		return nil, "SKILL.md must start with YAML front matter between --- lines"
	}
	rest := text[4:]
	end := bytes.Index(rest, []byte("\n---"))
	if end < 0 {
		if bytes.HasPrefix(rest, []byte("---")) {
			end = -1
		} else {
			return nil, "SKILL.md front matter is not closed by a --- line"
		}
	}
	if end >= 0 {
		if err := yaml.Unmarshal(rest[:end], &fm); err != nil {
			return nil, "SKILL.md front matter is not valid YAML"
		}
	}
	return fm, ""
}

func frontMatterReasons(content []byte, slug string) []string {
	fm, reason := frontMatter(content)
	if reason != "" {
		return []string{reason}
	}
	var reasons []string
	name, _ := fm["name"].(string)
	switch {
	case name == "":
		reasons = append(reasons, "front matter name is required")
	default:
		if n := utf8.RuneCountInString(name); n > 64 {
			reasons = append(reasons, fmt.Sprintf("front matter name must be at most 64 characters (got %d)", n))
		}
		if !skillNameRE.MatchString(name) {
			reasons = append(reasons, "front matter name must match ^[a-z0-9]+(-[a-z0-9]+)*$")
		}
		if xmlTagRE.MatchString(name) {
			reasons = append(reasons, "front matter name must not contain XML tags")
		}
		if name != slug {
			reasons = append(reasons, fmt.Sprintf("front matter name %q must equal the skill's slug %q", name, slug))
		}
	}
	desc, _ := fm["description"].(string)
	switch {
	case strings.TrimSpace(desc) == "":
		reasons = append(reasons, "front matter description is required")
	default:
		if n := utf8.RuneCountInString(desc); n > 1024 {
			reasons = append(reasons, fmt.Sprintf("front matter description must be at most 1024 characters (got %d)", n))
		}
		if xmlTagRE.MatchString(desc) {
			reasons = append(reasons, "front matter description must not contain XML tags")
		}
	}
	return reasons
}

// ContentChecked reports whether FileContent reads the content of the file
// at p, so callers that must load content to check it (a push) load only
// those files.
func ContentChecked(p string) bool {
	return gitName(p[strings.LastIndexByte(p, '/')+1:], "gitattributes", "gi7d29", false)
}

// SkillDescription is the description in SKILL.md's front matter, or ""
// when there is none.
func SkillDescription(content []byte) string {
	fm, _ := frontMatter(content)
	d, _ := fm["description"].(string)
	return d
}

// SkillName reports whether s is a valid Agent Skills name: 1 to 64
// lowercase letters, digits and single inner hyphens.
func SkillName(s string) bool {
	return len(s) <= 64 && skillNameRE.MatchString(s)
}
