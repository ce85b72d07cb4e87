package web

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// A case's tables are kept by the commit the evaluation was read at:
// the same tip draws what was drawn, another tip (a batch stored since)
// draws its own cases, and an evaluation read without a tip is drawn
// every time. Outputs are text in the tables, kept or not, and each
// case has the fields of its comment form.
func TestEvalCaseTablesMemo(t *testing.T) {
	u := &UI{}
	if err := u.parseTemplates(); err != nil {
		t.Fatal(err)
	}
	page := u.pages["review"]
	side := func(out string) *quire.EvalSide {
		return &quire.EvalSide{Output: out, Assertions: []quire.AssertionResult{{Type: "contains", Passed: true, Detail: "ok"}}}
	}
	mk := func(tip string, heads ...string) *app.ReviewEvaluation {
		ev := &app.ReviewEvaluation{ID: "e", AgainstVersion: 1, Tip: tip}
		for i, h := range heads {
			ev.Cases = append(ev.Cases, &quire.EvalCase{PayloadID: string(rune('a' + i)), PayloadName: "p<" + h, Repeat: 1, Head: side(h), Against: side("base <b>" + h), Changed: true})
		}
		return ev
	}
	tables := func(ev *app.ReviewEvaluation) string {
		t.Helper()
		views, err := evalCaseViews(page, ev, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(views) != len(ev.Cases) {
			t.Fatalf("%d views of %d cases", len(views), len(ev.Cases))
		}
		var b strings.Builder
		for i, v := range views {
			if v.EvalCase != ev.Cases[i] {
				t.Errorf("view %d is not of its case", i)
			}
			if !v.First || !strings.Contains(string(v.Fields), `<input type="hidden" name="case" value="`+v.PayloadID+`">`) {
				t.Errorf("view %d: first %v, fields %s", i, v.First, v.Fields)
			}
			b.WriteString(string(v.Table))
		}
		return b.String()
	}
	tip := uuid.NewString() // the memo is the process's: a tip of this test's own
	first := tables(mk(tip, "one"))
	for _, want := range []string{`<section class="diff eval-case" id="case-a" aria-labelledby="case-h-a-1">`, `<th scope="col">Base (v1)</th><th scope="col">Head (v2)</th>`, `p&lt;one`, `<mark>base &lt;b&gt;</mark>one`, `<li class="pass"><strong>passed</strong> <code>contains</code>: ok</li>`} {
		if !strings.Contains(first, want) {
			t.Errorf("tables lack %q:\n%s", want, first)
		}
	}
	// The same tip: what was drawn (a tip never holds other cases).
	if again := tables(mk(tip, "one")); again != first {
		t.Errorf("the same tip drawn again differs:\n%s\n%s", again, first)
	}
	// A new tip: its own cases.
	if next := tables(mk(uuid.NewString(), "one", "two")); !strings.Contains(next, "p&lt;two") {
		t.Errorf("a new tip shows the old cases:\n%s", next)
	}
	// No tip: drawn every time.
	if a, b := tables(mk("", "x")), tables(mk("", "y")); !strings.Contains(a, "p&lt;x") || !strings.Contains(b, "p&lt;y") {
		t.Errorf("without a tip: %s / %s", a, b)
	}
}
