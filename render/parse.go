package render

import (
	"fmt"
	"strings"
)

// kind is the kind of a node of a parsed template.
type kind uint8

const (
	kText     kind = iota
	kVar           // {{x}}, {{{x}}}, {{&x}}: all raw
	kSection       // {{#x}}…{{/x}}
	kInverted      // {{^x}}…{{/x}}
	kPartial       // {{>x}}, {{>*x}}
	kParent        // {{<x}}…{{/x}}, {{<*x}}…{{/*x}}
	kBlock         // {{$x}}…{{/x}}
)

// node is one element of a parsed template.
type node struct {
	kind kind
	// dynamic: a partial or parent whose name is the value of name.
	dynamic bool
	// standalone: the tag stood alone on its line (for a parent or
	// partial, the included text is indented by indent; for a block, its
	// lines are reindented where it is used).
	standalone bool
	// text is a text node's text, or the tag's name.
	text string
	// parts are a dotted name split at the dots; nil for ".".
	parts []string
	// starts are a text node's line starts: where an included template's
	// indentation goes.
	starts []int
	// nodes are the body of a section, inverted section or block, or the
	// blocks (arguments) of a parent.
	nodes []node
	// indent is a standalone partial's or parent's leading whitespace, or
	// the indentation a standalone block's content takes where it is used.
	indent string
	// dedent is the indentation common to a standalone block's lines,
	// removed wherever its content is used.
	dedent string
}

// token is a tag of the source.
type token struct {
	op         byte // 0 for {{x}}, or the sigil: & # ^ / ! > < $ =
	start, end int  // the tag in the source
	name       string
	dynamic    bool
	// cutBefore and cutAfter bound the text kept around the tag: a
	// standalone tag takes its line's whitespace and line end with it.
	cutBefore, cutAfter int
	standalone          bool
	lineCut             bool   // the line's start went with the tag
	ws                  string // the leading whitespace of a standalone tag
	match               int    // the index of the matching opener or closer
}

func eligible(op byte) bool {
	switch op {
	case '#', '^', '/', '!', '>', '<', '$', '=':
		return true
	}
	return false
}

// opens reports whether op opens a section that a {{/name}} closes.
func opens(op byte) bool { return op == '#' || op == '^' || op == '<' || op == '$' }

type syntaxError struct {
	line int
	msg  string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

func lineOf(src string, pos int) int { return strings.Count(src[:pos], "\n") + 1 }

// tokenize finds the tags of src, following set-delimiter tags, and pairs
// openers with closers.
func tokenize(src string) ([]token, error) {
	var toks []token
	var open []int
	otag, ctag := "{{", "}}"
	fail := func(pos int, format string, args ...any) error {
		return &syntaxError{lineOf(src, pos), fmt.Sprintf(format, args...)}
	}
	for pos := 0; ; {
		i := strings.Index(src[pos:], otag)
		if i < 0 {
			break
		}
		t := token{start: pos + i}
		p := t.start + len(otag)
		var content string
		switch {
		case strings.HasPrefix(src[p:], "{"):
			j := strings.Index(src[p+1:], "}"+ctag)
			if j < 0 {
				return nil, fail(t.start, "unclosed tag %s{", otag)
			}
			content, t.op, t.end = src[p+1:p+1+j], '&', p+1+j+1+len(ctag)
		case strings.HasPrefix(src[p:], "="):
			j := strings.Index(src[p+1:], "="+ctag)
			if j < 0 {
				return nil, fail(t.start, "unclosed set-delimiter tag")
			}
			content, t.op, t.end = src[p+1:p+1+j], '=', p+1+j+1+len(ctag)
			f := strings.Fields(content)
			if len(f) != 2 || strings.Contains(content, "=") {
				return nil, fail(t.start, "bad set-delimiter tag %s=%s=%s: it takes two delimiters without = or spaces", otag, content, ctag)
			}
			otag, ctag = f[0], f[1]
		default:
			j := strings.Index(src[p:], ctag)
			if j < 0 {
				return nil, fail(t.start, "unclosed tag %s", otag)
			}
			content, t.end = src[p:p+j], p+j+len(ctag)
			content = strings.TrimSpace(content)
			if content != "" && strings.IndexByte("&#^/!><$", content[0]) >= 0 {
				t.op, content = content[0], content[1:]
			}
		}
		pos = t.end
		if t.op == '=' || t.op == '!' {
			toks = append(toks, t)
			continue
		}
		content = strings.TrimSpace(content)
		if t.op == '>' || t.op == '<' || t.op == '/' {
			if rest, ok := strings.CutPrefix(content, "*"); ok {
				t.dynamic, content = true, strings.TrimSpace(rest)
			}
		}
		if content == "" {
			return nil, fail(t.start, "a tag without a name")
		}
		t.name = content
		switch {
		case opens(t.op):
			open = append(open, len(toks))
		case t.op == '/':
			if len(open) == 0 {
				return nil, fail(t.start, "%s/%s%s closes nothing", otag, t.name, ctag)
			}
			o := open[len(open)-1]
			if toks[o].name != t.name || t.dynamic && !toks[o].dynamic {
				return nil, fail(t.start, "%s/%s%s closes %s%c%s%s (line %d)", otag, t.name, ctag, otag, toks[o].op, toks[o].name, ctag, lineOf(src, toks[o].start))
			}
			open = open[:len(open)-1]
			toks[o].match, t.match = len(toks), o
		}
		toks = append(toks, t)
	}
	if len(open) > 0 {
		o := toks[open[len(open)-1]]
		return nil, fail(o.start, "%c%s is never closed", o.op, o.name)
	}
	return toks, nil
}

// lineBefore returns where the line holding pos starts, if only spaces
// and tabs stand between there and pos. It looks no further back than
// the whitespace, so that many tags on one long line cost no more than
// the line.
func lineBefore(src string, pos int) (int, bool) {
	k := pos
	for k > 0 && (src[k-1] == ' ' || src[k-1] == '\t') {
		k--
	}
	return k, k == 0 || src[k-1] == '\n'
}

// restOfLine returns where the line holding pos ends (past its line
// end), if only whitespace follows pos on it.
func restOfLine(src string, pos int) (int, bool) {
	k := pos
	for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
		k++
	}
	switch {
	case k == len(src):
		return k, true
	case src[k] == '\n':
		return k + 1, true
	case src[k] == '\r' && k+1 < len(src) && src[k+1] == '\n':
		return k + 2, true
	}
	return k, false
}

// standalone marks the tags that stand alone on their line, as the spec
// says: the line's whitespace and line end go with them. Besides a
// single tag, a line may hold a parent with its first block
// ({{<p}}{{$b}}), a last block's end with its parent's ({{/b}}{{/p}}), an
// empty parent ({{<p}}{{/p}}) or an empty block ({{$b}}{{/b}}, which keeps
// its line end).
func standalone(src string, toks []token) {
	for i := range toks {
		toks[i].cutBefore, toks[i].cutAfter = toks[i].start, toks[i].end
	}
	for i := 0; i < len(toks); i++ {
		t := &toks[i]
		if !eligible(t.op) {
			continue
		}
		ls, ok := lineBefore(src, t.start)
		if !ok {
			continue
		}
		if eol, ok := restOfLine(src, t.end); ok {
			t.standalone, t.lineCut, t.ws = true, true, src[ls:t.start]
			t.cutBefore, t.cutAfter = ls, eol
			continue
		}
		if i+1 >= len(toks) || toks[i+1].start != t.end {
			continue
		}
		u := &toks[i+1]
		eol, ok := restOfLine(src, u.end)
		if !ok {
			continue
		}
		keepEOL := false
		switch {
		case t.op == '<' && u.op == '$':
		case t.op == '<' && u.op == '/' && u.match == i:
		case t.op == '$' && u.op == '/' && u.match == i:
			keepEOL = true
		case t.op == '/' && toks[t.match].op == '$' && u.op == '/' && toks[u.match].op == '<':
		default:
			continue
		}
		ws := src[ls:t.start]
		t.standalone, t.lineCut, t.ws, t.cutBefore = true, true, ws, ls
		u.standalone, u.ws = true, ws
		if !keepEOL {
			u.cutAfter = eol
		}
		i++
	}
}

// maxNesting bounds how deep parents and blocks nest in one template:
// each block's lines are read again to find their indentation.
// maxSections bounds how deep sections nest: the variables listing keeps
// a dotted path per level, so unbounded nesting costs the square of the
// depth in memory (a 1 MiB template could ask for gigabytes; 4,096 levels
// keep it to tens of MiB).
const (
	maxNesting  = 64
	maxSections = 4096
)

// builder collects the nodes of one section while parsing.
type builder struct {
	tok   int
	nodes []node
}

// parse parses src into nodes. It also reports the bytes of text.
func parse(src string) ([]node, int, error) {
	toks, err := tokenize(src)
	if err != nil {
		return nil, 0, err
	}
	standalone(src, toks)
	textLen, nested, sections := 0, 0, 0
	stack := []builder{{tok: -1}}
	addText := func(a, b int, next *token) {
		top := &stack[len(stack)-1]
		var starts []int
		p := a
		if p != 0 && src[p-1] != '\n' {
			p = nextLine(src, p, b)
		}
		for p >= 0 && p < len(src) {
			if p == b && (next == nil || next.lineCut) {
				break // a line that went with a standalone tag
			}
			starts = append(starts, p-a)
			p = nextLine(src, p, b)
		}
		if a == b && starts == nil {
			return
		}
		textLen += b - a
		top.nodes = append(top.nodes, node{kind: kText, text: src[a:b], starts: starts})
	}
	prev := 0
	for i := range toks {
		t := &toks[i]
		addText(prev, max(prev, t.cutBefore), t)
		prev = t.cutAfter
		n := node{text: t.name, dynamic: t.dynamic, standalone: t.standalone}
		if t.name != "." {
			n.parts = strings.Split(t.name, ".")
		}
		switch t.op {
		case '!', '=':
			continue
		case 0, '&':
			n.kind = kVar
		case '>':
			n.kind, n.indent = kPartial, t.ws
		case '#', '^', '<', '$':
			if t.op == '<' || t.op == '$' {
				if nested++; nested > maxNesting {
					return nil, 0, &syntaxError{lineOf(src, t.start), fmt.Sprintf("parents and blocks nest deeper than %d levels", maxNesting)}
				}
			} else if sections++; sections > maxSections {
				return nil, 0, &syntaxError{lineOf(src, t.start), fmt.Sprintf("sections nest deeper than %d levels", maxSections)}
			}
			stack = append(stack, builder{tok: i})
			continue
		case '/':
			b := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			o := &toks[b.tok]
			if o.op == '<' || o.op == '$' {
				nested--
			} else {
				sections--
			}
			n = node{text: o.name, dynamic: o.dynamic, standalone: o.standalone, parts: n.parts, nodes: b.nodes}
			switch o.op {
			case '#':
				n.kind = kSection
			case '^':
				n.kind = kInverted
			case '<':
				n.kind, n.indent = kParent, o.ws
				var blocks []node
				for _, c := range b.nodes {
					if c.kind == kBlock {
						blocks = append(blocks, c)
					}
				}
				n.nodes = blocks
			case '$':
				n.kind = kBlock
				if o.standalone {
					n.dedent = commonIndent(src[o.cutAfter:max(o.cutAfter, t.cutBefore)])
					n.indent = n.dedent
					if n.indent == "" {
						n.indent = o.ws
					}
				}
			}
		}
		top := &stack[len(stack)-1]
		top.nodes = append(top.nodes, n)
	}
	addText(prev, len(src), nil)
	return stack[0].nodes, textLen, nil
}

// nextLine returns the start of the line after p, if it starts by b; or
// -1.
func nextLine(src string, p, b int) int {
	if q := strings.IndexByte(src[p:b], '\n'); q >= 0 {
		return p + q + 1
	}
	return -1
}

// commonIndent is the leading whitespace every non-blank line of s
// shares.
func commonIndent(s string) string {
	var common string
	first := true
	for line := range strings.Lines(s) {
		trimmed := strings.TrimLeft(line, " \t")
		if strings.TrimRight(trimmed, "\r\n") == "" {
			continue
		}
		ws := line[:len(line)-len(trimmed)]
		if first {
			common, first = ws, false
			continue
		}
		n := 0
		for n < len(common) && n < len(ws) && common[n] == ws[n] {
			n++
		}
		common = common[:n]
	}
	return common
}
