package valid

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/quire/quire"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Limits of a payload's assertions.
const (
	MaxAssertions        = 32
	MaxAssertionValue    = 16 << 10 // bytes of a string value or rubric
	MaxAssertionSchema   = 64 << 10 // bytes of a json_schema schema
	MaxAssertionName     = 256      // bytes of a judge's provider or model
	MaxAssertionOutput   = 1 << 24  // max_length's largest value
	assertionsPointerTop = "/assertions"
)

// assertionFields are the fields each kind takes besides type, and
// whether each is required.
var assertionFields = map[string]map[string]bool{
	quire.AssertContains:    {"value": true},
	quire.AssertNotContains: {"value": true},
	quire.AssertEquals:      {"value": true},
	quire.AssertRegex:       {"value": true},
	quire.AssertMaxLength:   {"value": true},
	quire.AssertJSONValid:   {},
	quire.AssertJSONSchema:  {"schema": true},
	quire.AssertLLMJudge:    {"rubric": true, "provider": false, "model": false},
}

// AssertionKinds lists the assertion types, sorted.
func AssertionKinds() []string {
	out := make([]string, 0, len(assertionFields))
	for k := range assertionFields {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// assertionError is the 422 for a malformed assertion at JSON pointer ptr.
func assertionError(ptr, format string, args ...any) error {
	return quire.Errorf(quire.EUNPROCESSABLE, "%s: %s", ptr, fmt.Sprintf(format, args...)).WithDetail("pointer", ptr)
}

// Assertions parses and checks a payload's assertions, raw JSON as the
// request gave it: an array of objects, each of a known type with only
// that type's fields. A malformed one is EUNPROCESSABLE with
// details.pointer, the JSON pointer to what is wrong in the request.
func Assertions(raw json.RawMessage) ([]quire.Assertion, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, assertionError(assertionsPointerTop, "must be an array of assertions")
	}
	if len(items) > MaxAssertions {
		return nil, assertionError(assertionsPointerTop, "at most %d assertions per payload, got %d", MaxAssertions, len(items))
	}
	out := make([]quire.Assertion, 0, len(items))
	for i, item := range items {
		a, err := assertion(fmt.Sprintf("%s/%d", assertionsPointerTop, i), item)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func assertion(ptr string, raw json.RawMessage) (quire.Assertion, error) {
	var a quire.Assertion
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return a, assertionError(ptr, "must be an object")
	}
	var typ string
	if t, ok := fields["type"]; !ok {
		return a, assertionError(ptr+"/type", "is required (one of %s)", strings.Join(AssertionKinds(), ", "))
	} else if err := json.Unmarshal(t, &typ); err != nil {
		return a, assertionError(ptr+"/type", "must be a string")
	}
	allowed, ok := assertionFields[typ]
	if !ok {
		return a, assertionError(ptr+"/type", "unknown assertion type %q (one of %s)", typ, strings.Join(AssertionKinds(), ", "))
	}
	a.Type = typ
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := allowed[k]; !ok && k != "type" {
			return a, assertionError(ptr+"/"+k, "unknown field %q for a %s assertion", k, typ)
		}
	}
	for k, required := range allowed {
		if _, ok := fields[k]; required && !ok {
			return a, assertionError(ptr+"/"+k, "is required for a %s assertion", typ)
		}
	}
	str := func(k string, max int, nonEmpty bool) (string, error) {
		v, ok := fields[k]
		if !ok {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", assertionError(ptr+"/"+k, "must be a string")
		}
		if len(s) > max {
			return "", assertionError(ptr+"/"+k, "is %d bytes; the limit is %d", len(s), max)
		}
		if nonEmpty && s == "" {
			return "", assertionError(ptr+"/"+k, "must not be empty")
		}
		if !utf8.ValidString(s) {
			return "", assertionError(ptr+"/"+k, "must be valid UTF-8")
		}
		return s, nil
	}
	switch typ {
	case quire.AssertContains, quire.AssertNotContains, quire.AssertEquals, quire.AssertRegex:
		s, err := str("value", MaxAssertionValue, typ != quire.AssertEquals)
		if err != nil {
			return a, err
		}
		if typ == quire.AssertRegex {
			if _, err := regexp.Compile(s); err != nil {
				return a, assertionError(ptr+"/value", "is not a regular expression (RE2 syntax): %v", err)
			}
		}
		a.Value, _ = json.Marshal(s)
	case quire.AssertMaxLength:
		var n int
		if err := json.Unmarshal(fields["value"], &n); err != nil || n < 0 || n > MaxAssertionOutput {
			return a, assertionError(ptr+"/value", "must be a whole number of characters from 0 to %d", MaxAssertionOutput)
		}
		a.Value, _ = json.Marshal(n)
	case quire.AssertJSONSchema:
		schema := fields["schema"]
		if len(schema) > MaxAssertionSchema {
			return a, assertionError(ptr+"/schema", "is %d bytes; the limit is %d", len(schema), MaxAssertionSchema)
		}
		if _, err := OutputSchema(schema); err != nil {
			return a, assertionError(ptr+"/schema", "%s", quire.ErrorMessage(err))
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, schema); err != nil {
			return a, assertionError(ptr+"/schema", "is not JSON")
		}
		a.Schema = buf.Bytes()
	case quire.AssertLLMJudge:
		var err error
		if a.Rubric, err = str("rubric", MaxAssertionValue, true); err != nil {
			return a, err
		}
		if a.Provider, err = str("provider", MaxAssertionName, false); err != nil {
			return a, err
		}
		if a.Model, err = str("model", MaxAssertionName, false); err != nil {
			return a, err
		}
	}
	return a, nil
}

// outputSchemaURL names a json_schema assertion's schema while compiled.
const outputSchemaURL = "quire:///output.schema.json"

// noSchemaLoader refuses every $ref outside the schema: an evaluation
// never fetches a URL or reads a file.
type noSchemaLoader struct{}

func (noSchemaLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references %s; only references within the schema are allowed", url)
}

// OutputSchema compiles a json_schema assertion's schema (JSON Schema
// 2020-12 unless it says otherwise, with the validator quire checks
// variables with). A schema that is not an object or does not compile
// is EUNPROCESSABLE.
func OutputSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "is not JSON")
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "must be a JSON Schema object")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noSchemaLoader{})
	if err := c.AddResource(outputSchemaURL, doc); err != nil {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "%v", err)
	}
	s, err := c.Compile(outputSchemaURL)
	if err != nil {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "is not a valid JSON Schema: %v", err)
	}
	return s, nil
}
