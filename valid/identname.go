package valid

import (
	"strings"

	"github.com/quire/quire"
)

// identBytes are what git's ident lines cannot carry: "Name <email> time
// zone" ends at a line break or NUL, and the email is cut out between
// '<' and '>', so any of them in a name lets it forge or break the line.
const identBytes = "\n\r\x00<>"

// IdentName checks a name that becomes (part of) a commit's author or
// committer ident, a user's display name or an API key's name: Name's
// rules, and none of LF, CR, NUL, '<' or '>'. The error names the field in
// its message and in details.field.
func IdentName(field, s string, max int) error {
	if err := Name(field, s, max); err != nil {
		return withField(err, field)
	}
	if i := strings.IndexAny(s, identBytes); i >= 0 {
		return quire.Errorf(quire.EINVALID, "%s must not contain line breaks, NUL, '<' or '>' (it becomes a git author name)", field).
			WithDetail("field", field).WithDetail("rule", "ident")
	}
	return nil
}

// withField adds details.field to a quire error.
func withField(err error, field string) error {
	if e, ok := err.(*quire.Error); ok {
		return e.WithDetail("field", field)
	}
	return err
}
