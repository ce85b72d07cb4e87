package render

import (
	"strings"
	"testing"

	"github.com/quire/quire"
)

// expanding holds templates whose output or work grows exponentially in
// their nesting, each with the variables that make it so.
var expanding = []struct {
	name, template, vars string
}{
	{
		"nested sections over a list",
		strings.Repeat("{{#l}}", 8) + "xxxxxxxx" + strings.Repeat("{{/l}}", 8),
		`{"l": [1,2,3,4,5,6,7,8,9,10]}`,
	},
	{
		"a large value repeated",
		"{{#l}}{{v}}{{/l}}",
		`{"l": [` + strings.Repeat("1,", 999) + `1], "v": "` + strings.Repeat("v", 60000) + `"}`,
	},
	{
		"nested sections that print nothing",
		strings.Repeat("{{#l}}", 10) + strings.Repeat("{{/l}}", 10),
		`{"l": [1,2,3,4,5,6,7,8,9,10]}`,
	},
	{
		"a list printed inside a list",
		"{{#l}}{{#l}}{{#l}}{{l}}{{/l}}{{/l}}{{/l}}",
		`{"l": [` + strings.Repeat(`"abcdefgh",`, 99) + `"x"]}`,
	},
	{
		"a long dotted name into deeply nested variables, looked up often",
		"{{#l}}{{#l}}{{#l}}{{a" + strings.Repeat(".a", 8999) + "}}{{/l}}{{/l}}{{/l}}",
		`{"l": [` + strings.Repeat("1,", 59) + `1], ` + strings.Repeat(`"a": {`, 8999) + `"a": 1` + strings.Repeat("}", 8999) + `}`,
	},
	{
		"many tags inside deeply nested sections",
		strings.Repeat("{{#m}}", 3000) + strings.Repeat("{{x}}", 100000) + strings.Repeat("{{/m}}", 3000),
		`{"m": {"k": 1}, "x": ""}`,
	},
	{
		"inverted sections do not hide the expansion",
		strings.Repeat("{{#l}}{{^no}}", 7) + "{{x}}" + strings.Repeat("{{/no}}{{/l}}", 7),
		`{"l": [1,2,3,4,5,6,7,8,9,10], "x": "some text"}`,
	},
}

func TestRenderRefusesExpansion(t *testing.T) {
	for _, tc := range expanding {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse(tc.template)
			if err != nil {
				t.Fatal(err)
			}
			vars, err := DecodeVars([]byte(tc.vars))
			if err != nil {
				t.Fatal(err)
			}
			out, err := tmpl.Render(vars)
			if quire.ErrorCode(err) != quire.EUNPROCESSABLE || !strings.Contains(quire.ErrorMessage(err), "expands to more than") {
				t.Fatalf("rendered %d bytes, err %v; want the expansion refused", len(out), err)
			}
			if got := quire.ErrorDetails(err)["limit"]; got != MaxOutput {
				t.Errorf("limit detail %v", got)
			}
		})
	}
}

func TestRenderJustUnderTheLimit(t *testing.T) {
	// 16 items of 64 KiB, less the other bytes: the walk's estimate must
	// not refuse what fits.
	tmpl, err := Parse("{{#l}}{{.}}{{/l}}")
	if err != nil {
		t.Fatal(err)
	}
	item := strings.Repeat("x", MaxOutput/16)
	list := make([]any, 16)
	for i := range list {
		list[i] = item
	}
	out, err := tmpl.Render(Vars{"l": list})
	if err != nil || len(out) != MaxOutput {
		t.Fatalf("rendered %d bytes, err %v", len(out), err)
	}
	list = append(list, "y")
	if _, err := tmpl.Render(Vars{"l": list}); quire.ErrorCode(err) != quire.EUNPROCESSABLE {
		t.Fatalf("one byte over: err %v", err)
	}
}

func TestRenderMissingBeforeExpansion(t *testing.T) {
	tmpl, err := Parse("Hello {{name}}, {{#items}}{{label}} {{/items}}")
	if err != nil {
		t.Fatal(err)
	}
	vars, _ := DecodeVars([]byte(`{"items": [{"label": "a"}, {}]}`))
	_, err = tmpl.Render(vars)
	if got := quire.ErrorDetails(err)["missing"]; quire.ErrorCode(err) != quire.EUNPROCESSABLE || strings.Join(got.([]string), ",") != "name,label" {
		t.Fatalf("err %v, missing %v", err, got)
	}
}
