package web

import (
	"net/http"
	"strings"
)

// Comments on an evaluation's cases: a review comment anchored with
// {case: payload id} is shown under that payload's case on the review
// page, beside a form that makes one. A payload evaluated more than once
// (repeat) has its comments and its form under its first run.

// caseNotes is what the review page shows of the case-anchored comments:
// for each payload's first run (First), the threads on the payload, and
// the payload names the conversation says a comment is on. A comment on
// a payload the evaluation does not hold stays in the conversation
// alone.
func caseNotes(cases []evalCaseView, threads []thread) map[string]string {
	names := map[string]string{}
	first := map[string]int{}
	for i := range cases {
		if c := &cases[i]; c.First {
			first[c.PayloadID] = i
			names[c.PayloadID] = c.PayloadName
		}
	}
	for _, t := range threads {
		if t.Case == "" {
			continue
		}
		if i, ok := first[t.Case]; ok {
			cases[i].Notes = append(cases[i].Notes, t)
		}
	}
	return names
}

// caseFragment is where a comment form's redirect lands: the case the
// comment is on ("#case-<payload id>"), or the top of the page.
func caseFragment(r *http.Request) string {
	id := strings.TrimSpace(r.PostFormValue("case"))
	if id == "" || len(id) > 64 || strings.TrimLeft(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "" {
		return ""
	}
	return "#case-" + id
}
