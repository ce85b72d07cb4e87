package web

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// seg is a run of a changed line: Changed marks the words that differ
// from the line it replaced (or was replaced by).
type seg struct {
	Text    string
	Changed bool
}

// maxWordLine bounds the lines worth a word diff; longer ones are
// marked whole.
const maxWordLine = 2000

// wordDiff splits a removed line and the added line that replaced it into
// runs, marking the words that changed on each side.
func wordDiff(old, nw string) (left, right []seg) {
	return diffWords(old, nw, maxWordLine)
}

// diffWords is wordDiff of two texts of at most limit bytes each (nil
// beyond: marked, or shown, whole). The diff itself is
// diffmatchpatch's (the library go-git uses), over words rather than
// characters: each distinct word becomes one rune, the runes are diffed,
// and the runs mapped back; a word diff reads better than a character
// diff and costs less.
func diffWords(old, nw string, limit int) (left, right []seg) {
	if len(old) > limit || len(nw) > limit {
		return nil, nil
	}
	ids := map[string]rune{}
	var words []string
	encode := func(s string) []rune {
		var out []rune
		for _, w := range tokens(s) {
			id, ok := ids[w]
			if !ok {
				// Runes from the private use area on, one per word. A line
				// of maxWordLine bytes has fewer words than the area holds;
				// past it (a long output) the runes are still valid, as
				// no surrogate lies above the area, and the diff only
				// compares them.
				id = rune(0xE000 + len(words))
				ids[w] = id
				words = append(words, w)
			}
			out = append(out, id)
		}
		return out
	}
	a, b := encode(old), encode(nw)
	dmp := diffmatchpatch.New()
	diffs := dmp.DiffMainRunes(a, b, false)
	diffs = dmp.DiffCleanupSemantic(diffs)
	add := func(to []seg, rs string, changed bool) []seg {
		var b strings.Builder
		for _, r := range rs {
			b.WriteString(words[r-0xE000])
		}
		text := b.String()
		if n := len(to); n > 0 && to[n-1].Changed == changed {
			to[n-1].Text += text
			return to
		}
		return append(to, seg{Text: text, Changed: changed})
	}
	for _, d := range diffs {
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			left, right = add(left, d.Text, false), add(right, d.Text, false)
		case diffmatchpatch.DiffDelete:
			left = add(left, d.Text, true)
		case diffmatchpatch.DiffInsert:
			right = add(right, d.Text, true)
		}
	}
	return left, right
}

// tokens splits s into words (letters, digits, underscores), runs of
// spaces, and single other characters.
func tokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		j := i + n
		class := func(r rune) int {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
				return 1
			case unicode.IsSpace(r):
				return 2
			}
			return 0
		}
		if c := class(r); c != 0 {
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if class(r2) != c {
					break
				}
				j += n2
			}
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}
