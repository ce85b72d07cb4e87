package render

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/quire/quire"
)

// Vars are decoded variables, ready to render with.
type Vars map[string]any

// DecodeVars decodes a JSON object of variables. Numbers keep the text
// they were sent as; null renders as nothing.
func DecodeVars(raw []byte) (Vars, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return Vars{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, quire.Errorf(quire.EINVALID, "variables must be a JSON object")
	}
	return VarsOf(m), nil
}

// VarsOf makes variables of an object decoded with json.Decoder.UseNumber
// (as DecodeVars does), for a caller that decoded it with the rest of a
// request. A nil m is no variables.
func VarsOf(m map[string]any) Vars {
	if m == nil {
		return Vars{}
	}
	return Vars(normalize(m).(map[string]any))
}

// number is a JSON number as sent, so 1000000 renders as 1000000, not
// 1e+06.
type number string

// normalize turns json.Number into number, in place.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		return number(x)
	case map[string]any:
		for k, e := range x {
			if n, ok := e.(json.Number); ok {
				x[k] = number(n)
			} else {
				normalize(e)
			}
		}
	case []any:
		for i, e := range x {
			if n, ok := e.(json.Number); ok {
				x[i] = number(n)
			} else {
				normalize(e)
			}
		}
	}
	return v
}

// JSON encodes v as a compact JSON object, numbers as they were sent:
// what a JSON Schema validator reads.
func (v Vars) JSON() []byte {
	return appendJSON(nil, map[string]any(v))
}

// Merge returns base with over's top-level keys laid on top.
func Merge(base, over Vars) Vars {
	if len(base) == 0 {
		return over
	}
	out := make(Vars, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// empty is Mustache falsiness for JSON values: null, false, an empty
// list, a blank string (as quire's first renderer had it).
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return strings.TrimSpace(x) == ""
	case number:
		return strings.TrimSpace(string(x)) == ""
	case []any:
		return len(x) == 0
	}
	return false
}

// appendValue appends the text {{x}} renders for v: strings and numbers
// as they are, booleans as true/false, null as nothing, objects and
// lists as compact JSON with the keys of objects sorted (a Go map keeps
// no order, and sorted keys make the text stable).
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return append(b, x...)
	case number:
		return append(b, x...)
	case bool:
		return strconv.AppendBool(b, x)
	case nil:
		return b
	}
	return appendJSON(b, v)
}

// appendJSON appends v as compact JSON, without the HTML escaping of
// encoding/json: a prompt is not HTML.
func appendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendJSONString(b, x)
	case number:
		return append(b, x...)
	case json.Number:
		return append(b, x...)
	case bool:
		return strconv.AppendBool(b, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSON(b, x[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e)
		}
		return append(b, ']')
	}
	// Not from JSON: a caller built Vars by hand.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return append(b, "null"...)
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as JSON escapes it, less the HTML
// escapes.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
