package web

import (
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// Reviews: open one on a draft, read it (files, diff, comments in
// threads, verdicts, whether the draft can be published), comment (on the
// review or on a line), reply, resolve, approve or request changes, close
// and reopen -- each through the matching app use case.

func (u *UI) reviewRoutes() {
	m := u.mux
	rv := Prefix + "p/{project}/{kind}/{asset}/reviews/{num}"
	m.HandleFunc("POST "+Prefix+"p/{project}/{kind}/{asset}/v/{n}/reviews", u.authed(u.openReview))
	m.HandleFunc("GET "+rv, u.authed(u.reviewPage))
	m.HandleFunc("POST "+rv+"/comments", u.authed(u.reviewAction))
	m.HandleFunc("POST "+rv+"/comments/{id}/resolve", u.authed(u.reviewAction))
	m.HandleFunc("POST "+rv+"/verdict", u.authed(u.reviewAction))
	m.HandleFunc("POST "+rv+"/close", u.authed(u.reviewAction))
	m.HandleFunc("POST "+rv+"/reopen", u.authed(u.reviewAction))
}

func (u *UI) openReview(w http.ResponseWriter, r *http.Request, s *session) {
	ref, n, err := u.resolveVersion(r, s, r.PathValue("kind"))
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	title, desc := strings.TrimSpace(r.PostFormValue("title")), r.PostFormValue("description")
	rv, err := ref.h.OpenReview(r.Context(), n, app.ReviewEdit{Title: &title, Description: &desc})
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, ref.Base()+"/reviews/"+strconv.Itoa(rv.Review.Number), http.StatusSeeOther)
}

// thread is a top-level comment and its replies.
type thread struct {
	*quire.Comment
	Replies []*quire.Comment
}

type reviewView struct {
	assetRef
	*app.ReviewView
	Threads []thread
	Diff    []fileDiff
	Eval    []evalCaseView // the cases of .Evaluation
	// CaseNames names the payloads of .Eval, for the conversation to say
	// which case a comment is on.
	CaseNames map[string]string
	// CaseForm starts each case's comment form (evalmemo.go).
	CaseForm template.HTML
	CSRF     string
	Me       string // the viewer's user id: "your own approval"
	Owner    bool   // may publish past the policy
}

// resolveReview is resolve for a review's page: the asset and the
// review number {num} of the path.
func (u *UI) resolveReview(r *http.Request, s *session) (assetRef, int, error) {
	ref, err := u.resolve(r, s, r.PathValue("kind"))
	if err != nil {
		return assetRef{}, 0, err
	}
	n, err := reviewNumber(r)
	return ref, n, err
}

func reviewNumber(r *http.Request) (int, error) {
	n, err := strconv.Atoi(r.PathValue("num"))
	if err != nil || n < 1 {
		return 0, quire.Errorf(quire.ENOTFOUND, "no such review")
	}
	return n, nil
}

func (u *UI) reviewPage(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	ref, num, err := u.resolveReview(r, s)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	rv, err := ref.h.Review(ctx, num)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	v := reviewView{assetRef: ref, ReviewView: rv, CSRF: s.csrf, Me: s.p.User.ID, Owner: s.p.ProjectAccess(ref.Project) >= quire.AccessAdmin}
	byID := map[string]int{}
	for _, c := range rv.Comments {
		if c.InReplyTo != "" {
			if i, ok := byID[c.InReplyTo]; ok {
				v.Threads[i].Replies = append(v.Threads[i].Replies, c)
				continue
			}
		}
		byID[c.ID] = len(v.Threads)
		v.Threads = append(v.Threads, thread{Comment: c})
	}
	if base := rv.Review.Base.Version; base > 0 {
		diffs, err := ref.h.Diff(ctx, base, rv.Review.Version)
		if err == nil {
			for _, d := range diffs {
				v.Diff = append(v.Diff, parseDiff(d))
			}
			attachNotes(v.Diff, v.Threads)
		}
	}
	if ev := rv.Evaluation; ev != nil {
		if v.Eval, err = evalCaseViews(u.pages["review"], ev, rv.Review.Version); err != nil {
			u.fail(w, r, s, err)
			return
		}
		v.CaseNames = caseNotes(v.Eval, v.Threads)
		if rv.Review.State == quire.ReviewOpen && len(v.Eval) > 0 {
			if v.CaseForm, err = caseForm(u.pages["review"], ref.Base(), num, s.csrf); err != nil {
				u.fail(w, r, s, err)
				return
			}
		}
	}
	u.render(w, r, s, http.StatusOK, "review", "Review #"+strconv.Itoa(num)+" of "+ref.Asset.Name, v)
}

// reviewAction runs the POST its path names, then shows the review again.
func (u *UI) reviewAction(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	ref, num, err := u.resolveReview(r, s)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	h := ref.h
	if err := h.Need(quire.AccessWrite); err != nil {
		u.fail(w, r, s, err) // before the form is read
		return
	}
	switch path := r.URL.Path; {
	case strings.HasSuffix(path, "/resolve"):
		resolved := r.PostFormValue("resolved") != "false"
		_, err = h.UpdateComment(ctx, num, r.PathValue("id"), app.CommentPatch{Resolved: &resolved})
	case strings.HasSuffix(path, "/comments"):
		body := strings.ReplaceAll(r.PostFormValue("body"), "\r\n", "\n")
		e := app.CommentEdit{Body: &body, Path: strings.TrimSpace(r.PostFormValue("path")), Side: r.PostFormValue("side"), InReplyTo: r.PostFormValue("in_reply_to"), Case: strings.TrimSpace(r.PostFormValue("case"))}
		if l := strings.TrimSpace(r.PostFormValue("line")); l != "" {
			if e.Line, err = strconv.Atoi(l); err != nil {
				err = quire.Errorf(quire.EINVALID, "line must be a number")
				break
			}
		}
		_, err = h.Comment(ctx, num, e)
	case strings.HasSuffix(path, "/verdict"):
		verdict := r.PostFormValue("verdict")
		if verdict != quire.VerdictApprove && verdict != quire.VerdictRequestChanges {
			err = quire.Errorf(quire.EINVALID, "verdict must be approve or request_changes")
			break
		}
		// The head the page showed: a push since then makes the verdict
		// 409 head_moved, never a verdict on unseen changes.
		body := strings.ReplaceAll(r.PostFormValue("body"), "\r\n", "\n")
		head := r.PostFormValue("commit")
		if head == "" {
			err = quire.Errorf(quire.EINVALID, "the form lacks the head it showed: reload the page")
			break
		}
		_, err = h.Verdict(ctx, num, verdict, app.VerdictEdit{Body: &body, Commit: head})
	case strings.HasSuffix(path, "/close"):
		_, err = h.CloseReview(ctx, num)
	case strings.HasSuffix(path, "/reopen"):
		_, err = h.ReopenReview(ctx, num)
	}
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, ref.Base()+"/reviews/"+strconv.Itoa(num)+caseFragment(r), http.StatusSeeOther)
}

// attachNotes shows each line comment under the line it is on: a head
// comment on the new line of that number, a base comment on the removed
// (or unchanged) old line.
func attachNotes(diff []fileDiff, threads []thread) {
	type at struct {
		path, side string
		line       int
	}
	lines := map[at]*diffLine{}
	for i := range diff {
		for j := range diff[i].Lines {
			l := &diff[i].Lines[j]
			if l.New > 0 {
				lines[at{diff[i].Path, "head", l.New}] = l
			}
			if l.Old > 0 && (l.Kind == "del" || lines[at{diff[i].Path, "base", l.Old}] == nil) {
				lines[at{diff[i].Path, "base", l.Old}] = l
			}
		}
	}
	for _, t := range threads {
		side := t.Side
		if side == "" {
			side = "head"
		}
		if l := lines[at{t.Path, side, t.Line}]; l != nil && t.Line > 0 {
			l.Notes = append(l.Notes, t.Comment)
		}
	}
}

// evalCaseView is a case of a review's evaluation as its page shows it:
// the base's output and the head's as a word diff, and each side's
// assertion results.
type evalCaseView struct {
	*quire.EvalCase
	Base, Head sideView
	// First marks the first run of its payload, which shows the
	// comments on the payload's case (Notes) and the form to add one.
	First bool
	Notes []thread
	// Table is the start of the case's section, its heading, outputs
	// and assertions; Fields its comment form's fields (evalmemo.go).
	Table, Fields template.HTML
}

// sideView is one side of a case: its output, split into runs when it
// has a word diff (Segs nil: shown whole, as the "line" template does),
// its error and its assertions' results.
type sideView struct {
	Text       string
	Segs       []seg
	Error      string
	Assertions []assertionView
}

// assertionView is an assertion's result; Newly marks a head's failure
// where the base passed.
type assertionView struct {
	quire.AssertionResult
	Newly bool
}

// maxOutputDiff bounds the outputs worth a word diff; longer ones are
// shown whole.
const maxOutputDiff = 64 << 10

func evalCases(cases []*quire.EvalCase) []evalCaseView {
	side := func(s *quire.EvalSide) sideView {
		if s == nil {
			return sideView{}
		}
		v := sideView{Text: s.Output, Error: s.Error}
		for _, r := range s.Assertions {
			v.Assertions = append(v.Assertions, assertionView{AssertionResult: r})
		}
		return v
	}
	out := make([]evalCaseView, 0, len(cases))
	for _, c := range cases {
		v := evalCaseView{EvalCase: c, Base: side(c.Against), Head: side(c.Head)}
		if c.Against != nil && c.Head != nil {
			if v.Base.Text != v.Head.Text {
				v.Base.Segs, v.Head.Segs = diffWords(v.Base.Text, v.Head.Text, maxOutputDiff)
			}
			for i := range v.Head.Assertions {
				a := &v.Head.Assertions[i]
				a.Newly = !a.Passed && i < len(c.Against.Assertions) && c.Against.Assertions[i].Passed
			}
		}
		out = append(out, v)
	}
	return out
}
