package oauth

import (
	"context"
	"strings"
	"time"

	"github.com/ory/fosite"
	"github.com/quire/quire"
)

// strategy makes fosite's tokens the way quire makes API keys: a prefix
// and 256 random bits, stored as their SHA-256 (quire.HashSecret), which
// is the "signature" fosite files them under. Unlike fosite's HMAC
// strategy it needs no server-wide signing secret to keep, share between
// processes and rotate; a token is valid while its hash is stored and
// its expiry (kept with the hash) is ahead.
type strategy struct {
	now func() time.Time
}

func (s strategy) generate(prefix string) (string, string, error) {
	tok := prefix + quire.NewSecret()
	return tok, quire.HashSecret(tok), nil
}

func (s strategy) validate(r fosite.Requester, tt fosite.TokenType, prefix, token string) error {
	if !strings.HasPrefix(token, prefix) {
		return fosite.ErrInvalidTokenFormat
	}
	if exp := r.GetSession().GetExpiresAt(tt); exp.IsZero() || !s.now().Before(exp) {
		return fosite.ErrTokenExpired.WithHintf("The %s expired.", tt)
	}
	return nil
}

func (s strategy) AccessTokenSignature(_ context.Context, token string) string {
	return quire.HashSecret(token)
}

func (s strategy) GenerateAccessToken(context.Context, fosite.Requester) (string, string, error) {
	return s.generate(quire.OAuthAccessPrefix)
}

func (s strategy) ValidateAccessToken(_ context.Context, r fosite.Requester, token string) error {
	return s.validate(r, fosite.AccessToken, quire.OAuthAccessPrefix, token)
}

func (s strategy) RefreshTokenSignature(_ context.Context, token string) string {
	return quire.HashSecret(token)
}

func (s strategy) GenerateRefreshToken(context.Context, fosite.Requester) (string, string, error) {
	return s.generate(quire.OAuthRefreshPrefix)
}

func (s strategy) ValidateRefreshToken(_ context.Context, r fosite.Requester, token string) error {
	return s.validate(r, fosite.RefreshToken, quire.OAuthRefreshPrefix, token)
}

func (s strategy) AuthorizeCodeSignature(_ context.Context, token string) string {
	return quire.HashSecret(token)
}

func (s strategy) GenerateAuthorizeCode(context.Context, fosite.Requester) (string, string, error) {
	return s.generate(quire.OAuthCodePrefix)
}

func (s strategy) ValidateAuthorizeCode(_ context.Context, r fosite.Requester, token string) error {
	return s.validate(r, fosite.AuthorizeCode, quire.OAuthCodePrefix, token)
}
