package render

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// randomCases are generated templates for the conformance corpus: a
// seeded generator (the same cases every run) mixes every kind of tag,
// standalone lines with spaces, tabs and CRLF, indentation, set
// delimiters, partials and parents that include each other, and
// variables of every JSON kind, so that the SDKs' engines are compared
// with this one on combinations no hand-written case thought of.
func randomCases(n int) []conformanceCase {
	rng := rand.New(rand.NewPCG(34, 2026))
	out := make([]conformanceCase, 0, n)
	for i := range n {
		g := &tmplGen{rng: rng, open: "{{", close: "}}", parents: randParents}
		c := conformanceCase{Name: fmt.Sprintf("random/%03d", i), Self: "self"}
		c.Template = str(g.template(3))
		c.Partials = map[string]string{}
		{
			// pN includes only the partials after it, so that most cases
			// have no cycle (a dynamic name may still make one).
			for j, p := range randParents {
				// A partial that does not parse cannot be published: make
				// another.
				for rng.IntN(8) > 0 {
					pg := &tmplGen{rng: rng, open: "{{", close: "}}", parents: randParents[j+1:]}
					if t := pg.template(2); parses(t) {
						c.Partials[p] = t
						break
					}
				}
			}
		}
		vars, _ := json.Marshal(randomVars(rng))
		c.Variables = vars
		out = append(out, c)
	}
	return out
}

func parses(t string) bool {
	_, err := ParseWithPartials(t)
	return err == nil
}

type tmplGen struct {
	rng         *rand.Rand
	open, close string
	parents     []string // the partials it may include
}

var (
	randNames   = []string{"a", "b", "c", "list", "obj", "obj.b", "obj.c", ".", "a", "b", "list"}
	randTexts   = []string{"x", "hello", " ", "  ", "\t", "\n", "\r\n", "\n\n", "  \n", "{", "}", "é漢", "<b>&amp;</b>"}
	randBlocks  = []string{"b1", "b2"}
	randParents = []string{"p1", "p2", "p3"}
)

func (g *tmplGen) pick(s []string) string { return s[g.rng.IntN(len(s))] }

func (g *tmplGen) tag(s string) string { return g.open + s + g.close }

// line puts a tag on a line of its own now and then, so that standalone
// rules apply, with some leading whitespace.
func (g *tmplGen) line(tag string) string {
	if g.rng.IntN(2) == 0 {
		return tag
	}
	return "\n" + g.pick([]string{"", " ", "  ", "\t"}) + tag + g.pick([]string{"\n", "\r\n", " \n"})
}

func (g *tmplGen) template(depth int) string {
	var b strings.Builder
	if g.rng.IntN(8) == 0 {
		b.WriteString(g.line(g.tag("=<% %>=")))
		g.open, g.close = "<%", "%>"
	}
	for range 1 + g.rng.IntN(6) {
		b.WriteString(g.node(depth))
	}
	return b.String()
}

func (g *tmplGen) node(depth int) string {
	k := g.rng.IntN(12)
	if depth <= 0 && k >= 6 {
		k = g.rng.IntN(6)
	}
	switch k {
	case 0, 1:
		return g.pick(randTexts)
	case 2:
		return g.tag(g.pick(randNames))
	case 3:
		name := g.pick(randNames)
		if g.rng.IntN(2) == 0 {
			return g.tag("{" + name + "}")
		}
		return g.tag("& " + name)
	case 4:
		return g.line(g.tag("! note "))
	case 5:
		if len(g.parents) == 0 {
			return g.pick(randTexts)
		}
		return g.line(g.tag("> " + g.pick(g.parents)))
	case 6, 7:
		name := g.pick(randNames[:6])
		op := g.pick([]string{"#", "^"})
		return g.line(g.tag(op+name)) + g.body(depth-1) + g.line(g.tag("/"+name))
	case 8:
		b := g.pick(randBlocks)
		return g.line(g.tag("$"+b)) + g.body(depth-1) + g.line(g.tag("/"+b))
	case 9:
		if len(g.parents) == 0 {
			return g.pick(randTexts)
		}
		p := g.pick(g.parents)
		var s strings.Builder
		s.WriteString(g.line(g.tag("<" + p)))
		for range g.rng.IntN(3) {
			b := g.pick(randBlocks)
			s.WriteString(g.line(g.tag("$"+b)) + g.body(depth-1) + g.line(g.tag("/"+b)))
		}
		s.WriteString(g.line(g.tag("/" + p)))
		return s.String()
	case 10:
		if g.rng.IntN(10) == 0 {
			return g.tag("missing")
		}
		return g.line(g.tag(">* name"))
	default:
		return g.pick(randTexts) + g.tag(g.pick(randNames))
	}
}

func (g *tmplGen) body(depth int) string {
	var b strings.Builder
	for range g.rng.IntN(4) {
		b.WriteString(g.node(depth))
	}
	return b.String()
}

func randomVars(rng *rand.Rand) map[string]any {
	m := map[string]any{}
	for _, k := range []string{"a", "b", "c", "list", "obj"} {
		if rng.IntN(8) > 0 {
			m[k] = randomValue(rng, 2)
		}
	}
	if rng.IntN(10) > 0 {
		m["name"] = "p" + fmt.Sprint(1+rng.IntN(3)) // a dynamic partial's name
	}
	return m
}

func randomValue(rng *rand.Rand, depth int) any {
	k := rng.IntN(9)
	if depth <= 0 && k >= 7 {
		k = rng.IntN(7)
	}
	switch k {
	case 0:
		return []string{"Ann", "", "  ", "p1", "p2", "x\ny", "é"}[rng.IntN(7)]
	case 1:
		return []any{0, 1, 42, -3}[rng.IntN(4)]
	case 2:
		return []any{1.5, -0.25, 1000000}[rng.IntN(3)]
	case 3:
		return rng.IntN(2) == 0
	case 4:
		return nil
	case 5:
		return "p" + fmt.Sprint(1+rng.IntN(3))
	case 6:
		return []any{}
	case 7:
		l := make([]any, 1+rng.IntN(3))
		for i := range l {
			l[i] = randomValue(rng, depth-1)
		}
		return l
	default:
		return map[string]any{"b": randomValue(rng, depth-1), "c": randomValue(rng, depth-1)}
	}
}
