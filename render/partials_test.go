package render

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/quire/quire"
)

// partials parses a map of partials for a test.
func partials(t testing.TB, texts map[string]string) Map {
	t.Helper()
	m := Map{}
	for name, text := range texts {
		p, err := ParseWithPartials(text)
		if err != nil {
			t.Fatalf("partial %s: %v", name, err)
		}
		m[name] = p
	}
	return m
}

func mustVars(t testing.TB, raw string) Vars {
	t.Helper()
	v, err := DecodeVars([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRenderValuesAsJSON(t *testing.T) {
	for _, tc := range []struct{ name, vars, want string }{
		{"object, keys sorted", `{"x": {"b": 1, "a": "two", "c": null}}`, `{"a":"two","b":1,"c":null}`},
		{"list", `{"x": [1, "a", null, true, {"k": [false]}]}`, `[1,"a",null,true,{"k":[false]}]`},
		{"numbers as sent", `{"x": [1000000, 1.50, -0, 1e400]}`, `[1000000,1.50,-0,1e400]`},
		{"no HTML escaping, JSON escapes", `{"x": {"s": "<a href=\"x\">&amp;</a>\n\t\u0001é"}}`, `{"s":"<a href=\"x\">&amp;</a>\n\t\u0001é"}`},
		{"empty object and list", `{"x": [{}, []]}`, `[{},[]]`},
		{"number", `{"x": 1000000}`, `1000000`},
		{"boolean", `{"x": false}`, `false`},
		{"null", `{"x": null}`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse("{{x}}|{{{x}}}|{{&x}}")
			if err != nil {
				t.Fatal(err)
			}
			out, err := tmpl.Render(mustVars(t, tc.vars))
			if want := tc.want + "|" + tc.want + "|" + tc.want; err != nil || out != want {
				t.Fatalf("rendered %q, %v; want %q", out, err, want)
			}
		})
	}
}

// TestParseRefusesPartials: Parse, what the API publishes with until it
// resolves partials, still refuses every include.
func TestParseRefusesPartials(t *testing.T) {
	for _, text := range []string{"{{> p}}", "{{#s}}{{>p}}{{/s}}", "{{<p}}{{/p}}", "{{>*name}}", "{{$b}}{{>p}}{{/b}}"} {
		_, err := Parse(text)
		if quire.ErrorCode(err) != quire.EUNPROCESSABLE || !strings.Contains(quire.ErrorMessage(err), "partials are not supported") {
			t.Errorf("%s: err %v", text, err)
		}
		if _, err := ParseWithPartials(text); err != nil {
			t.Errorf("%s: ParseWithPartials: %v", text, err)
		}
	}
	if _, err := Parse("{{$block}}default{{/block}}"); err != nil {
		t.Errorf("a block alone: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ text, msg string }{
		{"{{#a}}unclosed", "never closed"},
		{"{{/a}}", "closes nothing"},
		{"line 1\n{{#a}}{{/b}}", "line 2: {{/b}} closes {{#a}}"},
		{"{{a", "unclosed tag"},
		{"{{{a}}", "unclosed tag"},
		{"{{}}", "without a name"},
		{"{{>}}", "without a name"},
		{"{{>*}}", "without a name"},
		{"{{=a=}}", "set-delimiter"},
		{"{{=<% %> x=}}", "set-delimiter"},
		{"{{<p}}{{/*p}}", "closes"},
		{strings.Repeat("{{$b}}", 65) + strings.Repeat("{{/b}}", 65), "nest deeper than 64"},
		{strings.Repeat("{{#a}}", 4097) + strings.Repeat("{{/a}}", 4097), "sections nest deeper than 4096"},
		{strings.Repeat("{{^a}}", 80000) + strings.Repeat("{{/a}}", 80000), "sections nest deeper than 4096"},
	} {
		_, err := ParseWithPartials(tc.text)
		if quire.ErrorCode(err) != quire.EUNPROCESSABLE || !strings.Contains(quire.ErrorMessage(err), tc.msg) {
			t.Errorf("%q: err %v, want %q", tc.text, err, tc.msg)
		}
	}
}

func TestRenderPartials(t *testing.T) {
	parts := map[string]string{
		"safety":    "Be safe, {{name}}.\n",
		"style@3":   "Style three.",
		"layout":    "<{{$body}}default{{/body}}>",
		"list":      "{{#items}}{{>item}}{{/items}}",
		"item":      "- {{title}}\n",
		"greeting":  "Hi {{>missing-one}} {{who}}",
		"dynamic@2": "dynamic {{x}}",
	}
	for _, tc := range []struct {
		name, template, vars string
		want                 string
		used                 []string
		missing              []string
	}{
		{"static", "{{>safety}}Go.", `{"name": "Ann"}`, "Be safe, Ann.\nGo.", []string{"safety"}, nil},
		{"a pinned version is one name", "{{> style@3 }}", `{}`, "Style three.", []string{"style@3"}, nil},
		{"inheritance", "{{<layout}}{{$body}}mine{{/body}}{{/layout}}", `{}`, "<mine>", []string{"layout"}, nil},
		{"nested, in a section", "{{>list}}", `{"items": [{"title": "a"}, {"title": "b"}]}`, "- a\n- b\n", []string{"list", "item"}, nil},
		{"dynamic", "{{>*which}}", `{"which": "dynamic@2", "x": 1}`, "dynamic 1", []string{"dynamic@2"}, nil},
		{"missing variable inside a partial", "{{>safety}}", `{}`, "", nil, []string{"name"}},
		{"missing partial", "{{>nope}} {{a}}", `{}`, "", nil, []string{">nope", "a"}},
		{"missing partial inside a partial", "{{>greeting}}", `{}`, "", nil, []string{">missing-one", "who"}},
		{"missing dynamic name", "{{>*which}}", `{}`, "", nil, []string{"which"}},
		{"dynamic name of no partial", "{{>*which}}", `{"which": "nope"}`, "", nil, []string{">nope"}},
		{"a missing partial in a false section is not used", "{{#no}}{{>nope}}{{/no}}ok", `{}`, "ok", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := ParseWithPartials(tc.template)
			if err != nil {
				t.Fatal(err)
			}
			vars := mustVars(t, tc.vars)
			out, err := tmpl.RenderWith(vars, Options{Partials: partials(t, parts)})
			if tc.missing != nil {
				if got := quire.ErrorDetails(err)["missing"]; quire.ErrorCode(err) != quire.EUNPROCESSABLE || !reflect.DeepEqual(got, tc.missing) {
					t.Fatalf("err %v, missing %v; want %v", err, got, tc.missing)
				}
				if got := tmpl.MissingWith(vars, Options{Partials: partials(t, parts)}); !reflect.DeepEqual(got, tc.missing) {
					t.Fatalf("MissingWith %v, want %v", got, tc.missing)
				}
				return
			}
			if err != nil || out.Text != tc.want || !reflect.DeepEqual(out.Partials, tc.used) {
				t.Fatalf("rendered %q %v, %v; want %q %v", out.Text, out.Partials, err, tc.want, tc.used)
			}
		})
	}
}

func TestMissingPartialError(t *testing.T) {
	err := MissingError([]string{"name", ">header", ">footer@2"})
	if quire.ErrorCode(err) != quire.EUNPROCESSABLE || quire.ErrorMessage(err) != "missing variables: name; missing partials: header, footer@2" {
		t.Fatalf("err %v", err)
	}
	d := quire.ErrorDetails(err)
	if !reflect.DeepEqual(d["missing"], []string{"name", ">header", ">footer@2"}) || !reflect.DeepEqual(d["missing_partials"], []string{"header", "footer@2"}) {
		t.Fatalf("details %v", d)
	}
	if d := quire.ErrorDetails(MissingError([]string{"a"})); d["missing_partials"] != nil {
		t.Fatalf("no partials missing, details %v", d)
	}
}

func TestRenderCycles(t *testing.T) {
	parts := map[string]string{
		"self":  "again {{>self}}",
		"a":     "{{>b}}",
		"b":     "{{#x}}{{>c}}{{/x}}",
		"c":     "{{<a}}{{/a}}",
		"dyn":   "{{>*next}}",
		"outer": "{{>inner}}",
		"inner": "x",
	}
	for _, tc := range []struct {
		name, template, self, vars string
		chain                      []string
	}{
		{"self", "{{>self}}", "", `{}`, []string{"self", "self"}},
		{"through three, via a parent", "{{>a}}", "", `{"x": true}`, []string{"a", "b", "c", "a"}},
		{"dynamic", "{{>dyn}}", "", `{"next": "dyn"}`, []string{"dyn", "dyn"}},
		{"the rendered template's own name", "{{>outer}}", "outer", `{}`, []string{"outer", "outer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := ParseWithPartials(tc.template)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tmpl.RenderWith(mustVars(t, tc.vars), Options{Partials: partials(t, parts), Name: tc.self})
			var cycle *CycleError
			if !errors.As(err, &cycle) || !reflect.DeepEqual(cycle.Chain, tc.chain) {
				t.Fatalf("err %v, want the cycle %v", err, tc.chain)
			}
			if quire.ErrorCode(err) != quire.EUNPROCESSABLE || !reflect.DeepEqual(quire.ErrorDetails(err)["cycle"], tc.chain) {
				t.Fatalf("err %v details %v", err, quire.ErrorDetails(err))
			}
		})
	}
	// A partial used twice side by side, or a parent twice, is no cycle.
	tmpl, _ := ParseWithPartials("{{>inner}}{{>inner}}{{<outer}}{{/outer}}{{<outer}}{{/outer}}")
	if out, err := tmpl.RenderWith(Vars{}, Options{Partials: partials(t, parts)}); err != nil || out.Text != "xxxx" {
		t.Fatalf("%q %v", out.Text, err)
	}
}

func TestRenderDepthLimit(t *testing.T) {
	texts := map[string]string{}
	for i := range MaxDepth + 5 {
		texts[fmt.Sprint("p", i)] = fmt.Sprintf("%d {{>p%d}}", i, i+1)
	}
	texts[fmt.Sprint("p", MaxDepth+5)] = "end"
	parts := partials(t, texts)
	deep, _ := ParseWithPartials("{{>p0}}")
	_, err := deep.RenderWith(Vars{}, Options{Partials: parts})
	if quire.ErrorCode(err) != quire.EUNPROCESSABLE || !strings.Contains(quire.ErrorMessage(err), "deeper than 16") || quire.ErrorDetails(err)["limit"] != MaxDepth {
		t.Fatalf("err %v", err)
	}
	// MaxDepth levels are allowed.
	ok, _ := ParseWithPartials(fmt.Sprintf("{{>p%d}}", 5+1))
	if out, err := ok.RenderWith(Vars{}, Options{Partials: parts}); err != nil || !strings.HasSuffix(out.Text, "end") {
		t.Fatalf("%q %v", out.Text, err)
	}
}

func TestRenderLimitsCountIncludedText(t *testing.T) {
	parts := partials(t, map[string]string{
		"big":    strings.Repeat("x", MaxOutput/16),
		"loop":   "{{#l}}{{#l}}{{#l}}{{>leaf}}{{/l}}{{/l}}{{/l}}",
		"leaf":   "{{#l}}{{/l}}",
		"parent": "{{$b}}{{/b}}",
	})
	for _, tc := range []struct{ name, template, vars string }{
		{"included text over the output limit", "{{#l}}{{>big}}{{/l}}", `{"l": [` + strings.Repeat("1,", 16) + `1]}`},
		{"tags inside partials over the step limit", "{{#l}}{{>loop}}{{/l}}", `{"l": [` + strings.Repeat("1,", 29) + `1]}`},
		{"block content over the output limit", "{{#l}}{{<parent}}{{$b}}{{>big}}{{/b}}{{/parent}}{{/l}}", `{"l": [` + strings.Repeat("1,", 16) + `1]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := ParseWithPartials(tc.template)
			if err != nil {
				t.Fatal(err)
			}
			out, err := tmpl.RenderWith(mustVars(t, tc.vars), Options{Partials: parts})
			if quire.ErrorCode(err) != quire.EUNPROCESSABLE || quire.ErrorDetails(err)["limit"] != MaxOutput {
				t.Fatalf("rendered %d bytes, err %v; want the expansion refused", len(out.Text), err)
			}
		})
	}
	// Just at the limit through a partial: allowed.
	tmpl, _ := ParseWithPartials("{{#l}}{{>big}}{{/l}}")
	out, err := tmpl.RenderWith(mustVars(t, `{"l": [`+strings.Repeat("1,", 15)+`1]}`), Options{Partials: parts})
	if err != nil || len(out.Text) != MaxOutput {
		t.Fatalf("rendered %d bytes, err %v", len(out.Text), err)
	}
}

func TestRenderBlocksDoNotLoop(t *testing.T) {
	parts := partials(t, map[string]string{"p": "[{{$b}}{{/b}}]"})
	tmpl, err := ParseWithPartials("{{<p}}{{$b}}x{{$b}}y{{/b}}{{/b}}{{/p}}")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := tmpl.RenderWith(Vars{}, Options{Partials: parts}); err != nil || out.Text != "[xy]" {
		t.Fatalf("%q %v", out.Text, err)
	}
}

func TestRenderResolverErrors(t *testing.T) {
	boom := quire.Errorf(quire.EUNAVAILABLE, "store down")
	tmpl, _ := ParseWithPartials("{{>p}}")
	_, err := tmpl.RenderWith(Vars{}, Options{Partials: failing{boom}})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want the resolver's", err)
	}
	dyn, _ := ParseWithPartials("{{>*name}}")
	_, err = dyn.RenderWith(mustVars(t, `{"name": {"a": 1}}`), Options{Partials: Map{}})
	if quire.ErrorCode(err) != quire.EUNPROCESSABLE || !strings.Contains(quire.ErrorMessage(err), "not a string") {
		t.Fatalf("err %v", err)
	}
}

type failing struct{ err error }

func (f failing) Partial(string) (*Template, error) { return nil, f.err }

func TestPartialNames(t *testing.T) {
	tmpl, err := ParseWithPartials("{{>a}} {{#s}}{{> b@2 }}{{/s}} {{>*dyn}} {{<c}}{{$x}}{{>d}}{{/x}}{{>ignored}}{{/c}} {{>a}}")
	if err != nil {
		t.Fatal(err)
	}
	if got := tmpl.PartialNames(); !reflect.DeepEqual(got, []string{"a", "b@2", "c", "d"}) {
		t.Fatalf("PartialNames %v", got)
	}
	if got := tmpl.Required(); !reflect.DeepEqual(got, []string{"dyn"}) {
		t.Fatalf("Required %v", got)
	}
}

func TestCheckPartials(t *testing.T) {
	parts := partials(t, map[string]string{
		"a":    "{{>b}}",
		"b":    "{{#s}}{{<c}}{{/c}}{{/s}}",
		"c":    "{{>a}}",
		"leaf": "text {{>*dyn}}",
		"mid":  "{{>leaf}}{{>leaf}}",
		"self": "{{>self}}",
	})
	for _, tc := range []struct {
		name, root, template string
		cycle, missing       []string
	}{
		{"no partials", "p", "plain", nil, nil},
		{"a diamond is no cycle", "p", "{{>mid}}{{>leaf}}", nil, nil},
		{"including itself", "p", "x {{>p}}", []string{"p", "p"}, nil},
		{"a cycle below", "p", "{{>a}}", []string{"p", "a", "b", "c", "a"}, nil},
		{"back to the root", "c", "{{>a}}", []string{"c", "a", "b", "c"}, nil},
		{"a partial including itself", "p", "{{>self}}", []string{"p", "self", "self"}, nil},
		{"missing", "p", "{{>nope}}{{>mid}}{{>gone@3}}{{>nope}}", nil, []string{">nope", ">gone@3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := ParseWithPartials(tc.template)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckPartials(tc.root, tmpl, parts)
			var cycle *CycleError
			switch {
			case tc.cycle != nil:
				if !errors.As(err, &cycle) || !reflect.DeepEqual(cycle.Chain, tc.cycle) {
					t.Fatalf("err %v, want the cycle %v", err, tc.cycle)
				}
			case tc.missing != nil:
				if got := quire.ErrorDetails(err)["missing"]; quire.ErrorCode(err) != quire.EUNPROCESSABLE || !reflect.DeepEqual(got, tc.missing) {
					t.Fatalf("err %v, missing %v", err, got)
				}
			case err != nil:
				t.Fatal(err)
			}
		})
	}
}
