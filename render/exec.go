package render

import (
	"errors"
	"slices"
	"strings"
)

// renderer is one render in progress.
type renderer struct {
	out      strings.Builder
	scratch  []byte
	stack    []any
	stackBuf [8]any
	partials Partials
	// chain names the partials and parents being rendered, outermost
	// first, the rendered template's own name (if known) at the root.
	chain []string
	base  int // 1 when chain starts with the rendered template's name
	// used are the partials resolved so far, in order of first use.
	used []resolved
	// args are the parents being rendered, outermost first: their blocks
	// override the blocks of what they include, the outermost winning.
	args []*node
	// active are the overriding blocks being rendered: a block's own
	// content never overrides a block inside it.
	active []*node
	// indent and dedent reindent the lines of included text: dedent is
	// taken off each line of the source being rendered, indent put on.
	indent, dedent string
	steps          int
	missing        []string
	seen           map[string]bool
	err            error
}

type resolved struct {
	name string
	t    *Template
}

// charge counts work, and stops the render past maxSteps.
func (r *renderer) charge(n int) bool {
	if r.steps += n; r.steps > maxSteps {
		r.err = errTooLarge
		return false
	}
	return true
}

func (r *renderer) write(s string) bool {
	if r.out.Len()+len(s) > MaxOutput {
		r.err = errTooLarge
		return false
	}
	r.out.WriteString(s)
	return true
}

func (r *renderer) writeBytes(b []byte) bool {
	if r.out.Len()+len(b) > MaxOutput {
		r.err = errTooLarge
		return false
	}
	r.out.Write(b)
	return true
}

// miss records a name without a value (or, as ">name", a partial the
// resolver does not have).
func (r *renderer) miss(name string) {
	if r.seen == nil {
		if slices.Contains(r.missing, name) {
			return
		}
		if len(r.missing) >= 16 {
			r.seen = make(map[string]bool, 2*len(r.missing))
			for _, m := range r.missing {
				r.seen[m] = true
			}
		}
	} else if r.seen[name] {
		return
	}
	if r.seen != nil {
		r.seen[name] = true
	}
	r.missing = append(r.missing, name)
}

// lookup finds a name in the context stack, innermost first; a dotted
// name resolves its first part in the stack and the rest inside that
// value.
func (r *renderer) lookup(n *node) (any, bool) {
	if n.parts == nil {
		return r.stack[len(r.stack)-1], true
	}
	var v any
	found := false
	for i := len(r.stack) - 1; i >= 0; i-- {
		if m, ok := r.stack[i].(map[string]any); ok {
			if v, found = m[n.parts[0]]; found {
				break
			}
		}
	}
	if !found {
		return nil, false
	}
	for _, p := range n.parts[1:] {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

// nodes renders a list of nodes; false once the render must stop.
func (r *renderer) nodes(ns []node) bool {
	for i := range ns {
		n := &ns[i]
		if n.kind == kText {
			if !r.text(n) {
				return false
			}
			continue
		}
		// A lookup walks the context stack and a dotted name: charge for
		// both, or deep nesting or long chains make every tag slow.
		if !r.charge(len(r.stack) + len(n.parts)) {
			return false
		}
		switch n.kind {
		case kVar:
			v, ok := r.lookup(n)
			if !ok {
				r.miss(n.text)
				continue
			}
			switch x := v.(type) {
			case string:
				if !r.write(x) {
					return false
				}
			case number:
				if !r.write(string(x)) {
					return false
				}
			default:
				r.scratch = appendValue(r.scratch[:0], v)
				if !r.writeBytes(r.scratch) {
					return false
				}
			}
		case kSection:
			v, ok := r.lookup(n)
			if !ok || empty(v) {
				continue
			}
			if list, isList := v.([]any); isList {
				for _, item := range list {
					if !r.charge(1) {
						return false
					}
					r.stack = append(r.stack, item)
					ok := r.nodes(n.nodes)
					r.stack = r.stack[:len(r.stack)-1]
					if !ok {
						return false
					}
				}
				continue
			}
			r.stack = append(r.stack, v)
			ok = r.nodes(n.nodes)
			r.stack = r.stack[:len(r.stack)-1]
			if !ok {
				return false
			}
		case kInverted:
			if v, ok := r.lookup(n); !ok || empty(v) {
				if !r.nodes(n.nodes) {
					return false
				}
			}
		case kPartial, kParent:
			if !r.include(n) {
				return false
			}
		case kBlock:
			if !r.block(n) {
				return false
			}
		}
	}
	return true
}

// text writes a text node; in included text, each line reindented.
func (r *renderer) text(n *node) bool {
	if len(n.starts) == 0 || r.indent == "" && r.dedent == "" {
		return r.write(n.text)
	}
	s, prev := n.text, 0
	for _, at := range n.starts {
		if !r.write(s[prev:at]) {
			return false
		}
		k, d := at, r.dedent
		for len(d) > 0 && k < len(s) && s[k] == d[0] {
			k, d = k+1, d[1:]
		}
		if k < len(s) && s[k] != '\n' && s[k] != '\r' || k == len(s) {
			if !r.write(r.indent) {
				return false
			}
		}
		prev = k
	}
	return r.write(s[prev:])
}

// include renders a partial or a parent.
func (r *renderer) include(n *node) bool {
	name := n.text
	if n.dynamic {
		v, ok := r.lookup(n)
		if !ok {
			r.miss(n.text)
			return true
		}
		switch x := v.(type) {
		case string:
			name = x
		case number:
			name = string(x)
		default:
			r.err = dynamicNameError(n.text)
			return false
		}
	}
	if slices.Contains(r.chain, name) {
		r.err = newCycleError(append(slices.Clone(r.chain), name))
		return false
	}
	if len(r.chain)-r.base >= MaxDepth {
		r.err = depthError(append(slices.Clone(r.chain), name))
		return false
	}
	t, err := r.resolve(name)
	if err != nil {
		r.err = err
		return false
	}
	if t == nil {
		r.miss(">" + name)
		return true
	}
	indent, dedent := r.indent, r.dedent
	if n.standalone {
		r.indent = indent + trimIndent(n.indent, dedent)
	} else {
		r.indent = ""
	}
	r.dedent = ""
	r.chain = append(r.chain, name)
	if n.kind == kParent {
		r.args = append(r.args, n)
	}
	ok := r.nodes(t.nodes)
	if n.kind == kParent {
		r.args = r.args[:len(r.args)-1]
	}
	r.chain = r.chain[:len(r.chain)-1]
	r.indent, r.dedent = indent, dedent
	return ok
}

// resolve finds a partial, once per render.
func (r *renderer) resolve(name string) (*Template, error) {
	if !r.charge(len(r.used)) {
		return nil, errTooLarge
	}
	for _, u := range r.used {
		if u.name == name {
			return u.t, nil
		}
	}
	if r.partials == nil {
		r.used = append(r.used, resolved{name, nil})
		return nil, nil
	}
	t, err := r.partials.Partial(name)
	if errors.Is(err, ErrNoPartial) {
		t, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.used = append(r.used, resolved{name, t})
	return t, nil
}

// block renders a block: the content an enclosing parent passes for its
// name, else its own.
func (r *renderer) block(site *node) bool {
	content := site
	for _, p := range r.args {
		if !r.charge(len(p.nodes)) {
			return false
		}
		for i := range p.nodes {
			if b := &p.nodes[i]; b.text == site.text && !slices.Contains(r.active, b) {
				content = b
				break
			}
		}
		if content != site {
			break
		}
	}
	if content == site && !site.standalone {
		return r.nodes(site.nodes)
	}
	indent, dedent := r.indent, r.dedent
	switch {
	case site.standalone:
		r.indent = indent + trimIndent(site.indent, dedent)
		r.dedent = content.dedent
	default:
		r.indent, r.dedent = "", content.dedent
	}
	if content != site {
		r.active = append(r.active, content)
	}
	ok := r.nodes(content.nodes)
	if content != site {
		r.active = r.active[:len(r.active)-1]
	}
	r.indent, r.dedent = indent, dedent
	return ok
}

// trimIndent takes dedent off the start of indent, as far as they agree.
func trimIndent(indent, dedent string) string {
	for len(indent) > 0 && len(dedent) > 0 && indent[0] == dedent[0] {
		indent, dedent = indent[1:], dedent[1:]
	}
	return indent
}
