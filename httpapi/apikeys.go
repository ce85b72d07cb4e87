package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// keyView is an API key as clients see it (no secret hash).
type keyView struct {
	ID         string      `json:"id"`
	UserID     string      `json:"user_id"`
	Name       string      `json:"name"`
	Scope      quire.Scope `json:"scope"`
	ProjectIDs []string    `json:"project_ids"`
	Prefix     string      `json:"prefix"`
	CreatedAt  time.Time   `json:"created_at"`
	UpdatedAt  time.Time   `json:"updated_at"`
	LastUsedAt *time.Time  `json:"last_used_at"`
	ExpiresAt  *time.Time  `json:"expires_at"`
}

func viewKey(k *quire.APIKey) keyView {
	ids := k.ProjectIDs
	if ids == nil {
		ids = []string{}
	}
	return keyView{ID: k.ID, UserID: k.UserID, Name: k.Name, Scope: k.Scope, ProjectIDs: ids, Prefix: k.Prefix,
		CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt, LastUsedAt: k.LastUsedAt, ExpiresAt: k.ExpiresAt}
}

func (s *Server) keyRoutes(g *gin.RouterGroup) {
	g.POST("/api-keys", s.idempotent, s.createKey)
	g.GET("/api-keys", s.listKeys)
	g.GET("/api-keys/:keyID", s.getKey)
	g.DELETE("/api-keys/:keyID", s.deleteKey)
	g.POST("/api-keys/:keyID/rotate", s.rotateKey)
}

type keyRequest struct {
	Name       string      `json:"name" openapi:"required"`
	Scope      quire.Scope `json:"scope"`
	ProjectIDs []string    `json:"project_ids"`
	ExpiresAt  *time.Time  `json:"expires_at"`
}

func (s *Server) createKey(c *gin.Context) {
	if err := principal(c).CheckAccount(); err != nil {
		s.fail(c, err) // before the body is read
		return
	}
	var req keyRequest
	if !s.bind(c, &req) {
		return
	}
	nk, err := s.app.CreateAPIKey(c.Request.Context(), principal(c), app.KeyEdit(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Location", "/v1/api-keys/"+nk.Key.ID)
	c.JSON(http.StatusCreated, gin.H{"api_key": viewKey(nk.Key), "token": nk.Token})
}

func (s *Server) listKeys(c *gin.Context) {
	all, err := s.app.APIKeys(c.Request.Context(), principal(c), c.Query("all") == "true")
	if err != nil {
		s.fail(c, err)
		return
	}
	s.withLastUsed(c.Request.Context(), all...)
	out := make([]keyView, len(all))
	for i, k := range all {
		out[i] = viewKey(k)
	}
	c.JSON(http.StatusOK, gin.H{"api_keys": out})
}

func (s *Server) getKey(c *gin.Context) {
	k, err := s.app.APIKey(c.Request.Context(), principal(c), c.Param("keyID"))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.withLastUsed(c.Request.Context(), k)
	c.JSON(http.StatusOK, gin.H{"api_key": viewKey(k)})
}

func (s *Server) deleteKey(c *gin.Context) {
	if err := s.app.DeleteAPIKey(c.Request.Context(), principal(c), c.Param("keyID")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (s *Server) rotateKey(c *gin.Context) {
	nk, err := s.app.RotateAPIKey(c.Request.Context(), principal(c), c.Param("keyID"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"api_key": viewKey(nk.Key), "token": nk.Token})
}
