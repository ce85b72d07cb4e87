package render

import (
	"errors"
	"slices"
	"unsafe"
)

// renderer is one render in progress.
type renderer struct {
	// buf[:size] is the output. Writes copy into buf without storing a
	// pointer (which costs a GC write barrier while the GC marks) until
	// it is full.
	buf     []byte
	size    int  // bytes rendered
	dry     bool // count the bytes, keep none (Missing)
	scratch []byte
	// stack is the context stack, innermost last. It and the lists
	// below live in fixed arrays while they are short, so that a render
	// allocates nothing but its output (the renderer stays on the caller's
	// stack).
	stack    valueStack
	partials Partials
	// root is the rendered template's own name, if known.
	root string
	// chain is the partials and parents being rendered, outermost first,
	// as indexes into used.
	chain  [MaxDepth]int32
	chainN int
	// used are the partials resolved so far, in order of first use.
	used usedList
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

// valueStack is a stack of values, the first few in an array.
type valueStack struct {
	a    [8]any
	more []any
	n    int
}

func (s *valueStack) push(v any) {
	if s.n < len(s.a) {
		s.a[s.n] = v
	} else {
		s.more = append(s.more[:s.n-len(s.a)], v)
	}
	s.n++
}

func (s *valueStack) pop() {
	s.n--
	if s.n < len(s.a) {
		s.a[s.n] = nil
	}
}

func (s *valueStack) at(i int) any {
	if i < len(s.a) {
		return s.a[i]
	}
	return s.more[i-len(s.a)]
}

// usedList is a list of resolved partials, the first few in an array.
type usedList struct {
	a    [4]resolved
	more []resolved
	n    int
}

func (l *usedList) add(u resolved) int {
	if l.n < len(l.a) {
		l.a[l.n] = u
	} else {
		l.more = append(l.more, u)
	}
	l.n++
	return l.n - 1
}

func (l *usedList) at(i int) *resolved {
	if i < len(l.a) {
		return &l.a[i]
	}
	return &l.more[i-len(l.a)]
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
	if r.size += len(s); r.size > MaxOutput {
		r.err = errTooLarge
		return false
	}
	if !r.dry {
		if r.size > len(r.buf) {
			r.grow()
		}
		copy(r.buf[r.size-len(s):], s)
	}
	return true
}

// grow makes room in buf for size bytes.
func (r *renderer) grow() {
	buf := make([]byte, max(2*len(r.buf), r.size))
	copy(buf, r.buf)
	r.buf = buf
}

func (r *renderer) writeBytes(b []byte) bool {
	if r.size += len(b); r.size > MaxOutput {
		r.err = errTooLarge
		return false
	}
	if !r.dry {
		if r.size > len(r.buf) {
			r.grow()
		}
		copy(r.buf[r.size-len(b):], b)
	}
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
		return r.stack.at(r.stack.n - 1), true
	}
	var v any
	found := false
	for i := r.stack.n - 1; i >= 0; i-- {
		if m, ok := r.stack.at(i).(map[string]any); ok {
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
		if !r.charge(r.stack.n + len(n.parts)) {
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
					r.stack.push(item)
					ok := r.nodes(n.nodes)
					r.stack.pop()
					if !ok {
						return false
					}
				}
				continue
			}
			r.stack.push(v)
			ok = r.nodes(n.nodes)
			r.stack.pop()
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
	i, err := r.resolve(name)
	if err != nil {
		r.err = err
		return false
	}
	if name == r.root || slices.Contains(r.chain[:r.chainN], int32(i)) {
		r.err = newCycleError(append(r.chainNames(), name))
		return false
	}
	if r.chainN >= MaxDepth {
		r.err = depthError(append(r.chainNames(), name))
		return false
	}
	t := r.used.at(i).t
	if t == nil {
		r.miss(">" + name)
		return true
	}
	// Most includes are neither indented nor inside indented text: then
	// the frame stays as it is.
	indent, dedent := r.indent, r.dedent
	reframe := indent != "" || dedent != "" || n.standalone && n.indent != ""
	if reframe {
		r.indent, r.dedent = "", ""
		if n.standalone {
			r.indent = indent + trimIndent(n.indent, dedent)
		}
	}
	r.chain[r.chainN] = int32(i)
	r.chainN++
	if n.kind == kParent {
		r.args = append(r.args, n)
	}
	ok := r.nodes(t.nodes)
	if n.kind == kParent {
		r.args = r.args[:len(r.args)-1]
	}
	r.chainN--
	if reframe {
		r.indent, r.dedent = indent, dedent
	}
	return ok
}

// resolve finds a partial, once per render: it returns its index in
// r.used.
func (r *renderer) resolve(name string) (int, error) {
	if !r.charge(r.used.n) {
		return 0, errTooLarge
	}
	for i := range r.used.n {
		if r.used.at(i).name == name {
			return i, nil
		}
	}
	if r.partials == nil {
		return r.used.add(resolved{name, nil}), nil
	}
	t, err := r.partials.Partial(name)
	if errors.Is(err, ErrNoPartial) {
		t, err = nil, nil
	}
	if err != nil {
		return 0, err
	}
	return r.used.add(resolved{name, t}), nil
}

// chainNames names the includes being rendered, the root first.
func (r *renderer) chainNames() []string {
	var out []string
	if r.root != "" {
		out = append(out, r.root)
	}
	for _, i := range r.chain[:r.chainN] {
		out = append(out, r.used.at(int(i)).name)
	}
	return out
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

// output is the output, without copying it: buf is written no more, as
// strings.Builder does.
func (r *renderer) output() string {
	if r.size == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(r.buf), r.size)
}
