package app

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/render"
)

// TestSchemaConformanceCorpus checks that the typed-variable answers of
// the SDKs' conformance corpus (render/testdata/conformance.json, whose
// generator in render restates this package's check because render may
// not import app) are what the server's check answers: compileSchema,
// schemaErrors and schemaError, as renderCompiled calls them.
func TestSchemaConformanceCorpus(t *testing.T) {
	raw, err := os.ReadFile("../render/testdata/conformance.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct {
		Cases []struct {
			Name            string          `json:"name"`
			Variables       json.RawMessage `json:"variables"`
			VariablesSchema json.RawMessage `json:"variables_schema"`
			Error           *struct {
				Code    quire.Code     `json:"code"`
				Message string         `json:"message"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &corpus); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range corpus.Cases {
		if c.VariablesSchema == nil {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			s, err := compileSchema(c.VariablesSchema)
			if err != nil {
				t.Fatal(err)
			}
			vars, err := render.DecodeVars(c.Variables)
			if err != nil {
				t.Fatal(err)
			}
			errs, err := schemaErrors(s, vars)
			if err != nil {
				t.Fatal(err)
			}
			if len(errs) == 0 {
				if c.Error != nil && strings.Contains(c.Error.Message, "variables_schema") {
					t.Fatalf("the server's check passes; the corpus says %q", c.Error.Message)
				}
				return
			}
			got := schemaError(errs)
			b, _ := json.Marshal(quire.ErrorDetails(got))
			var details map[string]any
			json.Unmarshal(b, &details)
			if c.Error == nil || c.Error.Code != quire.ErrorCode(got) || c.Error.Message != quire.ErrorMessage(got) || !reflect.DeepEqual(c.Error.Details, details) {
				t.Fatalf("the server answers %q %v; the corpus says %+v", quire.ErrorMessage(got), details, c.Error)
			}
		})
	}
	if n < 10 {
		t.Fatalf("%d typed-variable cases in the corpus", n)
	}
}
