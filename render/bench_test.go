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
// (Plain), composed as a chain of partials three levels deep (Nested: the
// prompt includes a, a includes b, b includes c, each holding part of the
// text), and composed of eleven includes over three levels (Wide: a
// includes b twice, b includes the one-line c four times), the same
// output from all three. Issue 16's goal: Nested at no less than 0.8x the
// rate of Plain. On a busy machine compare cpu-ns/op, not ns/op.
func BenchmarkRenderNestedPartials(b *testing.B) {
	bc := benchCases[1]
	vars, err := DecodeVars([]byte(bc.vars))
	if err != nil {
		b.Fatal(err)
	}
	intro := strings.Repeat("You are a careful assistant for {{company.name}}. Answer in {{language}}.\n", 8)
	docs := "Context:\n{{#docs}}- {{title}} ({{year}}): {{summary}}\n{{/docs}}{{^docs}}No documents.\n{{/docs}}"
	parts := partials(b, map[string]string{
		// Nested: three levels, a chain.
		"a": intro[:len(intro)/2] + "{{>b}}",
		"b": intro[len(intro)/2:] + "{{>c}}",
		"c": docs,
		// Wide: eleven includes.
		"wa": "{{>wb}}{{>wb}}" + docs,
		"wb": "{{>wc}}{{>wc}}{{>wc}}{{>wc}}",
		"wc": "You are a careful assistant for {{company.name}}. Answer in {{language}}.\n",
	})
	var want string
	for _, bc := range []struct{ name, template string }{
		{"Plain", bc.template},
		{"Nested", "{{>a}}Question: {{question}}\n"},
		{"Wide", "{{>wa}}Question: {{question}}\n"},
	} {
		tmpl, err := ParseWithPartials(bc.template)
		if err != nil {
			b.Fatal(err)
		}
		out, err := tmpl.RenderWith(vars, Options{Partials: parts})
		if err != nil {
			b.Fatal(err)
		}
		if want == "" {
			want = out.Text
		} else if out.Text != want {
			b.Fatalf("%s rendered %q; want %q", bc.name, out.Text, want)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(want)))
			start := cpuTime()
			for b.Loop() {
				if _, err := tmpl.RenderWith(vars, Options{Partials: parts}); err != nil {
					b.Fatal(err)
				}
			}
			// The process's CPU time per render: comparable between the
			// three on a shared machine, where ns/op is not.
			if used := cpuTime() - start; used > 0 {
				b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
