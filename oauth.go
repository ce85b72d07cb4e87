package quire

import (
	"context"
	"time"
)

// OAuth: quire is the authorization server of its own MCP endpoint
// (docs/mcp.md, "Add quire by URL with OAuth"). A host registers as a
// client, a user approves it on the consent page, and the grant that
// approval makes holds the host's tokens. An access token acts as the
// grant's user within the grant's scope, like an API key, and only at
// the resource the grant names (/mcp).

// Prefixes of the OAuth tokens quire issues. None parses as a session or
// an API key (ParseToken), so the REST API and git refuse them all.
const (
	OAuthCodePrefix    = "qoc_"
	OAuthAccessPrefix  = "qoa_"
	OAuthRefreshPrefix = "qor_"
)

// OAuthClient is a client registered by Dynamic Client Registration
// (RFC 7591). Clients identified by a Client ID Metadata Document (an
// https client_id) are fetched when used and never stored.
type OAuthClient struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	URI          string    `json:"uri,omitempty"`
	RedirectURIs []string  `json:"redirect_uris"`
	CreatedAt    time.Time `json:"created_at"`
}

// Token kinds of an OAuthToken.
const (
	OAuthCode    = "code"
	OAuthAccess  = "access"
	OAuthRefresh = "refresh"
)

// OAuthToken is one token of a grant. Only a hash of it is stored.
type OAuthToken struct {
	Kind      string    `json:"kind"`
	Hash      string    `json:"hash"`
	ExpiresAt time.Time `json:"expires_at"`
	IssuedAt  time.Time `json:"issued_at"`
	// Used marks an authorization code already exchanged: kept until it
	// expires, so a second exchange is recognised and ends the grant's
	// tokens (RFC 6749 §4.1.2).
	Used bool `json:"used,omitempty"`
	// RedirectURI, CodeChallenge and CodeChallengeMethod are the
	// authorization request's, which a code's exchange must match.
	RedirectURI         string `json:"redirect_uri,omitempty"`
	CodeChallenge       string `json:"code_challenge,omitempty"`
	CodeChallengeMethod string `json:"code_challenge_method,omitempty"`
}

// OAuthGrant is a user's approval of a client: an "application" on the
// user's account page. Revoking it deletes it and so its tokens.
type OAuthGrant struct {
	ID         string `json:"id"`
	UserID     string `json:"user_id"`
	ClientID   string `json:"client_id"`
	ClientName string `json:"client_name"`
	// RedirectHost is the host the consent page named.
	RedirectHost string `json:"redirect_host"`
	Scope        Scope  `json:"scope"`
	// Resource is the RFC 8707 resource the tokens are bound to: the
	// URL of /mcp as the host reached it.
	Resource    string    `json:"resource"`
	RequestedAt time.Time `json:"requested_at"`
	// Rev counts the grant's writes: PutOAuthGrant replaces revision Rev
	// only (0: the grant must not exist yet) and makes it Rev+1, so two
	// token requests racing on one grant, or a token request racing its
	// revocation, cannot both win (the loser is ECONFLICT).
	Rev       int          `json:"rev"`
	CreatedAt time.Time    `json:"created_at"`
	UpdatedAt time.Time    `json:"updated_at"`
	Tokens    []OAuthToken `json:"tokens"`
}

// Active reports whether g has a token that may still be used at now: a
// grant whose code expired unexchanged, or whose tokens all expired, is
// no longer an application of its user.
func (g *OAuthGrant) Active(now time.Time) bool {
	for _, t := range g.Tokens {
		if !t.Used && now.Before(t.ExpiresAt) {
			return true
		}
	}
	return false
}

// OAuthStore keeps OAuth clients and grants, durably (gitstore/meta).
type OAuthStore interface {
	CreateOAuthClient(ctx context.Context, c *OAuthClient) error
	OAuthClient(ctx context.Context, id string) (*OAuthClient, error)

	// PutOAuthGrant creates grant g (Rev 0) or replaces revision g.Rev
	// of it; another revision, or a grant deleted meanwhile, is ECONFLICT.
	PutOAuthGrant(ctx context.Context, by Actor, g *OAuthGrant) error
	OAuthGrant(ctx context.Context, id string) (*OAuthGrant, error)
	// OAuthGrantByToken finds the grant holding the token of hash.
	OAuthGrantByToken(ctx context.Context, hash string) (*OAuthGrant, error)
	OAuthGrants(ctx context.Context, userID string) ([]*OAuthGrant, error)
	DeleteOAuthGrant(ctx context.Context, by Actor, id string) error
}
