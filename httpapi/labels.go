package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// Labels (docs/reviews.md): thin doors into app/labels.go, mounted with
// the asset routes; documented in reviewAPIRoutes.
func (s *Server) labelRoutes(g *gin.RouterGroup, kind quire.Kind) {
	pl := "/labels"
	g.GET(pl, s.listLabels(kind))
	g.PUT(pl+"/:name", s.setLabel(kind))
	g.DELETE(pl+"/:name", s.deleteLabel(kind))
	g.GET(pl+"/:name/history", s.labelHistory(kind))
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

func (s *Server) listLabels(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		ls, err := s.app.Labels(c.Request.Context(), principal(c), kind, c.Param("id"))
		s.respond(c, http.StatusOK, "labels", ls, err)
	}
}

func (s *Server) setLabel(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		l, err := s.app.SetLabel(c.Request.Context(), principal(c), kind, c.Param("id"), c.Param("name"), func() (app.LabelEdit, error) {
			var req labelRequest
			err := s.decode(c, &req)
			return app.LabelEdit(req), err
		})
		s.respond(c, http.StatusOK, "label", l, err)
	}
}

func (s *Server) deleteLabel(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		err := s.app.DeleteLabel(c.Request.Context(), principal(c), kind, c.Param("id"), c.Param("name"), func() (app.LabelDelete, error) {
			var req labelDeleteRequest
			err := s.decodeOptional(c, &req)
			return app.LabelDelete(req), err
		})
		if err != nil {
			s.fail(c, err)
			return
		}
		c.Status(http.StatusNoContent)
	}
}

func (s *Server) labelHistory(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		h, err := s.app.LabelHistory(c.Request.Context(), principal(c), kind, c.Param("id"), c.Param("name"))
		s.respond(c, http.StatusOK, "history", h, err)
	}
}
