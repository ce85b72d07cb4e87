package valid

import (
	"regexp"
	"unicode/utf8"

	"github.com/quire/quire"
)

// Review and label rules, shared by the API and anything else that
// opens reviews or moves labels (a git push option, the CLI).

// labelName is the form of a label: it becomes the ref refs/labels/<name>.
// At most MaxLabel characters.
const LabelPattern = `^[a-z0-9][a-z0-9-]{0,31}$`

var labelName = regexp.MustCompile(LabelPattern)

// LabelName checks a label name; live is reserved (moving live is promote).
func LabelName(name string) error {
	if !labelName.MatchString(name) {
		return quire.Errorf(quire.EUNPROCESSABLE, "label name must match [a-z0-9][a-z0-9-]{0,31}")
	}
	if name == "live" {
		return quire.Errorf(quire.EUNPROCESSABLE, "label live is reserved: promote a version to make it live")
	}
	return nil
}

// MaxCommentBody bounds a comment's body (and a verdict's, a review's
// description).
const MaxCommentBody = 64 << 10

// ReviewText checks a review text field: present when required, valid
// UTF-8 (the body decoder has checked), at most max bytes.
func ReviewText(field, s string, required bool, max int) error {
	if required && s == "" {
		return quire.Errorf(quire.EINVALID, "%s is required", field)
	}
	if len(s) > max {
		return quire.Errorf(quire.ETOOLARGE, "%s is over %d bytes", field, max).WithDetail("limit", max)
	}
	if !utf8.ValidString(s) {
		return quire.Errorf(quire.EINVALID, "%s must be valid UTF-8", field)
	}
	return nil
}

// CommitID checks a commit id a client names (the head a verdict is
// for): a full hexadecimal object id, SHA-1 or SHA-256, in lower case as
// quire writes them.
func CommitID(field, s string) error {
	if len(s) != 40 && len(s) != 64 {
		return quire.Errorf(quire.EINVALID, "%s must be a full commit id (40 hexadecimal digits)", field)
	}
	for i := range len(s) {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return quire.Errorf(quire.EINVALID, "%s must be a full commit id (40 hexadecimal digits)", field)
		}
	}
	return nil
}
