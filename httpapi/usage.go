package httpapi

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
)

// usageRoutes are a prompt's usage, relative to the prompt.
func (s *Server) usageRoutes(t *gin.RouterGroup) {
	t.GET("/usage", s.promptUsage)
}

// RecordRender counts one render of a prompt version, as a render does
// once it succeeds (app.Render):
//
//	s.RecordRender(c.Request.Context(), prompt.ID, version.Number)
//
// A failure to count is logged (usageLost), never returned: usage must not
// fail a render.
func (s *Server) RecordRender(ctx context.Context, promptID string, version int) {
	s.app.RecordRender(ctx, promptID, version)
}

// withLastUsed fills in the keys' last_used_at from the usage records
// (app.FillLastUsed); without them a listing is still answered.
func (s *Server) withLastUsed(ctx context.Context, keys ...*quire.APIKey) {
	if err := s.app.FillLastUsed(ctx, keys...); err != nil {
		s.log.WarnContext(ctx, "API key last use unknown", "error", err.Error())
	}
}

// promptUsage answers the render counts and last use of a prompt's versions.
func (s *Server) promptUsage(c *gin.Context) {
	u, err := handle(c).PromptUsage(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"usage": u})
}
