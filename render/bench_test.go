package render

import (
	"strings"
	"testing"
)

// benchCases are the templates the render benchmarks run: the two-variable
// prompt of httpapi's BenchmarkRenderLive, and a longer prompt with a list
// section and dotted names, the shape most real prompts have.
var benchCases = []struct {
	name, template, vars string
}{
	{"Short", "Hello {{name}}, here is a short note about {{topic}}.", `{"name":"Ann","topic":"caching"}`},
	{"Sections", strings.Repeat("You are a careful assistant for {{company.name}}. Answer in {{language}}.\n", 8) +
		"Context:\n{{#docs}}- {{title}} ({{year}}): {{summary}}\n{{/docs}}{{^docs}}No documents.\n{{/docs}}" +
		"Question: {{question}}\n",
		`{"company":{"name":"Acme"},"language":"English","question":"What changed in the last release?","docs":[` +
			strings.Repeat(`{"title":"Release notes","year":2024,"summary":"Caching, faster renders and fewer allocations."},`, 9) +
			`{"title":"Last","year":2025,"summary":"The end."}]}`},
}

func BenchmarkRender(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			tmpl, err := Parse(bc.template)
			if err != nil {
				b.Fatal(err)
			}
			vars, err := DecodeVars([]byte(bc.vars))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tmpl.Render(vars); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tmpl.Render(vars); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMissing(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			tmpl, err := Parse(bc.template)
			if err != nil {
				b.Fatal(err)
			}
			vars, err := DecodeVars([]byte(bc.vars))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if m := tmpl.Missing(vars); len(m) != 0 {
					b.Fatal(m)
				}
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(bc.template); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRenderNestedPartials renders the Sections prompt as it is
// (Plain) and composed of partials three levels deep (Nested: the prompt
// includes a, a includes b, b includes c), the same output from both.
// Issue 16's goal: Nested at no less than 0.8x the rate of Plain.
func BenchmarkRenderNestedPartials(b *testing.B) {
	bc := benchCases[1]
	plain, err := ParseWithPartials(bc.template)
	if err != nil {
		b.Fatal(err)
	}
	nested, err := ParseWithPartials("{{>a}}Question: {{question}}\n")
	if err != nil {
		b.Fatal(err)
	}
	parts := partials(b, map[string]string{
		"a": "{{>b}}{{>b}}Context:\n{{#docs}}- {{title}} ({{year}}): {{summary}}\n{{/docs}}{{^docs}}No documents.\n{{/docs}}",
		"b": "{{>c}}{{>c}}{{>c}}{{>c}}",
		"c": "You are a careful assistant for {{company.name}}. Answer in {{language}}.\n",
	})
	vars, err := DecodeVars([]byte(bc.vars))
	if err != nil {
		b.Fatal(err)
	}
	want, err := plain.Render(vars)
	if err != nil {
		b.Fatal(err)
	}
	if got, err := nested.RenderWith(vars, Options{Partials: parts}); err != nil || got.Text != want {
		b.Fatalf("nested rendered %q, %v; want %q", got.Text, err, want)
	}
	b.Run("Plain", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(want)))
		for b.Loop() {
			if _, err := plain.RenderWith(vars, Options{Partials: parts}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Nested", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(want)))
		for b.Loop() {
			if _, err := nested.RenderWith(vars, Options{Partials: parts}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
