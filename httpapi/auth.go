package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/quire/quire"
	"golang.org/x/crypto/bcrypt"
)

// DefaultBcryptCost is tuned to take tens of milliseconds here: slow for
// guessing, quick enough for a login.
const DefaultBcryptCost = 11

// authenticate resolves the bearer credential into a principal, or fails
// with 401 (503 when the session store is down). The request reads stored
// metadata in one quire.ReadScope.
func (s *Server) authenticate(c *gin.Context) {
	c.Request = c.Request.WithContext(quire.WithReadScope(c.Request.Context()))
	if err := oneAuthorization(c.Request); err != nil {
		s.fail(c, err)
		return
	}
	p, err := s.app.Authenticate(c.Request.Context(), bearer(c.Request))
	if err != nil {
		if quire.ErrorCode(err) == quire.EUNAUTHORIZED {
			// Without a credential the client address is what is limited.
			if lerr := s.allowRequest(c); lerr != nil {
				err = lerr
			}
		}
		s.fail(c, err)
		return
	}
	c.Set(ctxPrincipal, p)
	c.Next()
}

// oneAuthorization refuses a request with several Authorization headers:
// which one counts would be up to each party (quire reads the first, a
// proxy in front may check the last), so none does.
func oneAuthorization(r *http.Request) error {
	if len(r.Header.Values("Authorization")) > 1 {
		return quire.Errorf(quire.EINVALID, "send one Authorization header, not %d", len(r.Header.Values("Authorization")))
	}
	return nil
}

// bearer returns the token of an Authorization: Bearer header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
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
	Email    string `json:"email"`
	Password string `json:"password"`
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

func (s *Server) login(c *gin.Context) {
	var req loginRequest
	if err := s.decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.Email == "" || req.Password == "" {
		s.fail(c, quire.Errorf(quire.EINVALID, "email and password are required"))
		return
	}
	ctx := c.Request.Context()
	att := &loginAttempt{}
	att.account, att.address = loginKeys(c, req.Email)
	if err := s.allowLogin(c, att); err != nil {
		s.fail(c, err)
		return
	}
	bad := quire.Errorf(quire.EUNAUTHORIZED, "wrong email or password")
	u, err := s.meta.UserByEmail(ctx, req.Email)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		bcrypt.CompareHashAndPassword(s.dummyHash, []byte(req.Password))
		s.fail(c, s.loginFailed(c, att, bad))
		return
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(req.Password)) != nil || u.Disabled {
		s.fail(c, s.loginFailed(c, att, bad))
		return
	}
	s.loginSucceeded(c, att)
	secret := quire.NewSecret()
	now := s.now().UTC()
	sess := &quire.Session{
		ID: uuid.NewString(), UserID: u.ID, SecretHash: quire.HashSecret(secret),
		CreatedAt: now, ExpiresAt: now.Add(s.sessionTTL), UserAgent: truncate(c.Request.UserAgent(), 200),
	}
	if err := s.sessions.CreateSession(ctx, sess); err != nil {
		if quire.ErrorCode(err) == quire.EUNAVAILABLE {
			err = loginUnavailable(err) // as a wrong password gets (loginFailed)
		}
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{
		"token":   quire.Token(quire.SessionPrefix, sess.ID, secret),
		"session": viewSession(sess, sess.ID),
		"user":    viewUser(u),
	})
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func (s *Server) logout(c *gin.Context) {
	p := principal(c)
	if p.Key != nil {
		s.fail(c, quire.Errorf(quire.EINVALID, "an API key has no session to end; delete the key instead"))
		return
	}
	if err := s.sessions.DeleteSession(c.Request.Context(), p.SessionID); err != nil && quire.ErrorCode(err) != quire.ENOTFOUND {
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
	userID := p.User.ID
	if q := c.Query("user_id"); q != "" && q != userID {
		if err := p.CheckAdmin(); err != nil {
			s.fail(c, err)
			return
		}
		userID = q
	}
	all, err := s.sessions.Sessions(c.Request.Context(), userID)
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
	p := principal(c)
	id := c.Param("sessionID")
	notFound := quire.Errorf(quire.ENOTFOUND, "session not found")
	if uuid.Validate(id) != nil {
		s.fail(c, notFound)
		return
	}
	ctx := c.Request.Context()
	sess, err := s.sessions.Session(ctx, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	if sess.UserID != p.User.ID && !p.IsAdmin() {
		s.fail(c, notFound)
		return
	}
	if err := p.CheckAccount(); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.sessions.DeleteSession(ctx, id); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
