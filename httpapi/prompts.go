package httpapi

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
)

// promptRoutes serves prompts. (Filled in by the prompts work.)
func (s *Server) promptRoutes(g *gin.RouterGroup) {
	s.assetRoutes(g, quire.KindPrompt)
}

func (s *Server) promptVersionView(ctx context.Context, a *quire.Asset, v *quire.Version) (any, error) {
	return struct {
		PromptID string `json:"prompt_id"`
		*quire.Version
	}{a.ID, v}, nil
}

func (s *Server) promptPublishCheck(a *quire.Asset) func(quire.ReadFunc) error {
	return nil
}
