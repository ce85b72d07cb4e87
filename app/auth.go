package app

import (
	"context"

	"github.com/quire/quire"
)

// Authenticate turns a bearer token (a sess_ session or an ak_ API key)
// into the principal it stands for. Unknown, malformed, expired and
// revoked tokens, and tokens of disabled users, are all EUNAUTHORIZED with
// one message, so a caller learns nothing about which it was.
func (a *App) Authenticate(ctx context.Context, token string) (*quire.Principal, error) {
	if token == "" {
		return nil, quire.Errorf(quire.EUNAUTHORIZED, "missing credential: send Authorization: Bearer <token>")
	}
	// Made only when needed: most requests are authorized.
	unauthorized := func() error { return quire.Errorf(quire.EUNAUTHORIZED, "missing or invalid credential") }
	prefix, id, secret, ok := quire.ParseToken(token)
	if !ok {
		return nil, unauthorized()
	}
	p := &quire.Principal{}
	var userID string
	switch prefix {
	case quire.SessionPrefix:
		sess, err := a.sessions.Session(ctx, id)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return nil, unauthorized()
		}
		if err != nil {
			return nil, err
		}
		if !quire.SecretMatches(secret, sess.SecretHash) || a.now().After(sess.ExpiresAt) {
			return nil, unauthorized()
		}
		p.SessionID, userID = sess.ID, sess.UserID
	case quire.APIKeyPrefix:
		k, err := a.meta.APIKey(ctx, id)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return nil, unauthorized()
		}
		if err != nil {
			return nil, err
		}
		if !quire.SecretMatches(secret, k.SecretHash) || k.ExpiresAt != nil && a.now().After(*k.ExpiresAt) {
			return nil, unauthorized()
		}
		p.Key, userID = k, k.UserID
	}
	u, err := a.meta.User(ctx, userID)
	if quire.ErrorCode(err) == quire.ENOTFOUND || err == nil && u.Disabled {
		return nil, unauthorized()
	}
	if err != nil {
		return nil, err
	}
	p.User = u
	return p, nil
}
