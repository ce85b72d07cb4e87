package httpapi

import (
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/valid"
	"golang.org/x/crypto/bcrypt"
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
	g.POST("/users", s.createUser)
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

// apply validates req and copies its fields into u.
func (s *Server) applyUser(req *userRequest, u *quire.User) error {
	if req.Email != nil {
		e := strings.TrimSpace(*req.Email)
		if a, err := mail.ParseAddress(e); err != nil || a.Address != e || len(e) > 254 {
			return quire.Errorf(quire.EINVALID, "email is not a valid address")
		}
		u.Email = e
	}
	if req.Name != nil {
		if err := valid.IdentName("name", *req.Name, s.limits.MaxName); err != nil {
			return err
		}
		u.Name = *req.Name
	}
	if req.Role != nil {
		if *req.Role != quire.RoleAdmin && *req.Role != quire.RoleMember {
			return quire.Errorf(quire.EINVALID, "role must be admin or member")
		}
		u.Role = *req.Role
	}
	if req.Password != nil {
		if n := len(*req.Password); n < 8 || n > 72 {
			return quire.Errorf(quire.EINVALID, "password must be 8 to 72 bytes long")
		}
		h, err := bcrypt.GenerateFromPassword([]byte(*req.Password), s.bcryptCost)
		if err != nil {
			return err
		}
		u.PasswordHash = string(h)
	}
	if req.Disabled != nil {
		u.Disabled = *req.Disabled
	}
	return nil
}

func (s *Server) createUser(c *gin.Context) {
	p := principal(c)
	if err := p.CheckAdmin(); err != nil {
		s.fail(c, err)
		return
	}
	var req userRequest
	if err := s.decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.Email == nil || req.Password == nil {
		s.fail(c, quire.Errorf(quire.EINVALID, "email and password are required"))
		return
	}
	u := &quire.User{Role: quire.RoleMember}
	if req.Name == nil {
		req.Name = req.Email
	}
	if err := s.applyUser(&req, u); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.meta.CreateUser(c.Request.Context(), p.Actor(), u); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, gin.H{"user": viewUser(u)})
}

func (s *Server) listUsers(c *gin.Context) {
	if err := principal(c).CheckAdmin(); err != nil {
		s.fail(c, err)
		return
	}
	all, err := s.meta.Users(c.Request.Context())
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

// userFor loads the user in the path: admins see anyone, others themselves.
func (s *Server) userFor(c *gin.Context) (*quire.User, error) {
	p := principal(c)
	id := c.Param("userID")
	if id == "me" {
		id = p.User.ID
	}
	if id != p.User.ID && !p.IsAdmin() {
		return nil, quire.Errorf(quire.ENOTFOUND, "user not found")
	}
	return s.meta.User(c.Request.Context(), id)
}

func (s *Server) getUser(c *gin.Context) {
	u, err := s.userFor(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"user": viewUser(u)})
}

func (s *Server) updateUser(c *gin.Context) {
	p := principal(c)
	u, err := s.userFor(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := p.CheckAccount(); err != nil {
		s.fail(c, err)
		return
	}
	var req userRequest
	if err := s.decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if (req.Role != nil || req.Disabled != nil) && !p.IsAdmin() {
		s.fail(c, quire.Errorf(quire.EFORBIDDEN, "only an admin may change role or disabled"))
		return
	}
	if err := s.applyUser(&req, u); err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	if err := s.meta.UpdateUser(ctx, p.Actor(), u); err != nil {
		s.fail(c, err)
		return
	}
	out := gin.H{"user": viewUser(u)}
	if req.Password != nil {
		// A new password ends the user's other sessions: whoever knew
		// the old one may hold one. A user changing their own keeps the
		// session they did it with.
		keep := ""
		if p.Key == nil && p.User.ID == u.ID {
			keep = p.SessionID
		}
		n, err := s.revokeSessions(ctx, u.ID, keep)
		if err != nil {
			s.fail(c, &quire.Error{Code: quire.EUNAVAILABLE, Err: err,
				Message: "the password was changed, but the user's other sessions could not be ended; set it again to retry"})
			return
		}
		out["sessions_revoked"] = n
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) deleteUser(c *gin.Context) {
	p := principal(c)
	if err := p.CheckAdmin(); err != nil {
		s.fail(c, err)
		return
	}
	id := c.Param("userID")
	if id == p.User.ID {
		s.fail(c, quire.Errorf(quire.ECONFLICT, "you cannot delete yourself"))
		return
	}
	ctx := c.Request.Context()
	if err := s.meta.DeleteUser(ctx, p.Actor(), id); err != nil {
		s.fail(c, err)
		return
	}
	s.revokeSessions(ctx, id, "") // best effort: a deleted user's sessions no longer authenticate
	c.Status(http.StatusNoContent)
}
