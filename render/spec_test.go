package render

import (
	"encoding/json"
	"errors"
	"html"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/quire/quire"
)

type specCase struct {
	Name     string            `json:"name"`
	Desc     string            `json:"desc"`
	Data     json.RawMessage   `json:"data"`
	Template string            `json:"template"`
	Partials map[string]string `json:"partials"`
	Expected string            `json:"expected"`
}

// deviation is how quire differs from the spec on one case, by design.
type deviation struct {
	// missing: the data lacks a name (or the partials a partial), which
	// quire answers with 422 naming it (details.missing) rather than "".
	missing []string
	// cycle: a partial includes itself, which quire refuses (422,
	// details.cycle) rather than recursing until the data runs out.
	cycle []string
	// raw: {{x}} is not HTML-escaped; the expected text is the spec's
	// with its HTML escapes undone.
	raw bool
	// object: the data is not a JSON object (quire's variables always
	// are); the case cannot be posed.
	object bool
}

// deviations are the spec cases quire answers differently, by design
// (docs/prompts.md lists them with the reasons). Every other case must
// render exactly what the spec expects.
var deviations = map[string]deviation{
	"interpolation.json/HTML Escaping":                                    {raw: true},
	"sections.json/Implicit Iterator - HTML Escaping":                     {raw: true},
	"interpolation.json/Basic Context Miss Interpolation":                 {missing: []string{"cannot"}},
	"interpolation.json/Triple Mustache Context Miss Interpolation":       {missing: []string{"cannot"}},
	"interpolation.json/Ampersand Context Miss Interpolation":             {missing: []string{"cannot"}},
	"interpolation.json/Dotted Names - Broken Chains":                     {missing: []string{"a.b.c"}},
	"interpolation.json/Dotted Names - Broken Chain Resolution":           {missing: []string{"a.b.c.name"}},
	"interpolation.json/Dotted Names - Context Precedence":                {missing: []string{"b.c"}},
	"interpolation.json/Dotted Names are never single keys":               {missing: []string{"a.b"}},
	"partials.json/Failed Lookup":                                         {missing: []string{">text"}},
	"~dynamic-names.json/Context Misses - Partial":                        {missing: []string{"missing"}},
	"~dynamic-names.json/Failed Lookup - Partial":                         {missing: []string{">content"}},
	"~dynamic-names.json/Dotted Names - Operator Precedence":              {missing: []string{"foo.bar.baz"}},
	"~dynamic-names.json/Dotted Names - Failed Lookup":                    {missing: []string{"text"}},
	"~dynamic-names.json/Dotted names - Context Stacking Failed Lookup":   {missing: []string{"value"}},
	"~dynamic-names.json/Dynamic Names - Double Dereferencing":            {missing: []string{"*dynamic"}},
	"~dynamic-names.json/Dynamic Names - Composed Dereferencing":          {missing: []string{"foo.*bar"}},
	"partials.json/Recursion":                                             {cycle: []string{"node", "node"}},
	"~dynamic-names.json/Recursion":                                       {cycle: []string{"node", "node"}},
	"~inheritance.json/Recursion":                                         {cycle: []string{"parent", "parent2", "parent"}},
	"interpolation.json/Implicit Iterators - Basic Interpolation":         {object: true},
	"interpolation.json/Implicit Iterators - HTML Escaping":               {object: true},
	"interpolation.json/Implicit Iterators - Triple Mustache":             {object: true},
	"interpolation.json/Implicit Iterators - Ampersand":                   {object: true},
	"interpolation.json/Implicit Iterators - Basic Integer Interpolation": {object: true},
	"sections.json/Implicit Iterator - Root-level":                        {object: true},
}

// TestSpec runs every case of the Mustache spec (testdata/spec, with its
// optional inheritance and dynamic-names modules) through ParseWithPartials
// and RenderWith, the partials resolved through a Map.
func TestSpec(t *testing.T) {
	seen := map[string]bool{}
	defer func() {
		for name := range deviations {
			if !seen[name] {
				t.Errorf("deviation %q names no spec case", name)
			}
		}
	}()
	files, err := filepath.Glob("testdata/spec/*.json")
	if err != nil || len(files) != 8 {
		t.Fatalf("spec files %v, %v", files, err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var spec struct{ Tests []specCase }
		if err := json.Unmarshal(raw, &spec); err != nil {
			t.Fatal(err)
		}
		for _, c := range spec.Tests {
			key := filepath.Base(f) + "/" + c.Name
			seen[key] = true
			t.Run(key, func(t *testing.T) {
				tmpl, err := ParseWithPartials(c.Template)
				if err != nil {
					t.Fatal(err)
				}
				parts := Map{}
				for name, text := range c.Partials {
					if parts[name], err = ParseWithPartials(text); err != nil {
						t.Fatalf("partial %s: %v", name, err)
					}
				}
				dev := deviations[key]
				vars, err := DecodeVars(c.Data)
				if dev.object {
					if err == nil {
						t.Fatalf("data %s decodes; the deviation is stale", c.Data)
					}
					t.Skipf("by design: data %s is not an object", c.Data)
				}
				if err != nil {
					t.Fatalf("data %s: %v", c.Data, err)
				}
				out, err := tmpl.RenderWith(vars, Options{Partials: parts})
				switch {
				case dev.missing != nil:
					if got := quire.ErrorDetails(err)["missing"]; quire.ErrorCode(err) != quire.EUNPROCESSABLE || !reflect.DeepEqual(got, dev.missing) {
						t.Fatalf("err %v, missing %v; want 422 missing %v", err, got, dev.missing)
					}
					return
				case dev.cycle != nil:
					var cycle *CycleError
					if !errors.As(err, &cycle) || !reflect.DeepEqual(cycle.Chain, dev.cycle) || quire.ErrorCode(err) != quire.EUNPROCESSABLE ||
						!reflect.DeepEqual(quire.ErrorDetails(err)["cycle"], dev.cycle) {
						t.Fatalf("err %v; want a 422 cycle %v", err, dev.cycle)
					}
					return
				}
				if err != nil {
					t.Fatalf("%s\nerr %v %v", c.Desc, err, quire.ErrorDetails(err))
				}
				want := c.Expected
				if dev.raw {
					if want = html.UnescapeString(want); want == c.Expected {
						t.Fatalf("nothing escaped in %q; the deviation is stale", want)
					}
				}
				if out.Text != want {
					t.Fatalf("%s\ntemplate %q\ngot  %q\nwant %q", c.Desc, c.Template, out.Text, want)
				}
			})
		}
	}
}
