// Package render renders prompt templates: Mustache without HTML
// escaping (prompts are not HTML), with the spec's optional modules for
// composition: partials ({{>name}}), inheritance ({{<parent}} with
// {{$block}}…{{/block}}) and dynamic names ({{>*name}}), standalone lines
// and indentation as the spec says.
//
// The engine is written here rather than taken from a library: no
// maintained Go Mustache library implements inheritance and dynamic
// names, and quire needs what none offers: a missing variable or partial
// is an error naming every one (not ""), and a render is bounded as it
// runs (output bytes, tags visited, include depth, include cycles), so
// that no template and variables can make it loop, overflow the stack or
// expand a small template into gigabytes. Rendering is one pass into a
// capped buffer; a parsed Template is immutable and kept by the caller.
package render

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/quire/quire"
)

// Template is a parsed template, safe for concurrent use.
type Template struct {
	nodes   []node
	textLen int
	// hint is about the size of the last output, to allocate the output
	// once: a template including others has little text of its own. It is
	// written only when the output outgrows it or shrinks to under half.
	hint atomic.Int64
}

// Parse parses a template that includes no other: a partial or parent
// tag is EUNPROCESSABLE, as is a syntax error. It is what the API
// accepts until it resolves partials.
func Parse(text string) (*Template, error) {
	t, err := ParseWithPartials(text)
	if err != nil {
		return nil, err
	}
	if n := firstInclude(t.nodes); n != nil {
		sigil := ">"
		if n.kind == kParent {
			sigil = "<"
		}
		if n.dynamic {
			sigil += "*"
		}
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "template uses the partial {{%s%s}}; partials are not supported", sigil, n.text)
	}
	return t, nil
}

// Includes reports whether t has a partial or parent tag (a named or a
// dynamic one): a template without one renders without a resolver.
func (t *Template) Includes() bool { return firstInclude(t.nodes) != nil }

func firstInclude(ns []node) *node {
	for i := range ns {
		switch n := &ns[i]; n.kind {
		case kPartial, kParent:
			return n
		case kSection, kInverted, kBlock:
			if p := firstInclude(n.nodes); p != nil {
				return p
			}
		}
	}
	return nil
}

// ParseWithPartials parses a template that may include others: partials,
// parents and dynamic names, resolved when it renders. A syntax error is
// EUNPROCESSABLE.
func ParseWithPartials(text string) (*Template, error) {
	nodes, textLen, err := parse(text)
	if err != nil {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "template does not parse as Mustache: %v", err)
	}
	return &Template{nodes: nodes, textLen: textLen}, nil
}

// Partials resolves the names of partials and parents to templates.
// Partial returns ErrNoPartial (or a nil template) for a name it does not
// have; any other error ends the render with that error.
type Partials interface {
	Partial(name string) (*Template, error)
}

// ErrNoPartial is a Partials' answer for a name it does not have.
var ErrNoPartial = errors.New("render: no such partial")

// Map is Partials from a map of names to templates.
type Map map[string]*Template

// Partial returns m[name], or ErrNoPartial.
func (m Map) Partial(name string) (*Template, error) {
	if t, ok := m[name]; ok && t != nil {
		return t, nil
	}
	return nil, ErrNoPartial
}

// Options are how RenderWith renders.
type Options struct {
	// Partials resolves {{>name}} and {{<name}}; nil means every partial
	// is missing.
	Partials Partials
	// Name is the rendered template's own name, if it has one, so that a
	// template including itself is a cycle at the first level.
	Name string
}

// Rendered is the result of RenderWith.
type Rendered struct {
	Text string
	// Partials names the partials and parents the render included, each
	// once, in order of first use.
	Partials []string
}

// MaxOutput bounds the text one render may produce. Sections over lists
// multiply: a few nested sections over a list of a hundred items would
// otherwise expand a small template into gigabytes.
const MaxOutput = 1 << 20

// maxSteps bounds the work of one render: tags visited, each weighed by
// the lookups it makes. Nested sections can take exponential time while
// producing no output at all.
const maxSteps = 1 << 18

// MaxDepth bounds how deep partials and parents nest in one render.
const MaxDepth = 16

// errTooLarge is the renderer's mark for a render past a limit.
var errTooLarge = errors.New("render: too large")

// TooLargeError is the error for a render that would exceed MaxOutput or
// maxSteps. It is the template and variables together that are at fault,
// so it is EUNPROCESSABLE rather than a limit on the request's size.
func TooLargeError() error {
	return quire.Errorf(quire.EUNPROCESSABLE, "the template expands to more than %d bytes (or %d tags) with these variables", MaxOutput, maxSteps).
		WithDetail("limit", MaxOutput)
}

// MissingError is the error for variables without a value and partials
// the resolver does not have. A partial is named ">name" in missing (as
// its tag would be); details.missing holds every name as given, and
// details.missing_partials the partials' names alone.
func MissingError(missing []string) error {
	var vars, partials []string
	for _, m := range missing {
		if p, ok := strings.CutPrefix(m, ">"); ok {
			partials = append(partials, p)
		} else {
			vars = append(vars, m)
		}
	}
	var msg []string
	if len(vars) > 0 {
		msg = append(msg, "missing variables: "+strings.Join(vars, ", "))
	}
	if len(partials) > 0 {
		msg = append(msg, "missing partials: "+strings.Join(partials, ", "))
	}
	e := quire.Errorf(quire.EUNPROCESSABLE, "%s", strings.Join(msg, "; ")).WithDetail("missing", missing)
	if len(partials) > 0 {
		e = e.WithDetail("missing_partials", partials)
	}
	return e
}

// CycleError is the cause of the error for partials that include each
// other: Chain names them from the first to the one included again.
type CycleError struct {
	Chain []string
}

func (e *CycleError) Error() string {
	return "include cycle " + strings.Join(e.Chain, " > ")
}

func newCycleError(chain []string) error {
	e := quire.Errorf(quire.EUNPROCESSABLE, "partials include each other: %s", strings.Join(chain, " > ")).
		WithDetail("cycle", chain)
	e.Err = &CycleError{Chain: chain}
	return e
}

func depthError(chain []string) error {
	return quire.Errorf(quire.EUNPROCESSABLE, "partials nest deeper than %d levels: %s", MaxDepth, strings.Join(chain, " > ")).
		WithDetail("chain", chain).WithDetail("limit", MaxDepth)
}

func dynamicNameError(name string) error {
	return quire.Errorf(quire.EUNPROCESSABLE, "the dynamic partial name %q is not a string", name).
		WithDetail("variable", name)
}

// Render renders t with vars, every partial missing. A plain {{var}}
// that resolves to nothing is EUNPROCESSABLE with the detail "missing":
// every such name. A section over an absent name is false, as Mustache
// says. A render that would produce more than MaxOutput bytes is refused.
func (t *Template) Render(vars Vars) (string, error) {
	out, err := t.RenderWith(vars, Options{})
	return out.Text, err
}

// RenderWith renders t with vars and the partials o resolves. Besides
// Render's errors: partials including each other are EUNPROCESSABLE with
// the detail "cycle" (the chain of names; the cause a *CycleError),
// partials nesting deeper than MaxDepth too, and a partial the resolver
// does not have is missing like a variable.
func (t *Template) RenderWith(vars Vars, o Options) (Rendered, error) {
	var r renderer
	t.run(&r, vars, o)
	switch {
	case r.err == errTooLarge:
		return Rendered{}, TooLargeError()
	case r.err != nil:
		return Rendered{}, r.err
	case len(r.missing) > 0:
		return Rendered{}, MissingError(r.missing)
	}
	out := Rendered{Text: r.output()}
	if n, hint := int64(len(out.Text)), t.hint.Load(); n > hint || n < hint/2 {
		t.hint.Store(n)
	}
	if r.used.n > 0 {
		out.Partials = make([]string, 0, r.used.n)
		for i := range r.used.n {
			if u := r.used.at(i); u.t != nil {
				out.Partials = append(out.Partials, u.name)
			}
		}
	}
	return out, nil
}

// Missing lists, in order, the plain variables that would render from no
// value. On a template that expands too far it stops early; Render then
// refuses it.
func (t *Template) Missing(vars Vars) []string {
	return t.MissingWith(vars, Options{})
}

// MissingWith is Missing with partials: a partial o does not resolve is
// listed as ">name".
func (t *Template) MissingWith(vars Vars, o Options) []string {
	r := renderer{dry: true}
	t.run(&r, vars, o)
	return r.missing
}

// run renders t into r, which the caller keeps on its stack.
func (t *Template) run(r *renderer, vars Vars, o Options) {
	r.partials = o.Partials
	r.root = o.Name
	r.stack.push(map[string]any(vars))
	if !r.dry {
		r.buf = make([]byte, max(t.textLen+64, int(t.hint.Load())))
	}
	r.nodes(t.nodes)
}

// PartialNames lists the names of the partials and parents t includes by
// name (not the dynamic ones), each once, in order of first appearance:
// what a cycle check at publish and a list of dependents need.
//
// Linear in the template's size (a set, not a scan of the list): a
// template may name tens of thousands of partials before the write-time
// cap (MaxPartials) refuses it, and one written before the cap, or
// through the files API or a push, is still walked.
func (t *Template) PartialNames() []string {
	var out []string
	seen := map[string]struct{}{}
	var walk func(ns []node)
	walk = func(ns []node) {
		for i := range ns {
			n := &ns[i]
			if n.kind == kPartial || n.kind == kParent {
				if _, dup := seen[n.text]; !dup && !n.dynamic {
					seen[n.text] = struct{}{}
					out = append(out, n.text)
				}
			}
			walk(n.nodes)
		}
	}
	walk(t.nodes)
	return out
}

// MaxPartials is how many distinct partials (and parents) one prompt's
// templates may name: far more than composition needs, few enough that
// what a render, a publish check or a dependents walk does per template
// stays small.
const MaxPartials = 1000

// CheckPartialCount refuses templates that together name more than
// MaxPartials distinct partials: EUNPROCESSABLE with details.limit.
func CheckPartialCount(ts ...*Template) error {
	seen := map[string]struct{}{}
	for _, t := range ts {
		for _, n := range t.PartialNames() {
			seen[n] = struct{}{}
		}
	}
	if len(seen) > MaxPartials {
		return quire.Errorf(quire.EUNPROCESSABLE, "the template names %d distinct partials; the limit is %d", len(seen), MaxPartials).
			WithDetail("limit", MaxPartials).WithDetail("partials", len(seen))
	}
	return nil
}

// CheckPartials follows the partials t names (PartialNames), and theirs,
// through p, as a publish check: partials including each other are an
// error with the detail "cycle" (t, named name, is the chain's root, so
// a template including itself is a cycle), and partials p does not have
// a MissingError naming them. Dynamic names depend on the variables and
// are checked when rendering.
func CheckPartials(name string, t *Template, p Partials) error {
	var missing []string
	done := map[string]bool{}
	var walk func(t *Template, chain []string) error
	walk = func(t *Template, chain []string) error {
		for _, n := range t.PartialNames() {
			next := append(chain[:len(chain):len(chain)], n)
			if slices.Contains(chain, n) {
				return newCycleError(next)
			}
			if done[n] {
				continue
			}
			if len(chain) > MaxDepth {
				return depthError(next)
			}
			pt, err := p.Partial(n)
			if errors.Is(err, ErrNoPartial) || err == nil && pt == nil {
				done[n] = true // so listed once
				missing = append(missing, ">"+n)
				continue
			}
			if err != nil {
				return err
			}
			if err := walk(pt, next); err != nil {
				return err
			}
			done[n] = true
		}
		return nil
	}
	if err := walk(t, []string{name}); err != nil {
		return err
	}
	if len(missing) > 0 {
		return MissingError(missing)
	}
	return nil
}

// Variable is one tag of a template.
type Variable struct {
	Name string `json:"name"`
	// Type is "variable", "section" or "inverted". The name of a dynamic
	// partial is a "variable".
	Type string `json:"type"`
	// Section is the dotted path of the sections the tag sits in, "" at
	// the top level. Names inside a section are looked up in the
	// section's value first.
	Section string `json:"section,omitempty"`
}

// Variables lists the tags of t in order of first appearance. Blocks are
// transparent: their content is listed as if it stood in their place.
func (t *Template) Variables() []Variable {
	var out []Variable
	seen := map[Variable]bool{}
	add := func(v Variable) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	var walk func(ns []node, section string)
	walk = func(ns []node, section string) {
		for i := range ns {
			n := &ns[i]
			switch n.kind {
			case kVar:
				add(Variable{Name: n.text, Type: "variable", Section: section})
			case kPartial, kParent:
				if n.dynamic {
					add(Variable{Name: n.text, Type: "variable", Section: section})
				}
				walk(n.nodes, section)
			case kBlock:
				walk(n.nodes, section)
			case kSection, kInverted:
				typ := "section"
				if n.kind == kInverted {
					typ = "inverted"
				}
				add(Variable{Name: n.text, Type: typ, Section: section})
				inner := n.text
				if section != "" {
					inner = section + "." + inner
				}
				walk(n.nodes, inner)
			}
		}
	}
	walk(t.nodes, "")
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
