package httpapi

import (
	"strings"
	"unicode/utf8"
)

// A quoting is one way of quoting a string as JSON, as the hot path
// writes them by hand: a render's text as encoding/json.Marshal quotes it
// (jsonQuoting, so the answer stays byte for byte c.JSON's), an access
// line's strings as slog's JSON handler does (slogQuoting, so the line
// stays slog's). Marshaling the text cost an allocation and a pass
// through reflection per render, and jsontext.AppendQuote, which neither
// allocates nor reflects, escapes neither way (it leaves <, > and &
// alone and names \b and \f); no library appends with either's escapes.
type quoting struct {
	// plain are the bytes copied as they are.
	plain [256]bool
	// named are the escapes by name: '"' → \", '\n' → \n. Any other
	// byte below 0x80 that is not plain is written \u00XX; a byte from
	// 0x80 on that is not plain makes append give up.
	named [256]byte
}

// newQuoting is a quoting whose plain bytes are ASCII from 0x20 on but
// those in escaped (and every byte from 0x80 on, when nonASCII), and
// whose escapes by name are named's pairs of a byte and its letter.
func newQuoting(escaped string, nonASCII bool, named ...[2]byte) *quoting {
	q := &quoting{}
	for b := 0x20; b < len(q.plain); b++ {
		q.plain[b] = b >= utf8.RuneSelf && nonASCII || b < utf8.RuneSelf && !strings.ContainsRune(escaped, rune(b))
	}
	for _, n := range named {
		q.named[n[0]] = n[1]
	}
	return q
}

var (
	// jsonQuoting is encoding/json's, HTML escapes included, for ASCII
	// text: other text is left to json.Marshal, which checks its UTF-8
	// and escapes U+2028 and U+2029.
	jsonQuoting = newQuoting(`"\\<>&`, false,
		[2]byte{'"', '"'}, [2]byte{'\\', '\\'}, [2]byte{'\b', 'b'}, [2]byte{'\f', 'f'},
		[2]byte{'\n', 'n'}, [2]byte{'\r', 'r'}, [2]byte{'\t', 't'})
	// slogQuoting is slog's JSON handler's for ASCII strings, the only
	// ones it is given (accessLine.ascii); other bytes are copied.
	slogQuoting = newQuoting(`"\\`, true,
		[2]byte{'"', '"'}, [2]byte{'\\', '\\'}, [2]byte{'\n', 'n'}, [2]byte{'\r', 'r'}, [2]byte{'\t', 't'})
)

// append appends s quoted and reports true, or reports false and
// appends nothing when s has a byte from 0x80 on that q does not copy.
// TestAppendJSONString holds jsonQuoting to json.Marshal, and
// TestAccessLineIsSlogs slogQuoting to slog.
func (q *quoting) append(dst []byte, s string) ([]byte, bool) {
	const digits = "0123456789abcdef"
	n := len(dst)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		b := s[i]
		if q.plain[b] {
			continue
		}
		if b >= utf8.RuneSelf {
			return dst[:n], false
		}
		dst = append(dst, s[start:i]...)
		if c := q.named[b]; c != 0 {
			dst = append(dst, '\\', c)
		} else {
			dst = append(dst, '\\', 'u', '0', '0', digits[b>>4], digits[b&0xF])
		}
		start = i + 1
	}
	return append(append(dst, s[start:]...), '"'), true
}
