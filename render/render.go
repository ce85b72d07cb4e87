// Package render renders prompt templates: Mustache ({{var}}, dotted
// names, sections, inverted sections) without HTML escaping, through
// github.com/cbroglie/mustache. It adds what a prompt service needs on
// top: a plain {{var}} with no value is an error naming every missing
// variable, and partials are refused (the library would read them from
// the server's disk).
package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/cbroglie/mustache"
	"github.com/quire/quire"
)

// Template is a parsed template, safe for concurrent use.
type Template struct {
	t *mustache.Template
}

// noPartials refuses every partial; Parse rejects templates naming one,
// so it is only a second line of defence.
type noPartials struct{}

func (noPartials) Get(name string) (string, error) {
	return "", errors.New("partials are not supported")
}

// Parse parses a template. A syntax error or a partial is EUNPROCESSABLE.
func Parse(text string) (*Template, error) {
	t, err := mustache.ParseStringPartialsRaw(text, noPartials{}, true)
	if err != nil {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "template does not parse as Mustache: %v", err)
	}
	if name, ok := findPartial(t.Tags()); ok {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "template uses the partial {{>%s}}; partials are not supported", name)
	}
	return &Template{t: t}, nil
}

func findPartial(tags []mustache.Tag) (string, bool) {
	for _, tag := range tags {
		switch tag.Type() {
		case mustache.Partial:
			return tag.Name(), true
		case mustache.Section, mustache.InvertedSection:
			if n, ok := findPartial(tag.Tags()); ok {
				return n, true
			}
		}
	}
	return "", false
}

// Variable is one tag of a template.
type Variable struct {
	Name string `json:"name"`
	// Type is "variable", "section" or "inverted".
	Type string `json:"type"`
	// Section is the dotted path of the sections the tag sits in, "" at
	// the top level. Names inside a section are looked up in the
	// section's value first.
	Section string `json:"section,omitempty"`
}

// Variables lists the tags of t in order of first appearance.
func (t *Template) Variables() []Variable {
	var out []Variable
	seen := map[Variable]bool{}
	var walk func(tags []mustache.Tag, section string)
	walk = func(tags []mustache.Tag, section string) {
		for _, tag := range tags {
			v := Variable{Name: tag.Name(), Section: section}
			switch tag.Type() {
			case mustache.Variable:
				v.Type = "variable"
			case mustache.Section:
				v.Type = "section"
			case mustache.InvertedSection:
				v.Type = "inverted"
			default:
				continue
			}
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
			if v.Type != "variable" {
				inner := tag.Name()
				if section != "" {
					inner = section + "." + inner
				}
				walk(tag.Tags(), inner)
			}
		}
	}
	walk(t.t.Tags(), "")
	return out
}

// Required lists the variables that must have a value: plain {{var}}
// tags outside any section.
func (t *Template) Required() []string {
	var out []string
	for _, v := range t.Variables() {
		if v.Type == "variable" && v.Section == "" && v.Name != "." {
			out = append(out, v.Name)
		}
	}
	return out
}

// Vars are decoded variables, ready to render with.
type Vars map[string]any

// DecodeVars decodes a JSON object of variables. Numbers keep the text
// they were sent as; null renders as nothing.
func DecodeVars(raw []byte) (Vars, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return Vars{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, quire.Errorf(quire.EINVALID, "variables must be a JSON object")
	}
	return VarsOf(m), nil
}

// VarsOf makes variables of an object decoded with json.Decoder.UseNumber
// (as DecodeVars does), for a caller that decoded it with the rest of a
// request. A nil m is no variables.
func VarsOf(m map[string]any) Vars {
	if m == nil {
		return Vars{}
	}
	return Vars(normalize(m).(map[string]any))
}

// number is a JSON number as sent. Unlike json.Number it has no methods
// the template library could call by name.
type number string

// normalize turns json.Number into number and null into "".
func normalize(v any) any {
	switch x := v.(type) {
	case nil:
		return ""
	case json.Number:
		return number(x)
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	}
	return v
}

// Merge returns base with over's top-level keys laid on top.
func Merge(base, over Vars) Vars {
	if len(base) == 0 {
		return over
	}
	out := make(Vars, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// MaxOutput bounds the text one render may produce. Sections over lists
// multiply: a few nested sections over a list of a hundred items would
// otherwise expand a small template into gigabytes.
const MaxOutput = 1 << 20

// maxSteps bounds the work of one render: tags visited, each weighed by
// the lookups it makes. Nested sections can take exponential time while
// producing no output at all.
const maxSteps = 1 << 18

// TooLargeError is the error for a render that would exceed MaxOutput or
// maxSteps. It is the template and variables together that are at fault,
// so it is EUNPROCESSABLE rather than a limit on the request's size.
func TooLargeError() error {
	return quire.Errorf(quire.EUNPROCESSABLE, "the template expands to more than %d bytes (or %d tags) with these variables", MaxOutput, maxSteps).
		WithDetail("limit", MaxOutput)
}

// errOutputLimit stops the library's writes once MaxOutput is reached.
var errOutputLimit = errors.New("render: output limit reached")

// limitedWriter is a second line of defence behind the walk's estimate.
type limitedWriter struct {
	b    strings.Builder
	over bool
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if w.over || w.b.Len()+len(p) > MaxOutput {
		w.over = true
		return 0, errOutputLimit
	}
	return w.b.Write(p)
}

// Render renders t with vars. A plain {{var}} that resolves to nothing is
// EUNPROCESSABLE with the detail "missing": every such name. A section
// over an absent name is false, as Mustache says. A render that would
// produce more than MaxOutput bytes is refused before it starts.
func (t *Template) Render(vars Vars) (string, error) {
	w := t.walk(vars)
	if w.exceeded() {
		return "", TooLargeError()
	}
	if len(w.missing) > 0 {
		return "", MissingError(w.missing)
	}
	var out limitedWriter
	err := t.t.FRender(&out, map[string]any(vars))
	if out.over || errors.Is(err, errOutputLimit) {
		return "", TooLargeError()
	}
	if err != nil {
		return "", quire.Errorf(quire.EUNPROCESSABLE, "render: %v", err)
	}
	return out.b.String(), nil
}

// MissingError is the error for variables without a value.
func MissingError(missing []string) error {
	return quire.Errorf(quire.EUNPROCESSABLE, "missing variables: %s", strings.Join(missing, ", ")).
		WithDetail("missing", missing)
}

// Missing lists, in order, the plain variables that would render from no
// value. It walks the template as the library renders it: the same
// lookup through the context stack, the same falsiness for sections. On
// a template that expands too far it stops early; Render then refuses it.
func (t *Template) Missing(vars Vars) []string {
	return t.walk(vars).missing
}

func (t *Template) walk(vars Vars) *walker {
	w := &walker{seen: map[string]bool{}}
	w.tags(t.t.Tags(), []any{map[string]any(vars)})
	return w
}

// walker follows a render without producing it: it collects missing
// variables and counts tags visited and the bytes variables would write.
type walker struct {
	missing []string
	seen    map[string]bool
	steps   int
	out     int64
}

func (w *walker) exceeded() bool { return w.steps > maxSteps || w.out > MaxOutput }

func (w *walker) tags(tags []mustache.Tag, stack []any) {
	for _, tag := range tags {
		// A name is looked up through every enclosing section's value,
		// and a dotted one part by part, here and in the library: charge
		// each, or deep nesting or a long chain makes every visit slow.
		if w.steps += len(stack) + strings.Count(tag.Name(), "."); w.exceeded() {
			return
		}
		switch tag.Type() {
		case mustache.Variable:
			v, ok := lookup(stack, tag.Name())
			if !ok {
				if !w.seen[tag.Name()] {
					w.seen[tag.Name()] = true
					w.missing = append(w.missing, tag.Name())
				}
				continue
			}
			w.out += size(v, MaxOutput-w.out+1)
		case mustache.Section:
			v, ok := lookup(stack, tag.Name())
			if !ok || empty(v) {
				continue
			}
			if list, isList := v.([]any); isList {
				for _, item := range list {
					w.steps++
					if w.tags(tag.Tags(), push(stack, item)); w.exceeded() {
						return
					}
				}
				continue
			}
			w.tags(tag.Tags(), push(stack, v))
		case mustache.InvertedSection:
			if v, ok := lookup(stack, tag.Name()); !ok || empty(v) {
				w.tags(tag.Tags(), stack)
			}
		}
	}
}

// size estimates the bytes a value renders to (fmt.Sprint of it), looking
// no further than limit bytes, so that estimating costs no more than the
// output it stands for.
func size(v any, limit int64) int64 {
	switch x := v.(type) {
	case string:
		return int64(len(x))
	case number:
		return int64(len(x))
	case bool:
		return 5
	case []any:
		n := int64(2)
		for _, e := range x {
			if n += 1 + size(e, limit-n); n > limit {
				break
			}
		}
		return n
	case map[string]any:
		n := int64(5)
		for k, e := range x {
			if n += int64(len(k)) + 2 + size(e, limit-n); n > limit {
				break
			}
		}
		return n
	}
	return 8
}

func push(stack []any, v any) []any {
	out := make([]any, 0, len(stack)+1)
	return append(append(out, v), stack...)
}

// lookup finds name in the context stack, innermost first; a dotted name
// resolves its first part in the stack and the rest inside that value.
func lookup(stack []any, name string) (any, bool) {
	if name == "." {
		return stack[0], true
	}
	if head, rest, dotted := strings.Cut(name, "."); dotted {
		v, ok := lookup(stack, head)
		if !ok {
			return nil, false
		}
		return lookup([]any{v}, rest)
	}
	for _, ctx := range stack {
		if m, ok := ctx.(map[string]any); ok {
			if v, ok := m[name]; ok {
				return v, true
			}
		}
	}
	return nil, false
}

// empty is the library's falsiness for JSON values: false, an empty list,
// a blank string.
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return strings.TrimSpace(x) == ""
	case number:
		return strings.TrimSpace(string(x)) == ""
	case []any:
		return len(x) == 0
	}
	return false
}
