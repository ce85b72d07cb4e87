package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/valid"
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
	g.POST("/api-keys", s.createKey)
	g.GET("/api-keys", s.listKeys)
	g.GET("/api-keys/:keyID", s.getKey)
	g.DELETE("/api-keys/:keyID", s.deleteKey)
	g.POST("/api-keys/:keyID/rotate", s.rotateKey)
}

type keyRequest struct {
	Name       string      `json:"name"`
	Scope      quire.Scope `json:"scope"`
	ProjectIDs []string    `json:"project_ids"`
	ExpiresAt  *time.Time  `json:"expires_at"`
}

// newKeySecret gives k a fresh secret and returns the token to show once.
func newKeySecret(k *quire.APIKey) string {
	secret := quire.NewSecret()
	k.SecretHash = quire.HashSecret(secret)
	tok := quire.Token(quire.APIKeyPrefix, k.ID, secret)
	k.Prefix = tok[:len(quire.APIKeyPrefix)+8]
	return tok
}

func (s *Server) createKey(c *gin.Context) {
	p := principal(c)
	if err := p.CheckAccount(); err != nil {
		s.fail(c, err)
		return
	}
	var req keyRequest
	if err := s.decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if err := valid.IdentName("name", req.Name, s.limits.MaxName); err != nil {
		s.fail(c, err)
		return
	}
	if req.Scope == "" {
		req.Scope = quire.ScopeRead
	}
	if req.Scope.Level() == quire.AccessNone {
		s.fail(c, quire.Errorf(quire.EINVALID, "scope must be read, write or admin"))
		return
	}
	if req.ExpiresAt != nil && !req.ExpiresAt.After(s.now()) {
		s.fail(c, quire.Errorf(quire.EUNPROCESSABLE, "expires_at %s is not in the future", req.ExpiresAt.UTC().Format(time.RFC3339)).WithDetail("field", "expires_at"))
		return
	}
	ctx := c.Request.Context()
	for _, id := range req.ProjectIDs {
		pr, err := s.meta.Project(ctx, id)
		if err != nil || pr.ID != id || p.ProjectAccess(pr) == quire.AccessNone {
			s.fail(c, quire.Errorf(quire.EINVALID, "project_ids: unknown project %q", id))
			return
		}
	}
	k := &quire.APIKey{ID: newUUID(), UserID: p.User.ID, Name: req.Name, Scope: req.Scope, ProjectIDs: req.ProjectIDs, ExpiresAt: req.ExpiresAt}
	if k.ProjectIDs == nil {
		k.ProjectIDs = []string{}
	}
	tok := newKeySecret(k)
	if err := s.meta.CreateAPIKey(ctx, p.Actor(), k); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, gin.H{"api_key": viewKey(k), "token": tok})
}

func (s *Server) listKeys(c *gin.Context) {
	p := principal(c)
	userID := p.User.ID
	if c.Query("all") == "true" && p.IsAdmin() {
		userID = ""
	}
	all, err := s.meta.APIKeys(c.Request.Context(), userID)
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

// keyFor loads the key in the path if the caller owns it (or is admin).
func (s *Server) keyFor(c *gin.Context) (*quire.APIKey, error) {
	p := principal(c)
	k, err := s.meta.APIKey(c.Request.Context(), c.Param("keyID"))
	if err != nil {
		return nil, err
	}
	if k.UserID != p.User.ID && !p.IsAdmin() {
		return nil, quire.Errorf(quire.ENOTFOUND, "API key not found")
	}
	return k, nil
}

func (s *Server) getKey(c *gin.Context) {
	k, err := s.keyFor(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.withLastUsed(c.Request.Context(), k)
	c.JSON(http.StatusOK, gin.H{"api_key": viewKey(k)})
}

func (s *Server) deleteKey(c *gin.Context) {
	p := principal(c)
	if err := p.CheckAccount(); err != nil {
		s.fail(c, err)
		return
	}
	k, err := s.keyFor(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.meta.DeleteAPIKey(c.Request.Context(), p.Actor(), k.ID); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (s *Server) rotateKey(c *gin.Context) {
	p := principal(c)
	if err := p.CheckAccount(); err != nil {
		s.fail(c, err)
		return
	}
	k, err := s.keyFor(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	tok := newKeySecret(k)
	if err := s.meta.UpdateAPIKey(c.Request.Context(), p.Actor(), k); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"api_key": viewKey(k), "token": tok})
}
