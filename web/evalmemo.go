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
// version, with the fields of its comment form. What depends on the
// viewer or on the review (comments, the form's address and its CSRF
// token) is drawn on every request, the form's start once for all the
// cases.
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

var evalTables, _ = lru.New[string, []caseHTML](evalTablesSize)

// caseHTML is what is kept of a case: its section's start, heading and
// tables ("eval-case"), and its comment form's fields
// ("eval-case-fields").
type caseHTML struct{ table, fields template.HTML }

// evalCaseData is what the "eval-case" template draws: a case, the
// version it ran against and the head's version.
type evalCaseData struct {
	evalCaseView
	AgainstVersion, Version int
}

// evalCaseViews is the cases of ev, evaluated on head version version,
// each drawn by page's "eval-case" and "eval-case-fields" templates (or
// kept from a read of the same commit).
func evalCaseViews(page *template.Template, ev *app.ReviewEvaluation, version int) ([]evalCaseView, error) {
	key := ""
	if ev.Tip != "" {
		key = ev.Tip + "@" + strconv.Itoa(version)
		if kept, ok := evalTables.Get(key); ok && len(kept) == len(ev.Cases) {
			out := make([]evalCaseView, len(ev.Cases))
			for i, c := range ev.Cases {
				out[i] = evalCaseView{EvalCase: c, Table: kept[i].table, Fields: kept[i].fields}
			}
			firstRuns(out)
			return out, nil
		}
	}
	out := evalCases(ev.Cases)
	firstRuns(out)
	kept := make([]caseHTML, len(out))
	size := 0
	var b bytes.Buffer
	draw := func(name string, data any) (template.HTML, error) {
		b.Reset()
		if err := page.ExecuteTemplate(&b, name, data); err != nil {
			return "", err
		}
		size += b.Len()
		return template.HTML(b.String()), nil
	}
	for i := range out {
		var err error
		if out[i].Table, err = draw("eval-case", evalCaseData{out[i], ev.AgainstVersion, version}); err != nil {
			return nil, err
		}
		if out[i].Fields, err = draw("eval-case-fields", out[i]); err != nil {
			return nil, err
		}
		kept[i] = caseHTML{out[i].Table, out[i].Fields}
	}
	if key != "" && size <= evalTablesMax {
		evalTables.Add(key, kept)
	}
	return out, nil
}

// firstRuns marks each payload's first run among cases.
func firstRuns(cases []evalCaseView) {
	seen := map[string]bool{}
	for i := range cases {
		c := &cases[i]
		c.First = !seen[c.PayloadID]
		seen[c.PayloadID] = true
	}
}

// caseFormData is what the "case-form" template draws.
type caseFormData struct {
	Base string
	Num  int
	CSRF string
}

// caseForm is the start of every case's comment form on review num of
// the asset at base, with the session's token: drawn once per request.
func caseForm(page *template.Template, base string, num int, csrf string) (template.HTML, error) {
	var b bytes.Buffer
	if err := page.ExecuteTemplate(&b, "case-form", caseFormData{base, num, csrf}); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}
