package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/quire/quire"
)

// FuzzRender renders any template with any variables: it never panics,
// every error is one the API answers with a 4xx, and no output exceeds
// MaxOutput. The seeds in testdata/fuzz/FuzzRender hold real prompts and
// templates that expand exponentially.
func FuzzRender(f *testing.F) {
	f.Add("Hello {{name}}!", []byte(`{"name": "Ada"}`))
	f.Add("{{#items}}- {{title}} ({{price}})\n{{/items}}{{^items}}none{{/items}}", []byte(`{"items": [{"title": "a", "price": 1.50}, {"title": "b", "price": null}]}`))
	f.Add("{{user.name.first}} {{{raw}}} {{& amp}} {{! comment }}{{=<% %>=}}<% name %>", []byte(`{"user": {"name": {"first": "A"}}, "raw": "<b>", "amp": "&", "name": 1}`))
	f.Add("{{#a}}{{#a}}{{#a}}{{.}}{{/a}}{{/a}}{{/a}}", []byte(`{"a": [1, 2, 3]}`))
	f.Add("{{>partial}}", []byte(`{}`))
	f.Add("{{x}} {{#x}}{{.}}{{/x}}", []byte(`{"x": [{"a": [1, null, "s"]}, {}, []]}`))
	f.Add("{{$b}}\n  default\n{{/b}}\n  {{#s}}\n  {{/s}}\n", []byte(`{"s": true}`))
	f.Add("{{#a}}unclosed", []byte(`{"a": true}`))
	f.Add("{{.}}{{..}}{{a.}}{{.a}}{{a..b}}", []byte(`{"": 1, "a": {"": {"b": 2}}}`))
	for _, tc := range expanding {
		if len(tc.template)+len(tc.vars) < 4<<10 { // big seeds slow every mutation of them
			f.Add(tc.template, []byte(tc.vars))
		}
	}
	f.Fuzz(func(t *testing.T, text string, raw []byte) {
		if len(raw) > int(quire.DefaultLimits().MaxVariables) {
			return // the API refuses these before rendering
		}
		tmpl, err := Parse(text)
		if err != nil {
			if quire.ErrorCode(err) != quire.EUNPROCESSABLE {
				t.Fatalf("Parse: %v is %s, want unprocessable", err, quire.ErrorCode(err))
			}
			return
		}
		tmpl.Variables()
		required := tmpl.Required()
		vars, err := DecodeVars(raw)
		if err != nil {
			if quire.ErrorCode(err) != quire.EINVALID {
				t.Fatalf("DecodeVars: %v is %s, want invalid", err, quire.ErrorCode(err))
			}
			return
		}
		out, err := tmpl.Render(vars)
		if err != nil {
			if quire.ErrorCode(err) != quire.EUNPROCESSABLE {
				t.Fatalf("Render: %v is %s, want unprocessable", err, quire.ErrorCode(err))
			}
			return
		}
		if len(out) > MaxOutput {
			t.Fatalf("rendered %d bytes, more than MaxOutput", len(out))
		}
		for _, name := range required {
			if !has(vars, name) {
				t.Fatalf("rendered although the required %q has no value", name)
			}
		}
		if !strings.Contains(text, "{{") && out != text {
			t.Fatalf("a template with no tags rendered %q, want it unchanged", out)
		}
	})
}

// has reports whether name has a value at the top level of vars.
func has(vars Vars, name string) bool {
	n := node{text: name}
	if name != "." {
		n.parts = strings.Split(name, ".")
	}
	r := &renderer{}
	r.stack.push(map[string]any(vars))
	_, ok := r.lookup(&n)
	return ok
}

// FuzzRenderPartials renders any template with any partials and
// variables: "self" is the template itself (so it may include itself),
// "p" the second text, "q" a parent with a block, "r" a dynamic include.
// Whatever they do, a render never panics, answers only 4xx errors,
// stays within MaxOutput and the depth limit, and ends.
func FuzzRenderPartials(f *testing.F) {
	f.Add("{{>p}}", "Hi {{name}}", []byte(`{"name": "Ada"}`))
	f.Add("{{<q}}{{$b}}mine{{/b}}{{/q}}", "{{>self}}", []byte(`{}`))
	f.Add("{{#l}}{{>p}}{{/l}}", "{{#l}}{{>self}}{{/l}}", []byte(`{"l": [1, 2, 3]}`))
	f.Add("{{>*which}}", "  {{>r}}\n", []byte(`{"which": "p", "next": "self"}`))
	f.Add("a\n  {{>p}}\nb", "one\ntwo\n{{$b}}\n  d\n{{/b}}\n", []byte(`{}`))
	f.Add("{{<p}}{{$b}}\n  x\n{{/b}}{{/p}}", "Hi,\n  {{$b}}{{/b}}\n", []byte(`{}`))
	f.Add("{{>p}}", "{{<q}}{{$b}}{{$b}}{{>p}}{{/b}}{{/b}}{{/q}}", []byte(`{"x": {"y": [1, {"z": null}]}}`))
	f.Fuzz(func(t *testing.T, text, partial string, raw []byte) {
		if len(raw) > int(quire.DefaultLimits().MaxVariables) {
			return
		}
		tmpl, err := ParseWithPartials(text)
		if err != nil {
			if quire.ErrorCode(err) != quire.EUNPROCESSABLE {
				t.Fatalf("Parse: %v is %s, want unprocessable", err, quire.ErrorCode(err))
			}
			return
		}
		parts := Map{"self": tmpl}
		for name, s := range map[string]string{"p": partial, "q": "<{{$b}}{{>p}}{{/b}}>", "r": "{{>*next}}"} {
			if pt, err := ParseWithPartials(s); err == nil {
				parts[name] = pt
			}
		}
		tmpl.Variables()
		tmpl.PartialNames()
		if err := CheckPartials("self", tmpl, parts); err != nil && quire.ErrorCode(err) != quire.EUNPROCESSABLE {
			t.Fatalf("CheckPartials: %v is %s", err, quire.ErrorCode(err))
		}
		vars, err := DecodeVars(raw)
		if err != nil {
			return
		}
		out, err := tmpl.RenderWith(vars, Options{Partials: parts, Name: "self"})
		if err != nil {
			if quire.ErrorCode(err) != quire.EUNPROCESSABLE {
				t.Fatalf("Render: %v is %s, want unprocessable", err, quire.ErrorCode(err))
			}
			return
		}
		if len(out.Text) > MaxOutput {
			t.Fatalf("rendered %d bytes, more than MaxOutput", len(out.Text))
		}
		if slices.Contains(out.Partials, "self") {
			t.Fatalf("the template included itself: %v", out.Partials)
		}
	})
}
