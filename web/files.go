package web

import (
	"bytes"
	"encoding/json"
	"html/template"
	"mime"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/quire/quire"
)

// fileView is one file as the version page shows it.
type fileView struct {
	quire.File
	Text     bool
	Markdown template.HTML // rendered and sanitized; empty unless .md
	// FrontMatter is a Markdown file's leading YAML block (a skill's
	// name and description), highlighted apart from the prose.
	FrontMatter template.HTML
	Code        template.HTML // highlighted source (chroma, classes only)
	Source      string        // plain text when highlighting is not possible
}

// maxShown is the largest file drawn inline; bigger ones are a raw link.
const maxShown = 512 << 10

var (
	// markdown renders GitHub-flavoured Markdown; raw HTML in it is
	// dropped by goldmark's default (no WithUnsafe), and what it renders
	// is sanitized again by policy, so no file can put active HTML on a
	// page.
	markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))
	policy   = bluemonday.UGCPolicy()
	// highlighter writes classes, never style attributes, which the CSP
	// (no 'unsafe-inline' styles) would block; highlightCSS holds them.
	highlighter  = chromahtml.New(chromahtml.WithClasses(true), chromahtml.TabWidth(4))
	highlightCSS = func() []byte {
		var b bytes.Buffer
		highlighter.WriteCSS(&b, styles.Get("github"))
		return b.Bytes()
	}()
)

func showFile(f quire.File, content []byte) *fileView {
	v := &fileView{File: f, Text: isText(content)}
	if !v.Text || len(content) > maxShown {
		v.Text = false
		return v
	}
	if strings.EqualFold(path.Ext(f.Path), ".md") {
		body := content
		if rest, ok := bytes.CutPrefix(bytes.ReplaceAll(content, []byte("\r\n"), []byte("\n")), []byte("---\n")); ok {
			if fm, after, ok := bytes.Cut(rest, []byte("\n---\n")); ok {
				if h, ok := highlight("front.yaml", string(fm)+"\n"); ok {
					v.FrontMatter, body = h, after
				}
			}
		}
		var b bytes.Buffer
		if err := markdown.Convert(body, &b); err == nil {
			v.Markdown = template.HTML(policy.SanitizeBytes(b.Bytes()))
			return v
		}
	}
	v.Source = string(content)
	if h, ok := highlight(f.Path, v.Source); ok {
		v.Code = h
	}
	return v
}

// highlight colours source by the lexer its file name picks. chroma's
// HTML formatter escapes every token it writes.
func highlight(name, src string) (template.HTML, bool) {
	lx := lexers.Match(path.Base(name))
	if lx == nil {
		return "", false
	}
	it, err := chroma.Coalesce(lx).Tokenise(nil, src)
	if err != nil {
		return "", false
	}
	var b bytes.Buffer
	if err := highlighter.Format(&b, styles.Get("github"), it); err != nil {
		return "", false
	}
	return template.HTML(b.String()), true
}

func (u *UI) highlightCSS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Write(highlightCSS)
}

func isText(b []byte) bool {
	return utf8.Valid(b) && !bytes.ContainsRune(b, 0)
}

func baseName(p string) string { return path.Base(p) }

func attachment(name string) string {
	return mime.FormatMediaType("attachment", map[string]string{"filename": name})
}

// origin is the scheme and host the browser used, for the clone URL.
func origin(r *http.Request, secure bool) string {
	scheme := "http"
	if secure {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func indentJSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}
