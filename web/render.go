package web

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/httpstatus"
)

// layout is the frame every page is drawn in.
type layout struct {
	Title string
	User  *quire.User
	CSRF  string
	Page  any
}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"whenp": func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"short": func(s string) string {
		if len(s) > 10 {
			return s[:10]
		}
		return s
	},
	"pathEsc": escapePath,
	"bytes":   humanBytes,
}

// escapePath escapes each segment of a file path for a URL, keeping the
// slashes between them.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return strconv.FormatInt(n, 10) + " B"
}

// parseTemplates parses each page with the layout, once, at start.
func (u *UI) parseTemplates() error {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return err
	}
	u.pages = map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return fmt.Errorf("web: template %s: %w", name, err)
		}
		u.pages[name] = t
	}
	return nil
}

// render draws page into a buffer first, so a template error is a clean
// 500 rather than half a page.
func (u *UI) render(w http.ResponseWriter, r *http.Request, s *session, status int, page, title string, v any) {
	l := layout{Title: title, Page: v}
	if s != nil {
		l.User, l.CSRF = s.p.User, s.csrf
	}
	var buf bytes.Buffer
	if err := u.pages[page].Execute(&buf, l); err != nil {
		u.log.Error("web: render", "page", page, "error", err.Error())
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

type errorView struct {
	Status  int
	Message string
}

func (u *UI) renderError(w http.ResponseWriter, r *http.Request, s *session, status int, msg string) {
	u.render(w, r, s, status, "error", http.StatusText(status), errorView{Status: status, Message: msg})
}

// fail renders a use case's error as a page, with the status the API
// gives the same error code.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	status, msg := statusOf(err)
	if secs, ok := quire.ErrorDetails(err)["retry_after"].(int); ok {
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	if status >= 500 {
		u.log.Error("web: request failed", "path", r.URL.Path, "error", err.Error())
	}
	u.renderError(w, r, s, status, msg)
}

// statusOf maps err to a status and a message fit to show: the error's
// own message for a client error, a generic one for a server error.
func statusOf(err error) (int, string) {
	status := httpstatus.Of(quire.ErrorCode(err))
	if status == http.StatusInternalServerError {
		return status, "Something went wrong on the server."
	}
	if status >= 500 {
		return status, "The server cannot answer right now; try again shortly."
	}
	return status, quire.ErrorMessage(err)
}
