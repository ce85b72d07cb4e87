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
	}
	for _, c := range strings.Split(p, "/") {
		switch {
		case c == "":
			return bad("must not have empty components")
		case c == "." || c == "..":
			return bad("must not have . or .. components")
		case strings.EqualFold(c, ".git"):
			return bad("must not have a .git component")
		}
	}
	return nil
}

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Slug checks a project, skill or prompt slug.
func Slug(s string) error {
	if !slugRE.MatchString(s) {
		return quire.Errorf(quire.EINVALID, "invalid slug %q: must match ^[a-z0-9][a-z0-9-]{0,62}$", s).WithDetail("rule", "slug")
	}
	return nil
}

// SlugFrom derives a slug from a name: lower case, runs of anything else
// turned into one dash, at most 63 characters. It returns "" when nothing
// usable is left.
func SlugFrom(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
		if b.Len() >= 63 {
			break
		}
	}
	return strings.TrimRight(b.String(), "-")
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

func frontMatterReasons(content []byte, slug string) []string {
	text := bytes.TrimPrefix(content, []byte("\xef\xbb\xbf"))
	text = bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(text, []byte("---\n")) {
		return []string{"SKILL.md must start with YAML front matter between --- lines"}
	}
	rest := text[4:]
	end := bytes.Index(rest, []byte("\n---"))
	if end < 0 {
		if bytes.HasPrefix(rest, []byte("---")) {
			end = -1
		} else {
			return []string{"SKILL.md front matter is not closed by a --- line"}
		}
	}
	var fm map[string]any
	if end >= 0 {
		if err := yaml.Unmarshal(rest[:end], &fm); err != nil {
			return []string{"SKILL.md front matter is not valid YAML"}
		}
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
