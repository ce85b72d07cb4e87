package app

import (
	"bytes"
	"errors"
	"fmt"
	"sort"

	"github.com/quire/quire"
	"github.com/quire/quire/render"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Typed variables: a version may carry a JSON Schema (2020-12) its
// variables must satisfy, compiled once per commit with the templates.

// SchemaError is one way variables fail a schema: Path is a JSON pointer
// into the variables ("" for the whole object).
type SchemaError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// noLoader refuses every $ref outside the schema: a render must never
// fetch a URL or read a file.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references %s; only references within the schema are allowed", url)
}

const schemaURL = "quire:///variables.schema.json"

// compileSchema compiles a version's variables_schema; nil when it has
// none. A schema that does not compile is EUNPROCESSABLE.
func compileSchema(raw []byte) (*jsonschema.Schema, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "variables_schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "variables_schema: %v", err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "variables_schema is not a valid JSON Schema: %v", err)
	}
	return s, nil
}

// schemaErrors validates vars against s: nil when they satisfy it.
func schemaErrors(s *jsonschema.Schema, vars render.Vars) ([]SchemaError, error) {
	if s == nil {
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(vars.JSON()))
	if err != nil {
		return nil, err
	}
	err = s.Validate(doc)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil, nil
	}
	if !errors.As(err, &ve) {
		return nil, err
	}
	var out []SchemaError
	seen := map[SchemaError]bool{}
	var walk func(u *jsonschema.OutputUnit)
	walk = func(u *jsonschema.OutputUnit) {
		if u.Error != nil && len(u.Errors) == 0 {
			e := SchemaError{Path: u.InstanceLocation, Message: u.Error.String()}
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
		out = append(out, SchemaError{Path: "", Message: ve.Error()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// schemaError is the 422 for variables failing the schema.
func schemaError(errs []SchemaError) error {
	msg := "variables do not satisfy the version's variables_schema"
	if len(errs) > 0 {
		msg += ": " + errs[0].Path + ": " + errs[0].Message
	}
	return quire.Errorf(quire.EUNPROCESSABLE, "%s", msg).WithDetail("errors", errs)
}
