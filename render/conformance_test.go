package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quire/quire"
)

// The conformance corpus (testdata/conformance.json) is what the
// TypeScript and Python SDKs prove their local render against: every
// Mustache spec case and quire's own cases, each with the answer of this
// engine (the text, or the error's code, message and details). The SDKs'
// tests run every case; TestConformanceCorpus fails when the committed
// file is not what the engine answers today.
//
//	go test ./render -run TestConformanceCorpus -update-conformance

var updateConformance = flag.Bool("update-conformance", false, "rewrite testdata/conformance.json")

// conformanceCase is one case of the corpus. A case holds a text
// template or chat messages ({role, content}, or {type: "placeholder",
// name}); partials are other templates by name; self is the rendered
// prompt's own slug (a template including it is a cycle).
type conformanceCase struct {
	Name      string            `json:"name"`
	Template  *string           `json:"template,omitempty"`
	Messages  []quire.Message   `json:"messages,omitempty"`
	Partials  map[string]string `json:"partials,omitempty"`
	Self      string            `json:"self,omitempty"`
	Variables json.RawMessage   `json:"variables"`
	// VariablesSchema is the version's typed variables, checked before
	// the render as the server's render checks them.
	VariablesSchema json.RawMessage `json:"variables_schema,omitempty"`

	Expected         *string         `json:"expected,omitempty"`
	ExpectedLength   int             `json:"expected_length,omitempty"`
	ExpectedSHA256   string          `json:"expected_sha256,omitempty"`
	ExpectedMessages []quire.Message `json:"expected_messages,omitempty"`
	// PartialsUsed names the partials the render included, in order of
	// first use.
	PartialsUsed []string `json:"partials_used,omitempty"`
	Error        *caseErr `json:"error,omitempty"`
}

type caseErr struct {
	Code    quire.Code     `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

func str(s string) *string { return &s }

// quireCases are quire's own cases: its values, errors, limits,
// composition and chat prompts, beyond what the spec asks.
var quireCases = []conformanceCase{
	{Name: "values/strings numbers booleans null", Template: str("{{s}}|{{i}}|{{f}}|{{big}}|{{t}}|{{n}}|{{neg}}"),
		Variables: json.RawMessage(`{"s":"Ann","i":42,"f":1.5,"big":1000000,"t":true,"n":null,"neg":-3.25}`)},
	{Name: "values/objects and lists as compact JSON with sorted keys", Template: str("{{user}} {{list}} {{empty}} {{nested}}"),
		Variables: json.RawMessage(`{"user":{"name":"Ann","age":7,"b":false},"list":[1,"two",null,{"z":1,"a":2}],"empty":{},"nested":{"b":{"d":[],"c":"x"},"a":null}}`)},
	{Name: "values/JSON escapes without HTML escaping", Template: str("{{v}}"),
		Variables: json.RawMessage(`{"v":{"html":"<b>&amp;</b>","quote":"say \"hi\"\\","ctl":"a\nb\tc\r\u0001\u001f","uni":"é漢🙂"}}`)},
	{Name: "values/raw text is not escaped", Template: str("{{a}} {{{a}}} {{&a}}"), Variables: json.RawMessage(`{"a":"<p>&\"'</p>"}`)},
	{Name: "sections/blank string is false", Template: str("[{{#s}}yes{{/s}}{{^s}}no{{/s}}][{{#t}}yes{{/t}}]"), Variables: json.RawMessage(`{"s":"  \n\t","t":" x "}`)},
	{Name: "sections/zero and empty object are true", Template: str("{{#z}}zero{{/z}} {{#o}}obj{{/o}} {{#e}}empty{{/e}}{{^e}}none{{/e}}"), Variables: json.RawMessage(`{"z":0,"o":{},"e":[]}`)},
	{Name: "sections/list of objects and scalars", Template: str("{{#people}}{{name}}:{{#tags}}{{.}},{{/tags}};{{/people}}"),
		Variables: json.RawMessage(`{"people":[{"name":"a","tags":["x","y"]},{"name":"b","tags":[]}]}`)},
	{Name: "sections/outer names seen from inside", Template: str("{{#a}}{{#b}}{{x}}-{{y}}{{/b}}{{/a}}"), Variables: json.RawMessage(`{"a":{"x":1},"b":true,"y":"outer"}`)},
	{Name: "sections/absent section is false, no error", Template: str("a{{#nope}}{{x}}{{/nope}}b{{^nope}}c{{/nope}}"), Variables: json.RawMessage(`{}`)},
	{Name: "missing/every variable named once, in order", Template: str("Hello {{name}}, {{#items}}{{label}} {{/items}}{{name}} {{other.x}}"),
		Variables: json.RawMessage(`{"items":[{"label":"a"},{}]}`)},
	{Name: "missing/no variables at all", Template: str("{{a}}{{b}}{{c}}"), Variables: json.RawMessage(`{}`)},
	{Name: "missing/null is present", Template: str("[{{a}}]"), Variables: json.RawMessage(`{"a":null}`)},
	{Name: "missing/more than sixteen names", Template: str(manyNames(20)), Variables: json.RawMessage(`{}`)},
	{Name: "missing/variables and partials together", Template: str("{{a}} {{> nope}} {{b}} {{> other}}"), Variables: json.RawMessage(`{"b":1}`)},
	{Name: "syntax/unclosed section", Template: str("line\n{{#a}}x"), Variables: json.RawMessage(`{}`)},
	{Name: "syntax/mismatched close", Template: str("{{#a}}\n{{/b}}"), Variables: json.RawMessage(`{}`)},
	{Name: "syntax/closes nothing", Template: str("x{{/a}}"), Variables: json.RawMessage(`{}`)},
	{Name: "syntax/unclosed tag", Template: str("a {{b"), Variables: json.RawMessage(`{}`)},
	{Name: "syntax/unclosed triple", Template: str("a {{{b}}"), Variables: json.RawMessage(`{}`)},
	{Name: "syntax/empty tag", Template: str("a {{ }}"), Variables: json.RawMessage(`{}`)},
	{Name: "syntax/bad delimiters", Template: str("{{=a b c=}}"), Variables: json.RawMessage(`{}`)},
	{Name: "syntax/unclosed set-delimiter", Template: str("{{=<% %>"), Variables: json.RawMessage(`{}`)},
	{Name: "delimiters/changed then used", Template: str("{{=<% %>=}}<% a %> {{a}} <%={{ }}=%>{{a}}"), Variables: json.RawMessage(`{"a":"x"}`)},
	{Name: "standalone/lines removed and CRLF", Template: str("a\r\n  {{#s}}  \r\nb\r\n  {{/s}}\r\nc\r\n"), Variables: json.RawMessage(`{"s":true}`)},
	{Name: "partials/live and pinned names", Template: str("Sys: {{> safety}} Q: {{q}} {{> style@2}}"),
		Partials: map[string]string{"safety": "Stay safe. {{> style}}", "style": "Be brief, {{name}}.", "style@2": "v2 {{name}}"},
		Self:     "answer", Variables: json.RawMessage(`{"name":"Ann","q":"why?"}`)},
	{Name: "partials/standalone indentation", Template: str("begin\n  {{> list}}\nend\n"),
		Partials: map[string]string{"list": "- a\n\n- {{x}}\n"}, Variables: json.RawMessage(`{"x":"b"}`)},
	{Name: "partials/self inclusion is a cycle", Template: str("a {{> me}}"), Self: "me", Variables: json.RawMessage(`{}`)},
	{Name: "partials/a cycle through two", Template: str("{{> a}}"),
		Partials: map[string]string{"a": "A{{> b}}", "b": "B{{> a}}"}, Self: "root", Variables: json.RawMessage(`{}`)},
	{Name: "partials/nesting deeper than the limit", Template: str("{{> p0}}"), Partials: chainOf(MaxDepth + 1), Self: "root", Variables: json.RawMessage(`{}`)},
	{Name: "partials/nesting at the limit", Template: str("{{> p0}}"), Partials: chainOf(MaxDepth), Self: "root", Variables: json.RawMessage(`{}`)},
	{Name: "partials/dynamic name", Template: str("{{>*which}} {{>* n}}"),
		Partials: map[string]string{"greet": "hi {{who}}", "7": "seven"}, Variables: json.RawMessage(`{"which":"greet","who":"Ann","n":7}`)},
	{Name: "partials/dynamic name not a string", Template: str("{{>*which}}"), Variables: json.RawMessage(`{"which":{"a":1}}`)},
	{Name: "partials/dynamic name missing", Template: str("{{>*which}} {{x}}"), Variables: json.RawMessage(`{}`)},
	{Name: "partials/used once each, in order", Template: str("{{> b}}{{> a}}{{> b}}"),
		Partials: map[string]string{"a": "A", "b": "B{{> a}}"}, Variables: json.RawMessage(`{}`)},
	{Name: "inheritance/blocks overridden, outermost wins", Template: str("{{< layout}}{{$title}}Mine{{/title}}{{/layout}}"),
		Partials:  map[string]string{"layout": "<{{$title}}Default{{/title}}>{{< base}}{{$title}}Mid{{/title}}{{/base}}", "base": "[{{$title}}B{{/title}}]"},
		Variables: json.RawMessage(`{}`)},
	{Name: "inheritance/standalone blocks reindented", Template: str("{{< parent}}\n{{$body}}\n    one\n      two\n{{/body}}\n{{/parent}}\n"),
		Partials: map[string]string{"parent": "start\n  {{$body}}\n  default\n  {{/body}}\nend\n"}, Variables: json.RawMessage(`{}`)},
	{Name: "chat/messages with a placeholder", Messages: []quire.Message{
		{Role: "system", Content: "You are {{persona}}."}, {Type: "placeholder", Name: "history"}, {Role: "user", Content: "{{question}}{{> sig}}"}},
		Partials:  map[string]string{"sig": " -- {{name}}"},
		Variables: json.RawMessage(`{"persona":"terse","question":"why?","name":"Ann","history":[{"role":"user","content":"hi {{persona}}"},{"role":"assistant","content":"hello"}]}`)},
	{Name: "chat/every missing name of every message", Messages: []quire.Message{
		{Role: "system", Content: "{{a}} {{> nope}}"}, {Type: "placeholder", Name: "history"}, {Role: "user", Content: "{{b}} {{a}}"}},
		Variables: json.RawMessage(`{"history":null}`)},
	{Name: "chat/a partial's missing names", Messages: []quire.Message{
		{Role: "system", Content: "You are {{persona}}. {{> style}}"}, {Type: "placeholder", Name: "history"}, {Role: "user", Content: "{{question}}"}},
		Partials: map[string]string{"style": "Be brief, {{name}}."}, Variables: json.RawMessage(`{"question":"q"}`)},
	{Name: "chat/a message that does not parse", Messages: []quire.Message{{Role: "system", Content: "ok"}, {Role: "user", Content: "{{#a}}"}},
		Variables: json.RawMessage(`{}`)},
	{Name: "chat/placeholder not a list", Messages: []quire.Message{{Type: "placeholder", Name: "history"}},
		Variables: json.RawMessage(`{"history":"hi"}`)},
	{Name: "chat/placeholder item not an object", Messages: []quire.Message{{Role: "user", Content: "x"}, {Type: "placeholder", Name: "history"}},
		Variables: json.RawMessage(`{"history":[{"role":"user","content":"a"},3]}`)},
	{Name: "chat/placeholder item with an extra key", Messages: []quire.Message{{Type: "placeholder", Name: "history"}},
		Variables: json.RawMessage(`{"history":[{"role":"user","content":"a","name":"x"}]}`)},
	{Name: "chat/placeholder empty list", Messages: []quire.Message{{Role: "user", Content: "x"}, {Type: "placeholder", Name: "history"}},
		Variables: json.RawMessage(`{"history":[]}`)},
}

// manyNames is a template of n missing names.
func manyNames(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "{{v%d}}{{v%d}}", i, i/2)
	}
	return b.String()
}

// chainOf is partials p0 > p1 > … > p(n-1), each including the next.
func chainOf(n int) map[string]string {
	m := map[string]string{}
	for i := range n - 1 {
		m[fmt.Sprintf("p%d", i)] = fmt.Sprintf("%d{{> p%d}}", i, i+1)
	}
	m[fmt.Sprintf("p%d", n-1)] = "end"
	return m
}

// expandingCases are the templates of TestRenderRefusesExpansion, but
// for the one whose variables nest 9,000 objects deep (deeper than
// Python's JSON decoder goes), and renders exactly at the output limit
// and one byte over. An output over 64 KiB is recorded by its length and
// SHA-256 (expected_sha256), not its text.
func expandingCases() []conformanceCase {
	var out []conformanceCase
	for _, e := range expanding {
		if strings.Contains(e.name, "deeply nested variables") {
			continue
		}
		out = append(out, conformanceCase{Name: "limits/" + e.name, Template: str(e.template), Variables: json.RawMessage(e.vars)})
	}
	// 16 copies of a value fill the output exactly; one byte more is over.
	for _, n := range []int{MaxOutput / 16, MaxOutput/16 + 1} {
		vars := `{"l":[` + strings.Repeat("1,", 15) + `1],"v":"` + strings.Repeat("x", n) + `"}`
		out = append(out, conformanceCase{Name: fmt.Sprintf("limits/16 values of %d bytes", n), Template: str("{{#l}}{{v}}{{/l}}"), Variables: json.RawMessage(vars)})
	}
	return out
}

// specCases are the Mustache spec's cases that can be posed (variables
// are an object).
func specCases(t *testing.T) []conformanceCase {
	files, err := filepath.Glob("testdata/spec/*.json")
	if err != nil || len(files) != 8 {
		t.Fatalf("spec files %v, %v", files, err)
	}
	var out []conformanceCase
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
			if deviations[filepath.Base(f)+"/"+c.Name].object {
				continue
			}
			out = append(out, conformanceCase{Name: "spec/" + filepath.Base(f) + "/" + c.Name, Template: str(c.Template), Partials: c.Partials, Variables: c.Data})
		}
	}
	return out
}

// answer fills in what the engine answers for c, as the server's render
// does (app.renderCompiled): for chat prompts, every missing name of
// every message in one error before any message is rendered.
func answer(t *testing.T, c *conformanceCase) {
	parts := Map{}
	for name, text := range c.Partials {
		p, err := ParseWithPartials(text)
		if err != nil {
			t.Fatalf("%s: partial %s: %v", c.Name, name, err)
		}
		parts[name] = p
	}
	vars, err := DecodeVars(c.Variables)
	if err != nil {
		t.Fatalf("%s: variables: %v", c.Name, err)
	}
	opts := Options{Partials: parts, Name: c.Self}
	fail := func(err error) {
		c.Error = &caseErr{Code: quire.ErrorCode(err), Message: quire.ErrorMessage(err), Details: quire.ErrorDetails(err)}
		// Through JSON, as a client reads them.
		b, _ := json.Marshal(c.Error.Details)
		c.Error.Details = nil
		json.Unmarshal(b, &c.Error.Details)
	}
	if c.VariablesSchema != nil {
		if err := checkSchema(c.VariablesSchema, vars); err != nil {
			fail(err)
			return
		}
	}
	if c.Template != nil {
		tmpl, err := ParseWithPartials(*c.Template)
		if err != nil {
			fail(err)
			return
		}
		out, err := tmpl.RenderWith(vars, opts)
		if err != nil {
			fail(err)
			return
		}
		c.Expected, c.PartialsUsed = &out.Text, out.Partials
		if len(out.Text) > 64<<10 {
			sum := sha256.Sum256([]byte(out.Text))
			c.Expected, c.ExpectedLength, c.ExpectedSHA256 = nil, len(out.Text), hex.EncodeToString(sum[:])
		}
		return
	}
	tmpls := make([]*Template, len(c.Messages))
	for i, m := range c.Messages {
		if m.Type == "placeholder" {
			continue
		}
		if tmpls[i], err = ParseWithPartials(m.Content); err != nil {
			fail(quire.Errorf(quire.EUNPROCESSABLE, "messages[%d]: %s", i, quire.ErrorMessage(err)))
			return
		}
	}
	var missing []string
	for i, tmpl := range tmpls {
		if tmpl == nil {
			if name := c.Messages[i].Name; vars[name] == nil && !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			continue
		}
		for _, m := range tmpl.MissingWith(vars, opts) {
			if !slices.Contains(missing, m) {
				missing = append(missing, m)
			}
		}
	}
	if len(missing) > 0 {
		fail(MissingError(missing))
		return
	}
	msgs := []quire.Message{}
	for i, tmpl := range tmpls {
		if tmpl == nil {
			spliced, err := PlaceholderMessages(c.Messages[i].Name, vars[c.Messages[i].Name])
			if err != nil {
				fail(err)
				return
			}
			msgs = append(msgs, spliced...)
			continue
		}
		out, err := tmpl.RenderWith(vars, opts)
		if err != nil {
			fail(err)
			return
		}
		for _, n := range out.Partials {
			if !slices.Contains(c.PartialsUsed, n) {
				c.PartialsUsed = append(c.PartialsUsed, n)
			}
		}
		msgs = append(msgs, quire.Message{Role: c.Messages[i].Role, Content: out.Text})
	}
	c.ExpectedMessages = msgs
}

// conformanceCorpus is the corpus as the engine answers it today.
func conformanceCorpus(t *testing.T) []byte {
	cases := append(specCases(t), quireCases...)
	cases = append(cases, schemaCases...)
	cases = append(cases, randomCases(300)...)
	cases = append(cases, expandingCases()...)
	for i := range cases {
		answer(t, &cases[i])
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	doc := struct {
		Comment string            `json:"comment"`
		Limits  map[string]int    `json:"limits"`
		Cases   []conformanceCase `json:"cases"`
	}{
		Comment: "Generated by render/conformance_test.go from quire's own engine: go test ./render -run TestConformanceCorpus -update-conformance. The SDKs' tests render every case and compare.",
		Limits:  map[string]int{"max_output": MaxOutput, "max_steps": maxSteps, "max_depth": MaxDepth},
		Cases:   cases,
	}
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestConformanceCorpus checks that testdata/conformance.json is what
// the engine answers today (-update-conformance rewrites it).
func TestConformanceCorpus(t *testing.T) {
	const path = "testdata/conformance.json"
	got := conformanceCorpus(t)
	if *updateConformance {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is stale (%v): go test ./render -run TestConformanceCorpus -update-conformance", path, err)
	}
}
