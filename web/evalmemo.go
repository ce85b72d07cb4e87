package web

import (
	"bytes"
	"html/template"
	"strconv"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/quire/quire/app"
)

// The cases of a review's evaluation are most of its page's cost: a
// word diff of each case's two outputs and the template's walk over
// their runs (50 cases of 120 words: tens of milliseconds). An
// evaluation read at one commit of its ref (app.ReviewEvaluation's Tip)
// always holds the same cases, so each case's output tables, drawn once
// by the "eval-case" template, are kept by that commit and the head's
// version. What depends on the viewer or on the review (comments, the
// forms and their CSRF token) is drawn on every request.
//
// The memo is the process's, not a UI's: its key names the content
// whole (a commit is its content), and every UI draws it with the same
// templates.
const (
	evalTablesSize = 16
	// evalTablesMax bounds the HTML kept for one evaluation; a larger
	// one is drawn on every request.
	evalTablesMax = 2 << 20
)

var evalTables, _ = lru.New[string, []template.HTML](evalTablesSize)

// evalCaseData is what the "eval-case" template draws: a case, the
// version it ran against and the head's version.
type evalCaseData struct {
	evalCaseView
	AgainstVersion, Version int
}

// evalCaseViews is the cases of ev, evaluated on head version version,
// with each one's tables drawn by page's "eval-case" template (or kept
// from a read of the same commit).
func evalCaseViews(page *template.Template, ev *app.ReviewEvaluation, version int) ([]evalCaseView, error) {
	key := ""
	if ev.Tip != "" {
		key = ev.Tip + "@" + strconv.Itoa(version)
		if tables, ok := evalTables.Get(key); ok && len(tables) == len(ev.Cases) {
			out := make([]evalCaseView, len(ev.Cases))
			for i, c := range ev.Cases {
				out[i] = evalCaseView{EvalCase: c, Table: tables[i]}
			}
			return out, nil
		}
	}
	out := evalCases(ev.Cases)
	tables := make([]template.HTML, len(out))
	size := 0
	var b bytes.Buffer
	for i := range out {
		b.Reset()
		if err := page.ExecuteTemplate(&b, "eval-case", evalCaseData{out[i], ev.AgainstVersion, version}); err != nil {
			return nil, err
		}
		tables[i] = template.HTML(b.String())
		out[i].Table = tables[i]
		size += b.Len()
	}
	if key != "" && size <= evalTablesMax {
		evalTables.Add(key, tables)
	}
	return out, nil
}
