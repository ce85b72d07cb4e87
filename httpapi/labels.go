package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire/app"
)

// Labels (docs/reviews.md): thin doors into app/labels.go, mounted with
// the asset routes; documented in reviewAPIRoutes.
func (s *Server) labelRoutes(g *gin.RouterGroup) {
	pl := "/labels"
	g.GET(pl, s.listLabels)
	g.PUT(pl+"/:name", s.writes, s.setLabel)
	g.DELETE(pl+"/:name", s.writes, s.deleteLabel)
	g.GET(pl+"/:name/history", s.labelHistory)
}

// labelRequest moves a label; override and reason are an owner's way
// past a protected label's rule.
type labelRequest struct {
	Version  *int   `json:"version" openapi:"required"`
	Override bool   `json:"override"`
	Reason   string `json:"reason"`
}

// labelDeleteRequest is a label removal's optional body: an owner's way
// past a protected label's rule.
type labelDeleteRequest struct {
	Override bool   `json:"override"`
	Reason   string `json:"reason"`
}

func (s *Server) listLabels(c *gin.Context) {
	ls, err := handle(c).Labels(c.Request.Context())
	s.respond(c, http.StatusOK, "labels", ls, err)
}

func (s *Server) setLabel(c *gin.Context) {
	var req labelRequest
	if !s.bind(c, &req) {
		return
	}
	l, err := handle(c).SetLabel(c.Request.Context(), c.Param("name"), app.LabelEdit(req))
	s.respond(c, http.StatusOK, "label", l, err)
}

func (s *Server) deleteLabel(c *gin.Context) {
	var req labelDeleteRequest
	if !s.bindOptional(c, &req) {
		return
	}
	if err := handle(c).DeleteLabel(c.Request.Context(), c.Param("name"), app.LabelDelete(req)); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (s *Server) labelHistory(c *gin.Context) {
	moves, err := handle(c).LabelHistory(c.Request.Context(), c.Param("name"))
	s.respond(c, http.StatusOK, "history", moves, err)
}
