package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"

	"github.com/quire/quire"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Typed variables in the conformance corpus: the SDKs check a version's
// variables_schema locally when it keeps to the keywords they implement
// (type, enum, const, required, properties, additionalProperties, items,
// min/maxProperties, min/maxItems, min/maxLength, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, not, allOf, anyOf, oneOf, if/then/
// else, boolean schemas, and annotations), and must answer
// the server's 422 word for word. checkSchema is the server's check
// (app/schema.go: compileSchema, schemaErrors, schemaError), restated
// here since render must not import app; app's TestSchemaConformanceCorpus
// checks the corpus's answers against the original.

func schemaObj(s string) json.RawMessage { return json.RawMessage(s) }

var schemaCases = []conformanceCase{
	{Name: "schema/valid variables render", Template: str("{{name}} is {{age}}"),
		VariablesSchema: schemaObj(`{"type":"object","required":["name","age"],"properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}}}`),
		Variables:       json.RawMessage(`{"name":"Ann","age":7}`)},
	{Name: "schema/the docs' example", Template: str("{{name}} is {{age}}"),
		VariablesSchema: schemaObj(`{"type":"object","required":["name","age"],"properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}}}`),
		Variables:       json.RawMessage(`{"name":"A","age":-1}`)},
	{Name: "schema/missing properties before the render's missing variables", Template: str("{{name}} {{age}}"),
		VariablesSchema: schemaObj(`{"required":["name","age"]}`), Variables: json.RawMessage(`{}`)},
	{Name: "schema/one missing property", Template: str("{{a}}"),
		VariablesSchema: schemaObj(`{"required":["a"]}`), Variables: json.RawMessage(`{"b":1}`)},
	{Name: "schema/several keywords of one subschema", Template: str("x"),
		VariablesSchema: schemaObj(`{"properties":{"l":{"type":"array","items":{"type":"string"},"minItems":3}}}`), Variables: json.RawMessage(`{"l":[1,"a"]}`)},
	{Name: "schema/errors of the root and of properties", Template: str("x"),
		VariablesSchema: schemaObj(`{"type":"object","required":["name","age","x"],"properties":{"name":{"type":"string","minLength":3},"age":{"type":"integer","minimum":0}},"additionalProperties":false}`),
		Variables:       json.RawMessage(`{"name":"A","age":-1.5,"extra":1}`)},
	{Name: "schema/types", Template: str("x"),
		VariablesSchema: schemaObj(`{"properties":{"t":{"type":["string","null"]},"n":{"type":"number"},"i":{"type":"integer"},"b":{"type":"boolean"},"o":{"type":"object"},"a":{"type":"array"},"ok":{"type":"integer"}}}`),
		Variables:       json.RawMessage(`{"t":1,"n":"x","i":1.5,"b":null,"o":[],"a":{},"ok":2.0}`)},
	{Name: "schema/numbers in messages", Template: str("x"),
		VariablesSchema: schemaObj(`{"properties":{"a":{"maximum":999999},"b":{"minimum":1000000},"c":{"exclusiveMaximum":0.0001},"d":{"exclusiveMinimum":-0.5},"e":{"maximum":-1e300},"f":{"maximum":1}}}`),
		Variables:       json.RawMessage(`{"a":1234567.5,"b":123456.5,"c":0.00001,"d":-2e-7,"e":12345678901234567890,"f":1e21}`)},
	{Name: "schema/lengths count characters", Template: str("x"),
		VariablesSchema: schemaObj(`{"properties":{"s":{"maxLength":2},"t":{"minLength":1200},"l":{"maxItems":1},"o":{"minProperties":2,"maxProperties":0}}}`),
		Variables:       json.RawMessage(`{"s":"héllo🙂","t":"abc","l":[1,2],"o":{"k":1}}`)},
	{Name: "schema/enum and const", Template: str("x"),
		VariablesSchema: schemaObj(`{"properties":{"e":{"enum":["a'b",true,null,1.5]},"f":{"enum":[1]},"g":{"const":null},"h":{"const":[1]},"i":{"enum":[{"x":1},2]},"j":{"const":"x\"y"},"k":{"enum":[1,2]},"m":{"const":{"a":[1,2.0]}}}}`),
		Variables:       json.RawMessage(`{"e":"q","f":2,"g":1,"h":2,"i":3,"j":"z","k":2.0,"m":{"a":[1,2]}}`)},
	{Name: "schema/nested objects and additionalProperties schemas", Template: str("x"),
		VariablesSchema: schemaObj(`{"properties":{"o":{"properties":{"p":{"type":"string"},"q":{"type":"string"}}},"r":{"additionalProperties":{"type":"string"}}}}`),
		Variables:       json.RawMessage(`{"o":{"p":1,"q":2},"r":{"s":1}}`)},
	{Name: "schema/allOf and anyOf", Template: str("x"),
		VariablesSchema: schemaObj(`{"allOf":[{"required":["a"]},{"required":["b"]},{"properties":{"c":{"type":"string"}}}],"anyOf":[{"required":["x"]},{"properties":{"c":{"minimum":10}}}]}`),
		Variables:       json.RawMessage(`{"c":1}`)},
	{Name: "schema/anyOf matched", Template: str("{{c}}"),
		VariablesSchema: schemaObj(`{"anyOf":[{"required":["x"]},{"required":["c"]}]}`), Variables: json.RawMessage(`{"c":1}`)},
	{Name: "schema/oneOf none and two matched", Template: str("x"),
		VariablesSchema: schemaObj(`{"properties":{"n":{"oneOf":[{"type":"string"},{"type":"boolean"}]},"t":{"oneOf":[{"type":"integer"},{"minimum":0},{"maximum":1}]}}}`),
		Variables:       json.RawMessage(`{"n":1,"t":5}`)},
	{Name: "schema/not, if then else, false schemas", Template: str("x"),
		VariablesSchema: schemaObj(`{"not":{"required":["forbidden"]},"if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["a"]},"else":{"required":["b"]},"properties":{"never":false,"list":{"items":false}}}`),
		Variables:       json.RawMessage(`{"forbidden":1,"kind":"a","never":null,"list":[1]}`)},
	{Name: "schema/else branch", Template: str("x"),
		VariablesSchema: schemaObj(`{"if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["a"]},"else":{"required":["b"]}}`),
		Variables:       json.RawMessage(`{"kind":"z"}`)},
	{Name: "schema/a single combinator error at the root", Template: str("x"),
		VariablesSchema: schemaObj(`{"allOf":[{"required":["a"]},{"properties":{"o":{"properties":{"p":{"type":"string"},"q":{"type":"string"}}}}}]}`),
		Variables:       json.RawMessage(`{"o":{"p":1,"q":2}}`)},
	{Name: "schema/annotations are not checked", Template: str("{{a}}"),
		VariablesSchema: schemaObj(`{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"T","description":"D","$comment":"c","properties":{"a":{"type":"string","default":"x","examples":["y"],"deprecated":true,"readOnly":true}}}`),
		Variables:       json.RawMessage(`{"a":"ok"}`)},
}

// checkSchema is the server's check of vars against a variables_schema.
func checkSchema(raw json.RawMessage, vars Vars) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "quire:///variables.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return err
	}
	s, err := c.Compile(url)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(vars.JSON()))
	if err != nil {
		return err
	}
	var ve *jsonschema.ValidationError
	if err := s.Validate(inst); !errors.As(err, &ve) {
		return err
	}
	type schemaError struct {
		Path    string `json:"path"`
		Message string `json:"message"`
	}
	var out []schemaError
	seen := map[schemaError]bool{}
	var walk func(u *jsonschema.OutputUnit)
	walk = func(u *jsonschema.OutputUnit) {
		if u.Error != nil && len(u.Errors) == 0 {
			e := schemaError{Path: u.InstanceLocation, Message: u.Error.String()}
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
		for i := range u.Errors {
			walk(&u.Errors[i])
		}
	}
	walk(ve.BasicOutput())
	if len(out) == 0 {
		out = append(out, schemaError{Path: "", Message: ve.Error()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	msg := "variables do not satisfy the version's variables_schema"
	if len(out) > 0 {
		msg += ": " + out[0].Path + ": " + out[0].Message
	}
	return quire.Errorf(quire.EUNPROCESSABLE, "%s", msg).WithDetail("errors", out)
}
