package httpapi

import (
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"
)

// Raw responses (a file's bytes, a zip download, a patch) carry what users
// wrote. A browser opening one on quire's origin must never run it: the
// bytes would act with the viewer's session. So every raw response is
// sandboxed (no script, no same-origin access, nothing loaded), browsers
// may not sniff it into another type, and only types a browser displays
// passively are named: HTML, SVG, XML, JavaScript and everything else
// active are served as text/plain or application/octet-stream.

// rawHeaders sets the headers every raw response carries.
func rawHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
}

// passiveByExt are the file types served under their own type: browsers
// show them without running anything.
var passiveByExt = map[string]string{
	".md":       "text/markdown; charset=utf-8",
	".markdown": "text/markdown; charset=utf-8",
	".txt":      "text/plain; charset=utf-8",
	".csv":      "text/csv; charset=utf-8",
	".json":     "application/json",
	".png":      "image/png",
	".jpg":      "image/jpeg",
	".jpeg":     "image/jpeg",
	".gif":      "image/gif",
	".webp":     "image/webp",
}

// passiveSniffed are the types of http.DetectContentType kept as they are.
var passiveSniffed = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/bmp": true}

// rawContentType is the Content-Type of the file at p holding b: its own
// type when passive, else text/plain for text (HTML and XML included) and
// application/octet-stream for anything else.
func rawContentType(p string, b []byte) string {
	if ct, ok := passiveByExt[strings.ToLower(path.Ext(p))]; ok {
		return ct
	}
	ct := http.DetectContentType(b)
	mt, _, _ := strings.Cut(ct, ";")
	switch {
	case mt == "text/plain":
		return ct // with the charset sniffed (UTF-8 or a UTF-16 BOM)
	case strings.HasPrefix(mt, "text/"):
		return "text/plain; charset=utf-8"
	case passiveSniffed[mt]:
		return mt
	}
	return "application/octet-stream"
}
