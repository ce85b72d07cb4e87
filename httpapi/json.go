package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// decode reads the JSON body of c into v. An unknown field, a wrong type,
// malformed JSON or an empty body is EINVALID (an unknown field named in
// details.field, so a typo never loses data quietly); a body over the
// limit is ETOOLARGE; a body whose Content-Type is not JSON EMEDIATYPE.
func (s *Server) decode(c *gin.Context, v any) error {
	b, err := s.readBody(c)
	if err != nil {
		return err
	}
	return decodeJSON(b, v, false)
}

// readBody reads the body of c whole (it is bounded), and refuses invalid
// UTF-8: the JSON decoder would quietly turn it into U+FFFD, and a file
// path the client never sent would be stored.
func (s *Server) readBody(c *gin.Context) ([]byte, error) {
	ctErr := jsonContentType(headerValue(c.Request.Header, "Content-Type"))
	if ctErr != nil && c.Request.ContentLength > 0 {
		return nil, ctErr // refused unread
	}
	var (
		b   []byte
		err error
	)
	if n := c.Request.ContentLength; n > 0 && n <= s.limits.MaxBody {
		// The length is known and within the limit (net/http reads no
		// further): one buffer of that size.
		b = make([]byte, n)
		_, err = io.ReadFull(c.Request.Body, b)
	} else {
		b, err = io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, s.limits.MaxBody))
	}
	if err != nil {
		return nil, jsonError(err, s.limits.MaxBody)
	}
	if ctErr != nil && len(bytes.TrimSpace(b)) > 0 {
		return nil, ctErr
	}
	if !utf8.Valid(b) {
		return nil, quire.Errorf(quire.EINVALID, "request body must be valid UTF-8")
	}
	return b, nil
}

// jsonContentType refuses a body declared as anything but JSON
// (application/json or a +json type). No Content-Type at all is taken as
// JSON, as most clients send it; an empty body needs none (readBody).
func jsonContentType(ct string) error {
	switch ct {
	case "", "application/json", "application/json; charset=utf-8":
		return nil // what clients send; the parser below costs a map
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return quire.Errorf(quire.EMEDIATYPE, "Content-Type %q is not JSON: send Content-Type: application/json (curl --json)", ct).
		WithDetail("content_type", ct)
}

// decodeJSON decodes the body b into v, numbers as json.Number if asked,
// and refuses unknown fields, trailing data and what checkJSON refuses.
func decodeJSON(b []byte, v any, useNumber bool) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if useNumber {
		dec.UseNumber()
	}
	if err := dec.Decode(v); err != nil {
		err = jsonError(err, 0)
		if f, ok := quire.ErrorDetails(err)["field"].(string); ok && strings.HasPrefix(quire.ErrorMessage(err), "unknown field") {
			if path := unknownFieldPath(b, reflect.TypeOf(v), f); path != "" && path != f {
				return quire.Errorf(quire.EINVALID, "unknown field %q", path).WithDetail("field", path)
			}
		}
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return quire.Errorf(quire.EINVALID, "malformed JSON: unexpected data after the object")
	}
	return checkJSON(b)
}

// checkJSON refuses what encoding/json accepts quietly but a client (or a
// proxy checking requests) may read otherwise: a key given twice, where
// the decoder keeps the last, and an escaped lone UTF-16 surrogate, which
// it turns into U+FFFD. At the top level, which maps to a request struct
// whose fields match keys case-insensitively, keys equal under Unicode
// case folding are the same key. b is a JSON value that decoded without
// error.
func checkJSON(b []byte) error {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++
		if b[i] != 'u' {
			continue
		}
		r, _ := strconv.ParseUint(string(b[i+1:i+5]), 16, 32)
		i += 4
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return quire.Errorf(quire.EINVALID, "malformed JSON: a lone UTF-16 surrogate \\u%04x", r)
		case r >= 0xd800 && r <= 0xdbff:
			if i+6 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
				return quire.Errorf(quire.EINVALID, "malformed JSON: a lone UTF-16 surrogate \\u%04x", r)
			}
			lo, _ := strconv.ParseUint(string(b[i+3:i+7]), 16, 32)
			if lo < 0xdc00 || lo > 0xdfff {
				return quire.Errorf(quire.EINVALID, "malformed JSON: a lone UTF-16 surrogate \\u%04x", r)
			}
			i += 6
		}
	}
	if dup, found, ok := scanKeys(b); ok {
		if found {
			return quire.Errorf(quire.EINVALID, "malformed JSON: key %q appears twice in an object", dup)
		}
		return nil
	}
	return walkKeys(b)
}

// walkKeys is checkJSON's duplicate key search over decoded tokens.
func walkKeys(b []byte) error {
	// open holds the containers being read: the keys seen in an object
	// (nil for an array), and whether a key comes next.
	type container struct {
		keys    map[string]bool
		wantKey bool
	}
	var open []*container
	valueDone := func() {
		if n := len(open); n > 0 && open[n-1].keys != nil {
			open[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return jsonError(err, 0)
		}
		if n := len(open); n > 0 && open[n-1].wantKey {
			if k, isKey := tok.(string); isKey {
				top := open[n-1]
				if n == 1 {
					k = foldKey(k)
				}
				if top.keys[k] {
					return quire.Errorf(quire.EINVALID, "malformed JSON: key %q appears twice in an object", tok)
				}
				top.keys[k], top.wantKey = true, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			open = append(open, &container{keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			open = append(open, &container{})
		case json.Delim('}'), json.Delim(']'):
			open = open[:len(open)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// scanKeys is checkJSON's duplicate key search without building tokens:
// every request body goes through it, and a token walk costs an
// allocation or more per token. b is well-formed JSON. It returns the
// first key given twice in an object (at the top level, twice under
// Unicode case folding), if found. ok is false when it cannot tell cheaply,
// for a key with an escape or an object of more than 64 keys, and the
// caller walks tokens instead.
func scanKeys(b []byte) (dup string, found, ok bool) {
	const maxKeys = 64
	// keys holds the keys of every open object, innermost last; open the
	// index in keys where each open container's keys start (-1: array).
	var keyBuf [32][]byte
	var openBuf [16]int
	keys, open := keyBuf[:0], openBuf[:0]
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{':
			open = append(open, len(keys))
		case '[':
			open = append(open, -1)
		case '}', ']':
			if len(open) == 0 {
				return "", false, false
			}
			if start := open[len(open)-1]; start >= 0 {
				keys = keys[:start]
			}
			open = open[:len(open)-1]
		case '"':
			j, escaped := i+1, false
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					escaped = true
					j++
				}
				j++
			}
			if j >= len(b) {
				return "", false, false
			}
			str := b[i+1 : j]
			i = j
			k := j + 1
			for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' || b[k] == '\r') {
				k++
			}
			if k == len(b) || b[k] != ':' {
				continue // a value, not a key
			}
			if escaped || len(open) == 0 || open[len(open)-1] < 0 {
				return "", false, false
			}
			start := open[len(open)-1]
			if len(keys)-start >= maxKeys {
				return "", false, false
			}
			for _, seen := range keys[start:] {
				if len(open) == 1 && bytes.EqualFold(seen, str) || bytes.Equal(seen, str) {
					return string(str), true, true
				}
			}
			keys = append(keys, str)
		}
	}
	return "", false, true
}

// foldKey maps every rune of k to the least rune of its Unicode simple
// case folding orbit, so foldKey(a) == foldKey(b) exactly when
// strings.EqualFold(a, b): how encoding/json matches keys to struct
// fields ("\u017fcope", with a long s, sets Scope).
func foldKey(k string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, k)
}

func jsonError(err error, limit int64) error {
	var (
		maxErr    *http.MaxBytesError
		typeErr   *json.UnmarshalTypeError
		syntaxErr *json.SyntaxError
	)
	switch {
	case errors.As(err, &maxErr):
		return quire.Errorf(quire.ETOOLARGE, "request body is larger than %d bytes", limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return quire.Errorf(quire.ETIMEOUT, "the request body arrived too slowly")
	case errors.Is(err, io.EOF):
		return quire.Errorf(quire.EINVALID, "request body is required")
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return quire.Errorf(quire.EINVALID, "request body must be a JSON object")
		}
		return quire.Errorf(quire.EINVALID, "field %s must be %s, not %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value).
			WithDetail("field", typeErr.Field)
	case errors.As(err, &syntaxErr):
		return quire.Errorf(quire.EINVALID, "malformed JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)
	}
	// encoding/json has no type for an unknown field, only this message.
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if name, uerr := strconv.Unquote(f); uerr == nil {
			return quire.Errorf(quire.EINVALID, "unknown field %q", name).WithDetail("field", name)
		}
	}
	return quire.Errorf(quire.EINVALID, "malformed JSON: %v", err)
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "map", "struct", "interface":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

// versionParam parses the {version} path parameter.
func versionParam(c *gin.Context) (int, error) {
	return valid.VersionNumber(c.Param("version"))
}

// listOptions reads ?limit= and ?cursor=.
func listOptions(c *gin.Context) (quire.ListOptions, error) {
	o := quire.ListOptions{Limit: 50, Cursor: c.Query("cursor")}
	if l := c.Query("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 500 {
			return o, quire.Errorf(quire.EINVALID, "limit must be an integer from 1 to 500")
		}
		o.Limit = n
	}
	return o, nil
}

// etagValue strips quotes and a weak prefix from an If-Match or
// If-None-Match header value.
func etagValue(h string) string {
	h = strings.TrimSpace(h)
	h = strings.TrimPrefix(h, "W/")
	return strings.Trim(h, `"`)
}

// ifMatch is a write's If-Match value, quotes stripped; app decides what
// it requires ("*": any existing version).
func ifMatch(c *gin.Context) string { return etagValue(c.GetHeader("If-Match")) }

// notModified answers 304 when the request's If-None-Match names etag.
func notModified(c *gin.Context, etag string) bool {
	c.Header("ETag", `"`+etag+`"`)
	inm := c.GetHeader("If-None-Match")
	if inm == "" {
		return false
	}
	for _, v := range strings.Split(inm, ",") {
		if v := etagValue(v); v == etag || v == "*" {
			c.Status(http.StatusNotModified)
			c.Abort()
			return true
		}
	}
	return false
}

func requireString(field string, v *string) error {
	if v == nil {
		return quire.Errorf(quire.EINVALID, "%s is required", field)
	}
	return nil
}

// unknownFieldPath finds the full path ("review_policy.required_aprovals")
// of the unknown key name in the JSON value b decoded into t: encoding/json
// names only the key, and a client fixing a nested typo needs to know
// where it is. It walks b beside t as the decoder does (keys matched
// without regard to case, embedded structs' fields promoted); "" when
// not found. Only an error path pays for it.
func unknownFieldPath(b []byte, t reflect.Type, name string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(b, &obj) != nil {
			return ""
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the same answer every time when two keys are unknown
		for _, k := range keys {
			ft, known := structField(t, k)
			if !known {
				if k == name {
					return k
				}
				continue
			}
			if sub := unknownFieldPath(obj[k], ft, name); sub != "" {
				return k + "." + sub
			}
		}
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(b, &items) != nil {
			return ""
		}
		for _, it := range items {
			if sub := unknownFieldPath(it, t.Elem(), name); sub != "" {
				return sub
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(b, &obj) != nil {
			return ""
		}
		for k, v := range obj {
			if sub := unknownFieldPath(v, t.Elem(), name); sub != "" {
				return k + "." + sub
			}
		}
	}
	return ""
}

// structField is the type of t's field that the JSON key k sets, as
// encoding/json matches it.
func structField(t reflect.Type, k string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if t, ok := structField(ft, k); ok {
					return t, true
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if strings.EqualFold(tag, k) {
			return f.Type, true
		}
	}
	return nil, false
}
