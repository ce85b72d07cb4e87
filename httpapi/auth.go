package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// DefaultBcryptCost is the cost of password hashes when Config leaves it
// unset (app.DefaultBcryptCost).
const DefaultBcryptCost = app.DefaultBcryptCost

// authenticate admits the request through the pipeline (authenticate
// the bearer credential, count it against its request limit, record an
// API key's use), or fails with 401 (429 over the limit, 503 when the
// session store is down). The request reads stored metadata in one
// quire.ReadScope, its context's (begin).
func (s *Server) authenticate(c *gin.Context) {
	if err := oneAuthorization(c.Request); err != nil {
		s.fail(c, err)
		return
	}
	p, err := s.pipe.Admit(c.Request.Context(), bearer(c.Request), s.clientIP(c), anonymousAllowed(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	requestOf(c).principal = p
	c.Next()
}

// limitAddress counts a request that takes no credential (sign-in)
// against its client address's request limit.
func (s *Server) limitAddress(c *gin.Context) {
	if err := s.pipe.Allow(c.Request.Context(), nil, s.clientIP(c)); err != nil {
		s.fail(c, err)
		return
	}
	c.Next()
}

// oneAuthorization refuses a request with several Authorization headers:
// which one counts would be up to each party (quire reads the first, a
// proxy in front may check the last), so none does.
func oneAuthorization(r *http.Request) error {
	if n := len(r.Header["Authorization"]); n > 1 {
		return quire.Errorf(quire.EINVALID, "send one Authorization header, not %d", n)
	}
	return nil
}

// bearer returns the token of an Authorization: Bearer header.
func bearer(r *http.Request) string {
	h := headerValue(r.Header, "Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

func (s *Server) authRoutes(g *gin.RouterGroup) {
	g.DELETE("/auth/session", s.logout)
	g.GET("/auth/me", s.me)
	g.GET("/auth/sessions", s.listSessions)
	g.DELETE("/auth/sessions/:sessionID", s.revokeSession)
}

type loginRequest struct {
	Email    string `json:"email" openapi:"required"`
	Password string `json:"password" openapi:"required"`
}

// sessionView is a session as clients see it (no secret hash).
type sessionView struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	UserAgent string    `json:"user_agent,omitempty"`
	Current   bool      `json:"current"`
}

func viewSession(s *quire.Session, current string) sessionView {
	return sessionView{ID: s.ID, UserID: s.UserID, CreatedAt: s.CreatedAt, ExpiresAt: s.ExpiresAt, UserAgent: s.UserAgent, Current: s.ID == current}
}

// login opens a session; the client address the login throttle counts
// failures against is the peer's (c.ClientIP: no proxy is trusted).
func (s *Server) login(c *gin.Context) {
	var req loginRequest
	if err := s.decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	l, err := s.app.Login(c.Request.Context(), req.Email, req.Password, s.clientIP(c), c.Request.UserAgent())
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{
		"token":   l.Token,
		"session": viewSession(l.Session, l.Session.ID),
		"user":    viewUser(l.User),
	})
}

func (s *Server) logout(c *gin.Context) {
	if err := s.app.Logout(c.Request.Context(), principal(c)); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (s *Server) me(c *gin.Context) {
	p := principal(c)
	out := gin.H{"user": viewUser(p.User), "kind": p.Kind()}
	if p.Key != nil {
		out["api_key"] = viewKey(p.Key)
	} else {
		out["session_id"] = p.SessionID
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) listSessions(c *gin.Context) {
	p := principal(c)
	all, err := s.app.Sessions(c.Request.Context(), p, c.Query("user_id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]sessionView, len(all))
	for i, ss := range all {
		out[i] = viewSession(ss, p.SessionID)
	}
	c.JSON(http.StatusOK, gin.H{"sessions": out})
}

// revokeSession is SPEC endpoint 1: 204, 401, or 404 for an unknown id or
// another user's session (unless the caller is an admin).
func (s *Server) revokeSession(c *gin.Context) {
	if err := s.app.RevokeSession(c.Request.Context(), principal(c), c.Param("sessionID")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
