package web

import (
	"fmt"
	"strings"
	"testing"
)

func TestWordDiff(t *testing.T) {
	show := func(ss []seg) string {
		var b strings.Builder
		for _, s := range ss {
			if s.Changed {
				b.WriteString("[" + s.Text + "]")
			} else {
				b.WriteString(s.Text)
			}
		}
		return b.String()
	}
	for _, c := range []struct{ old, new, left, right string }{
		{"Hello world", "Hello brave world", "Hello world", "Hello [brave ]world"},
		{"a = 1", "a = 2", "a = [1]", "a = [2]"},
		{"same", "same", "same", "same"},
		{"", "added", "", "[added]"},
		{"café au lait", "café noir", "café [au lait]", "café [noir]"},
		{"<b>x</b>", "<i>x</i>", "<[b]>x</[b]>", "<[i]>x</[i]>"},
	} {
		l, r := wordDiff(c.old, c.new)
		if show(l) != c.left || show(r) != c.right {
			t.Errorf("wordDiff(%q, %q) = %q, %q; want %q, %q", c.old, c.new, show(l), show(r), c.left, c.right)
		}
	}
	if l, r := wordDiff(strings.Repeat("x ", maxWordLine), "y"); l != nil || r != nil {
		t.Errorf("a long line is diffed by words")
	}
}

// An output of many lines and more distinct words than the private use
// area holds is still diffed by words, up to maxOutputDiff.
func TestOutputDiff(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 60<<10; i++ {
		fmt.Fprintf(&b, "w%d\n", i)
	}
	old := b.String()
	l, r := diffWords(old, strings.Replace(old, "\nw9000\n", "\nchanged\n", 1), maxOutputDiff)
	var ch []string
	for _, s := range l {
		if s.Changed {
			ch = append(ch, s.Text)
		}
	}
	for _, s := range r {
		if s.Changed {
			ch = append(ch, s.Text)
		}
	}
	if strings.Join(ch, "|") != "w9000|changed" {
		t.Errorf("changed runs %q", ch)
	}
	if l, r := diffWords(old+old, old, maxOutputDiff); l != nil || r != nil {
		t.Errorf("an output over maxOutputDiff is diffed by words")
	}
}
