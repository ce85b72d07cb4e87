package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// mountUI serves the browser UI h under /ui/ on the API's engine (so it
// gets the same request ids, access log, metrics and panic recovery), and
// sends a browser opening / to it.
func (s *Server) mountUI(r *gin.Engine, h http.Handler) {
	r.Any("/ui/*path", gin.WrapH(h))
	r.GET("/", func(c *gin.Context) { c.Redirect(http.StatusSeeOther, "/ui/") })
}

// uiRoute reports whether a gin path is one MountUI registered.
func uiRoute(path string) bool { return path == "/" || path == "/ui/*path" }
