package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/ory/fosite"
	"github.com/quire/quire"
)

// store is fosite's storage over quire.OAuthStore: every token fosite
// issues becomes an entry of its grant (the fosite request id is the
// grant id, which fosite keeps through the code exchange and every
// refresh). The changes of one fosite operation are gathered in a
// transaction (fosite's storage.Transactional) and written as one
// commit of the system repository, so a token answer is durable before
// it is sent, and a crash leaves either all of it or none.
type store struct {
	st      quire.OAuthStore
	clients *clients
	now     func() time.Time
}

// actor authors the commits of token changes: the protocol, not a user.
var actor = quire.Actor{Name: "quire oauth", Email: "oauth@quire.invalid"}

type txKey struct{}

// tx holds the grants a transaction changed, written at commit.
type tx struct {
	grants map[string]*quire.OAuthGrant
}

func (s *store) BeginTX(ctx context.Context) (context.Context, error) {
	if ctx.Value(txKey{}) != nil {
		return ctx, nil
	}
	return context.WithValue(ctx, txKey{}, &tx{grants: map[string]*quire.OAuthGrant{}}), nil
}

func (s *store) Commit(ctx context.Context) error {
	t, _ := ctx.Value(txKey{}).(*tx)
	if t == nil {
		return nil
	}
	for id, g := range t.grants {
		g.Tokens = slices.DeleteFunc(g.Tokens, func(tk quire.OAuthToken) bool { return !s.now().Before(tk.ExpiresAt) })
		if err := s.st.PutOAuthGrant(ctx, actor, g); quire.ErrorCode(err) == quire.ECONFLICT {
			// Another request changed or revoked the grant first: fosite
			// answers this one "retry", and a retry finds what won.
			clear(t.grants)
			return fmt.Errorf("%w: %w", fosite.ErrSerializationFailure, err)
		} else if err != nil {
			return err
		}
		delete(t.grants, id)
	}
	return nil
}

func (s *store) Rollback(ctx context.Context) error {
	if t, _ := ctx.Value(txKey{}).(*tx); t != nil {
		clear(t.grants)
	}
	return nil
}

// update changes grant id with fn, in ctx's transaction or in one of its
// own. A grant that does not exist yet is made by fn from a zero grant
// when create is set; otherwise it is fosite.ErrNotFound.
func (s *store) update(ctx context.Context, id string, create bool, fn func(g *quire.OAuthGrant) error) error {
	t, _ := ctx.Value(txKey{}).(*tx)
	own := t == nil
	if own {
		t = &tx{grants: map[string]*quire.OAuthGrant{}}
		ctx = context.WithValue(ctx, txKey{}, t)
	}
	g := t.grants[id]
	if g == nil {
		var err error
		g, err = s.st.OAuthGrant(ctx, id)
		switch {
		case quire.ErrorCode(err) == quire.ENOTFOUND && create:
			g = &quire.OAuthGrant{ID: id}
		case quire.ErrorCode(err) == quire.ENOTFOUND:
			return fosite.ErrNotFound
		case err != nil:
			return err
		}
	}
	if err := fn(g); err != nil {
		return err
	}
	t.grants[id] = g
	if own {
		return s.Commit(ctx)
	}
	return nil
}

// find returns the grant holding the token of signature, and the token,
// looking at ctx's transaction first.
func (s *store) find(ctx context.Context, signature string) (*quire.OAuthGrant, *quire.OAuthToken, error) {
	if t, _ := ctx.Value(txKey{}).(*tx); t != nil {
		for _, g := range t.grants {
			if i := tokenIndex(g, signature); i >= 0 {
				return g, &g.Tokens[i], nil
			}
		}
	}
	g, err := s.st.OAuthGrantByToken(ctx, signature)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return nil, nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	i := tokenIndex(g, signature)
	if i < 0 {
		return nil, nil, fosite.ErrNotFound
	}
	return g, &g.Tokens[i], nil
}

func tokenIndex(g *quire.OAuthGrant, signature string) int {
	return slices.IndexFunc(g.Tokens, func(t quire.OAuthToken) bool { return t.Hash == signature })
}

// get is a Get…Session: the request that issued the token of signature,
// if it is a token of kind.
func (s *store) get(ctx context.Context, kind, signature string, into fosite.Session) (fosite.Requester, *quire.OAuthToken, error) {
	g, tk, err := s.find(ctx, signature)
	if err != nil {
		return nil, nil, err
	}
	if tk.Kind != kind {
		return nil, nil, fosite.ErrNotFound
	}
	r, err := s.request(ctx, g, tk, into)
	return r, tk, err
}

// request rebuilds the fosite request behind token tk of grant g. Its
// session is into, when fosite passes one (it reads the expiry of the
// token it validates from the session it passed), filled in.
func (s *store) request(ctx context.Context, g *quire.OAuthGrant, tk *quire.OAuthToken, into fosite.Session) (fosite.Requester, error) {
	r := fosite.NewRequest()
	r.ID = g.ID
	r.RequestedAt = g.RequestedAt
	// The client as the grant recorded it: fosite compares only its id
	// with the client of a token request (which it looks up itself), and
	// a token check must not wait on fetching a metadata document.
	r.Client = &client{id: g.ClientID, name: g.ClientName}
	r.RequestedScope = fosite.Arguments{string(g.Scope)}
	r.GrantedScope = fosite.Arguments{string(g.Scope)}
	r.RequestedAudience = fosite.Arguments{g.Resource}
	r.GrantedAudience = fosite.Arguments{g.Resource}
	r.Form = url.Values{}
	if tk.RedirectURI != "" {
		r.Form.Set("redirect_uri", tk.RedirectURI)
	}
	if tk.CodeChallenge != "" {
		r.Form.Set("code_challenge", tk.CodeChallenge)
		r.Form.Set("code_challenge_method", tk.CodeChallengeMethod)
	}
	sess, ok := into.(*fosite.DefaultSession)
	if !ok || sess == nil {
		sess = &fosite.DefaultSession{}
	}
	sess.Subject = g.UserID
	switch tk.Kind {
	case quire.OAuthCode:
		sess.SetExpiresAt(fosite.AuthorizeCode, tk.ExpiresAt)
	case quire.OAuthAccess:
		sess.SetExpiresAt(fosite.AccessToken, tk.ExpiresAt)
	case quire.OAuthRefresh:
		sess.SetExpiresAt(fosite.RefreshToken, tk.ExpiresAt)
	}
	r.Session = sess
	return r, nil
}

// add appends a token of kind to the grant of request r.
func (s *store) add(ctx context.Context, kind, signature string, r fosite.Requester) error {
	var tt fosite.TokenType
	switch kind {
	case quire.OAuthCode:
		tt = fosite.AuthorizeCode
	case quire.OAuthAccess:
		tt = fosite.AccessToken
	default:
		tt = fosite.RefreshToken
	}
	exp := r.GetSession().GetExpiresAt(tt)
	if exp.IsZero() {
		return errors.New("oauth: a token without an expiry")
	}
	// fosite stamps the expiry on the wall clock; tokens expire by
	// s.now (Config.Now, the same clock but in tests): carry the
	// lifetime over, or a token issued on a moved clock would be born
	// expired (or live too long).
	exp = exp.Add(time.Until(s.now()))
	return s.update(ctx, r.GetID(), kind == quire.OAuthCode, func(g *quire.OAuthGrant) error {
		tk := quire.OAuthToken{Kind: kind, Hash: signature, ExpiresAt: exp.UTC(), IssuedAt: s.now().UTC()}
		if kind == quire.OAuthCode {
			if err := newGrant(g, r); err != nil {
				return err
			}
			tk.RedirectURI = r.GetRequestForm().Get("redirect_uri")
			tk.CodeChallenge = r.GetRequestForm().Get("code_challenge")
			tk.CodeChallengeMethod = r.GetRequestForm().Get("code_challenge_method")
		}
		g.Tokens = append(g.Tokens, tk)
		return nil
	})
}

// newGrant fills the new grant g from the approved authorization request
// r (Server.Approve sets its scope, audience and subject).
func newGrant(g *quire.OAuthGrant, r fosite.Requester) error {
	scopes := r.GetGrantedScopes()
	aud := r.GetGrantedAudience()
	if len(scopes) != 1 || len(aud) != 1 || r.GetSession().GetSubject() == "" {
		return errors.New("oauth: an authorization without one scope, one resource and a user")
	}
	g.UserID = r.GetSession().GetSubject()
	g.Scope = quire.Scope(scopes[0])
	g.Resource = aud[0]
	g.RequestedAt = r.GetRequestedAt().UTC()
	g.ClientID = r.GetClient().GetID()
	if c, ok := r.GetClient().(*client); ok {
		g.ClientName = c.name
	}
	if u, err := url.Parse(r.GetRequestForm().Get("redirect_uri")); err == nil {
		g.RedirectHost = u.Host
	}
	return nil
}

// drop removes the tokens of signature (or, with signature "", every
// token of kind) from grant id.
func (s *store) drop(ctx context.Context, id, kind, signature string) error {
	return s.update(ctx, id, false, func(g *quire.OAuthGrant) error {
		g.Tokens = slices.DeleteFunc(g.Tokens, func(t quire.OAuthToken) bool {
			return signature != "" && t.Hash == signature || signature == "" && t.Kind == kind
		})
		return nil
	})
}

// dropToken removes the token of signature from whichever grant holds it.
func (s *store) dropToken(ctx context.Context, signature string) error {
	g, _, err := s.find(ctx, signature)
	if err != nil {
		return err
	}
	return s.drop(ctx, g.ID, "", signature)
}

// fosite.ClientManager

func (s *store) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	return s.clients.GetClient(ctx, id)
}

func (s *store) ClientAssertionJWTValid(context.Context, string) error {
	return fosite.ErrJTIKnown // no client authenticates with a JWT
}

func (s *store) SetClientAssertionJWT(context.Context, string, time.Time) error { return nil }

// oauth2.AuthorizeCodeStorage

func (s *store) CreateAuthorizeCodeSession(ctx context.Context, signature string, r fosite.Requester) error {
	return s.add(ctx, quire.OAuthCode, signature, r)
}

func (s *store) GetAuthorizeCodeSession(ctx context.Context, signature string, into fosite.Session) (fosite.Requester, error) {
	r, tk, err := s.get(ctx, quire.OAuthCode, signature, into)
	if err != nil {
		return nil, err
	}
	if tk.Used {
		return r, fosite.ErrInvalidatedAuthorizeCode
	}
	return r, nil
}

func (s *store) InvalidateAuthorizeCodeSession(ctx context.Context, signature string) error {
	g, _, err := s.find(ctx, signature)
	if err != nil {
		return err
	}
	return s.update(ctx, g.ID, false, func(g *quire.OAuthGrant) error {
		if i := tokenIndex(g, signature); i >= 0 {
			g.Tokens[i].Used = true
		}
		return nil
	})
}

// pkce.PKCERequestStorage: the challenge is kept with its code.

func (s *store) CreatePKCERequestSession(ctx context.Context, signature string, r fosite.Requester) error {
	g, _, err := s.find(ctx, signature)
	if err != nil {
		return err
	}
	return s.update(ctx, g.ID, false, func(g *quire.OAuthGrant) error {
		if i := tokenIndex(g, signature); i >= 0 {
			g.Tokens[i].CodeChallenge = r.GetRequestForm().Get("code_challenge")
			g.Tokens[i].CodeChallengeMethod = r.GetRequestForm().Get("code_challenge_method")
		}
		return nil
	})
}

func (s *store) GetPKCERequestSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	r, _, err := s.get(ctx, quire.OAuthCode, signature, nil)
	return r, err
}

func (s *store) DeletePKCERequestSession(context.Context, string) error {
	return nil // the code, marked used, keeps it until it expires
}

// oauth2.AccessTokenStorage

func (s *store) CreateAccessTokenSession(ctx context.Context, signature string, r fosite.Requester) error {
	return s.add(ctx, quire.OAuthAccess, signature, r)
}

func (s *store) GetAccessTokenSession(ctx context.Context, signature string, into fosite.Session) (fosite.Requester, error) {
	r, _, err := s.get(ctx, quire.OAuthAccess, signature, into)
	return r, err
}

func (s *store) DeleteAccessTokenSession(ctx context.Context, signature string) error {
	return s.dropToken(ctx, signature)
}

// oauth2.RefreshTokenStorage

func (s *store) CreateRefreshTokenSession(ctx context.Context, signature, _ string, r fosite.Requester) error {
	return s.add(ctx, quire.OAuthRefresh, signature, r)
}

func (s *store) GetRefreshTokenSession(ctx context.Context, signature string, into fosite.Session) (fosite.Requester, error) {
	r, _, err := s.get(ctx, quire.OAuthRefresh, signature, into)
	return r, err
}

func (s *store) DeleteRefreshTokenSession(ctx context.Context, signature string) error {
	return s.dropToken(ctx, signature)
}

// RotateRefreshToken ends the refresh token just used and the access
// tokens issued with it: a grant has one live pair at a time.
func (s *store) RotateRefreshToken(ctx context.Context, requestID, signature string) error {
	return s.update(ctx, requestID, false, func(g *quire.OAuthGrant) error {
		if tokenIndex(g, signature) < 0 {
			return fosite.ErrNotFound // rotated by a request that came first
		}
		g.Tokens = slices.DeleteFunc(g.Tokens, func(t quire.OAuthToken) bool {
			return t.Hash == signature || t.Kind == quire.OAuthAccess || t.Kind == quire.OAuthRefresh
		})
		return nil
	})
}

// oauth2.TokenRevocationStorage

func (s *store) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.drop(ctx, requestID, quire.OAuthRefresh, "")
}

func (s *store) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.drop(ctx, requestID, quire.OAuthAccess, "")
}
