package web

import (
	"strings"

	"github.com/quire/quire"
)

// diffLine is one line of a unified diff as the page draws it.
type diffLine struct {
	Kind     string // ctx, add, del, hunk
	Old, New int    // line numbers; 0 when the side has none
	Text     string
	// Segs, on a changed line paired with the line it replaced, are its
	// runs with the changed words marked (words.go).
	Segs []seg
	// Notes are the review comments on this line (the review page).
	Notes []*quire.Comment
}

// splitRow is one row of the side-by-side view: a removed line facing the
// added line that replaced it, or context on both sides.
type splitRow struct {
	Hunk        string
	Left, Right *diffLine
}

type fileDiff struct {
	quire.FileDiff
	Lines []diffLine
	Rows  []splitRow
}

// parseDiff reads the unified patch app.Diff returns into lines with
// their numbers, and pairs them for the side-by-side view. Hand-written:
// it is a small reader of git's own output, not a diff algorithm.
func parseDiff(d quire.FileDiff) fileDiff {
	fd := fileDiff{FileDiff: d}
	var old, nw int
	for _, l := range strings.Split(strings.TrimSuffix(d.Patch, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "@@"):
			old, nw = hunkStart(l)
			fd.Lines = append(fd.Lines, diffLine{Kind: "hunk", Text: l})
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "diff "), strings.HasPrefix(l, "index "),
			strings.HasPrefix(l, "new file"), strings.HasPrefix(l, "deleted file"), strings.HasPrefix(l, "\\"):
		case strings.HasPrefix(l, "+"):
			fd.Lines = append(fd.Lines, diffLine{Kind: "add", New: nw, Text: l[1:]})
			nw++
		case strings.HasPrefix(l, "-"):
			fd.Lines = append(fd.Lines, diffLine{Kind: "del", Old: old, Text: l[1:]})
			old++
		case old > 0 || nw > 0:
			fd.Lines = append(fd.Lines, diffLine{Kind: "ctx", Old: old, New: nw, Text: strings.TrimPrefix(l, " ")})
			old++
			nw++
		}
	}
	fd.Rows = pairLines(fd.Lines)
	return fd
}

// hunkStart reads "@@ -a,b +c,d @@" into a and c.
func hunkStart(h string) (old, nw int) {
	f := strings.Fields(h)
	num := func(s string) int {
		s = strings.TrimLeft(s, "-+")
		s, _, _ = strings.Cut(s, ",")
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return n
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	if len(f) >= 3 {
		old, nw = num(f[1]), num(f[2])
	}
	return old, nw
}

func pairLines(lines []diffLine) []splitRow {
	var rows []splitRow
	for i := 0; i < len(lines); {
		l := &lines[i]
		switch l.Kind {
		case "hunk":
			rows = append(rows, splitRow{Hunk: l.Text})
			i++
		case "ctx":
			rows = append(rows, splitRow{Left: l, Right: l})
			i++
		default:
			var dels, adds []*diffLine
			for i < len(lines) && lines[i].Kind == "del" {
				dels = append(dels, &lines[i])
				i++
			}
			for i < len(lines) && lines[i].Kind == "add" {
				adds = append(adds, &lines[i])
				i++
			}
			for j := 0; j < max(len(dels), len(adds)); j++ {
				var row splitRow
				if j < len(dels) {
					row.Left = dels[j]
				}
				if j < len(adds) {
					row.Right = adds[j]
				}
				if row.Left != nil && row.Right != nil {
					row.Left.Segs, row.Right.Segs = wordDiff(row.Left.Text, row.Right.Text)
				}
				rows = append(rows, row)
			}
		}
	}
	return rows
}
