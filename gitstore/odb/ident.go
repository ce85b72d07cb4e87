package odb

import (
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
)

// Fallbacks for an ident part that is empty once cleaned.
const (
	fallbackName  = "quire"
	fallbackEmail = "quire@localhost"
)

// Signature is the one way an actor becomes a commit's author and
// committer or a tag's tagger: every name and email goes through
// identPart, so no user or key name can add a header line to a commit.
func Signature(by quire.Actor, when time.Time) object.Signature {
	return object.Signature{
		Name:  identPart(by.Name, fallbackName),
		Email: identPart(by.Email, fallbackEmail),
		When:  when,
	}
}

// identPart makes s safe as the name or the email of a git ident line
// ("Name <email> 1700000000 +0000"). git fsck refuses '<', '>' and a
// newline in either, and a CR or NUL there breaks readers that split
// headers, so '<' and '>' are dropped, control characters become spaces,
// blanks collapse to one and the ends are trimmed. An empty result (git
// refuses an empty name too) becomes fallback.
func identPart(s, fallback string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r == '<' || r == '>':
			return -1
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			return ' '
		}
		return r
	}, s)
	clean = strings.Join(strings.Fields(clean), " ")
	if clean == "" {
		return fallback
	}
	return clean
}

// ObjectMessage keeps a commit or tag message free of NUL bytes, which
// git fsck --strict refuses in a commit (nulInCommit) and which would cut
// a tag message short for git's readers.
func ObjectMessage(msg string) string {
	return strings.ReplaceAll(msg, "\x00", "\uFFFD")
}
