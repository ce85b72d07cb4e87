package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
)

func (s *Server) activityRoutes(g *gin.RouterGroup) {
	g.GET("/projects/:projectID/activity", s.projectActivity)
}

// projectActivity answers the changes to a project and its skills and
// prompts, newest first, a page at a time.
func (s *Server) projectActivity(c *gin.Context) {
	h, ok := s.openProject(c, quire.AccessRead)
	if !ok {
		return
	}
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	feed, next, err := h.Activity(c.Request.Context(), opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"activity": feed, "next_cursor": next})
}
