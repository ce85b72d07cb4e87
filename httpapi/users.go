package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// userView is a user as clients see it (no password hash).
type userView struct {
	ID        string         `json:"id"`
	Email     string         `json:"email"`
	Name      string         `json:"name"`
	Role      quire.UserRole `json:"role"`
	Disabled  bool           `json:"disabled"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

func viewUser(u *quire.User) userView {
	return userView{ID: u.ID, Email: u.Email, Name: u.Name, Role: u.Role, Disabled: u.Disabled, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

func (s *Server) userRoutes(g *gin.RouterGroup) {
	g.POST("/users", s.idempotent, s.createUser)
	g.GET("/users", s.listUsers)
	g.GET("/users/:userID", s.getUser)
	g.PATCH("/users/:userID", s.updateUser)
	g.DELETE("/users/:userID", s.deleteUser)
}

type userRequest struct {
	Email    *string         `json:"email"`
	Name     *string         `json:"name"`
	Password *string         `json:"password"`
	Role     *quire.UserRole `json:"role"`
	Disabled *bool           `json:"disabled"`
}

// userCreateRequest is userRequest as a create reads it: email and
// password are required (app.CreateUser).
type userCreateRequest struct {
	Email    *string         `json:"email" openapi:"required"`
	Name     *string         `json:"name"`
	Password *string         `json:"password" openapi:"required"`
	Role     *quire.UserRole `json:"role"`
	Disabled *bool           `json:"disabled"`
}

// decodeUser decodes the request body (a userRequest, or a
// userCreateRequest on create) into a user edit.
func decodeUser[R userRequest | userCreateRequest](s *Server, c *gin.Context) (app.UserEdit, bool) {
	var req R
	ok := s.bind(c, &req)
	return app.UserEdit(req), ok
}

func (s *Server) createUser(c *gin.Context) {
	if err := principal(c).CheckAdmin(); err != nil {
		s.fail(c, err) // before the body is read
		return
	}
	e, ok := decodeUser[userCreateRequest](s, c)
	if !ok {
		return
	}
	u, err := s.app.CreateUser(c.Request.Context(), principal(c), e)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Location", "/v1/users/"+u.ID)
	c.JSON(http.StatusCreated, gin.H{"user": viewUser(u)})
}

func (s *Server) listUsers(c *gin.Context) {
	all, err := s.app.Users(c.Request.Context(), principal(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]userView, len(all))
	for i, u := range all {
		out[i] = viewUser(u)
	}
	c.JSON(http.StatusOK, gin.H{"users": out})
}

func (s *Server) getUser(c *gin.Context) {
	u, err := s.app.User(c.Request.Context(), principal(c), c.Param("userID"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"user": viewUser(u)})
}

func (s *Server) updateUser(c *gin.Context) {
	if _, err := s.app.User(c.Request.Context(), principal(c), c.Param("userID")); err != nil {
		s.fail(c, err) // before the body is read
		return
	}
	e, ok := decodeUser[userRequest](s, c)
	if !ok {
		return
	}
	up, err := s.app.UpdateUser(c.Request.Context(), principal(c), c.Param("userID"), e)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := gin.H{"user": viewUser(up.User)}
	if up.PasswordChanged || up.Disabled {
		out["sessions_revoked"] = up.SessionsRevoked
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) deleteUser(c *gin.Context) {
	if err := s.app.DeleteUser(c.Request.Context(), principal(c), c.Param("userID")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
