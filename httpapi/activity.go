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
	pr, err := s.project(c, quire.AccessRead)
	if err != nil {
		s.fail(c, err)
		return
	}
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if s.activity == nil {
		s.fail(c, quire.Errorf(quire.EUNAVAILABLE, "activity is not kept by this server"))
		return
	}
	ctx := c.Request.Context()
	var assets []*quire.Asset
	for _, kind := range []quire.Kind{quire.KindSkill, quire.KindPrompt} {
		as, err := s.meta.Assets(ctx, kind, pr.ID)
		if err != nil {
			s.fail(c, err)
			return
		}
		assets = append(assets, as...)
	}
	feed, next, err := s.activity.Activity(ctx, pr, assets, opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"activity": feed, "next_cursor": next})
}
