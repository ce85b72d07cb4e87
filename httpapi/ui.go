package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire/app"
)

// App is the use-case layer the API calls: the browser UI (web/) is built
// over the same one, so both doors share sessions, access rules and
// caches.
func (s *Server) App() *app.App { return s.app }

// MountUI serves the browser UI h under /ui/ on the API's engine (so it
// gets the same request ids, access log, metrics and panic recovery), and
// sends a browser opening / to it. Call it before serving.
func (s *Server) MountUI(h http.Handler) {
	s.engine.Any("/ui/*path", gin.WrapH(h))
	s.engine.GET("/", func(c *gin.Context) { c.Redirect(http.StatusSeeOther, "/ui/") })
}

// uiRoute reports whether a gin path is one MountUI registered.
func uiRoute(path string) bool { return path == "/" || path == "/ui/*path" }
