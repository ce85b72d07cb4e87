// Package oauth is quire's OAuth 2.1 authorization server, for MCP hosts
// that add quire by URL (docs/mcp.md, "Add quire by URL with OAuth"):
// the authorization code grant with PKCE (S256 only), refresh tokens
// rotated on every use, clients registered by Dynamic Client
// Registration (RFC 7591) or named by a Client ID Metadata Document, and
// tokens bound to one resource, /mcp (RFC 8707).
//
// The protocol is github.com/ory/fosite's, not quire's: its handlers
// parse and check the authorization and token requests, verify PKCE,
// rotate refresh tokens, revoke a grant's tokens when a code is
// replayed, and write the RFC 6749 answers and errors. fosite was chosen
// over zitadel/oidc because it composes the OAuth 2 handlers alone,
// behind small storage interfaces quire implements over its own durable
// store (store.go), where zitadel/oidc's provider is an OpenID Provider
// first (ID tokens, signing keys, userinfo) with a storage interface to
// match. Requests and answers are net/http's, as fosite's are, so the
// transports (httpapi, web) hand them over as they come.
package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/quire/quire"
)

// Config is what a Server needs.
type Config struct {
	Store quire.OAuthStore
	// Now is the clock tokens expire by; time.Now when nil.
	Now func() time.Time
	// AllowPrivateMetadata lets Client ID Metadata Documents be fetched
	// from loopback and private addresses: for tests only.
	AllowPrivateMetadata bool
}

// Lifetimes of what the server issues.
const (
	CodeLifetime    = 10 * time.Minute
	AccessLifetime  = time.Hour
	RefreshLifetime = 30 * 24 * time.Hour
)

// Paths of the endpoints, relative to the issuer (quire's origin).
const (
	MetadataPath  = "/.well-known/oauth-authorization-server"
	AuthorizePath = "/ui/oauth/authorize"
	TokenPath     = "/oauth/token"
	RegisterPath  = "/oauth/register"
	RevokePath    = "/oauth/revoke"
)

// Server is the authorization server.
type Server struct {
	p       fosite.OAuth2Provider
	store   *store
	clients *clients
	now     func() time.Time
}

// New returns a Server over cfg.Store.
func New(cfg Config) *Server {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	cl := newClients(cfg.Store, cfg.AllowPrivateMetadata)
	st := &store{st: cfg.Store, clients: cl, now: now}
	fc := &fosite.Config{
		AccessTokenLifespan:            AccessLifetime,
		RefreshTokenLifespan:           RefreshLifetime,
		AuthorizeCodeLifespan:          CodeLifetime,
		EnforcePKCE:                    true,
		EnforcePKCEForPublicClients:    true,
		EnablePKCEPlainChallengeMethod: false,
		// Every grant gets a refresh token, not only one asking for
		// offline_access: hosts refresh rather than ask the user again.
		RefreshTokenScopes: []string{},
		ScopeStrategy:      fosite.ExactScopeStrategy,
		// The audience is the RFC 8707 resource, checked by quire
		// (checkResource), not fosite's "audience" parameter.
		AudienceMatchingStrategy: func(_ []string, needle []string) error {
			for _, n := range needle {
				if !strings.HasSuffix(n, "/mcp") {
					return fosite.ErrInvalidRequest.WithHintf("Unknown audience %q.", n)
				}
			}
			return nil
		},
		// What the token endpoint checks a code's exchange against.
		SanitationWhiteList:   []string{"redirect_uri", "code_challenge", "code_challenge_method"},
		RedirectSecureChecker: func(_ context.Context, u *url.URL) bool { return checkRedirect(u.String()) == nil },
	}
	p := compose.Compose(fc, st, strategy{now: now},
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2TokenIntrospectionFactory,
		compose.OAuth2TokenRevocationFactory,
		compose.OAuth2PKCEFactory,
	)
	return &Server{p: p, store: st, clients: cl, now: now}
}

// AuthServerMetadata is the RFC 8414 metadata.
type AuthServerMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint"`
	TokenEndpoint                              string   `json:"token_endpoint"`
	RegistrationEndpoint                       string   `json:"registration_endpoint"`
	RevocationEndpoint                         string   `json:"revocation_endpoint"`
	ScopesSupported                            []string `json:"scopes_supported"`
	ResponseTypesSupported                     []string `json:"response_types_supported"`
	ResponseModesSupported                     []string `json:"response_modes_supported"`
	GrantTypesSupported                        []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported     []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocumentSupported          bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported"`
}

// Metadata is the server's metadata when quire is reached at issuer (an
// origin: scheme and host).
func (s *Server) Metadata(issuer string) AuthServerMetadata {
	return AuthServerMetadata{
		Issuer:                                 issuer,
		AuthorizationEndpoint:                  issuer + AuthorizePath,
		TokenEndpoint:                          issuer + TokenPath,
		RegistrationEndpoint:                   issuer + RegisterPath,
		RevocationEndpoint:                     issuer + RevokePath,
		ScopesSupported:                        []string(scopes),
		ResponseTypesSupported:                 []string{"code"},
		ResponseModesSupported:                 []string{"query"},
		GrantTypesSupported:                    []string(grantTypes),
		TokenEndpointAuthMethodsSupported:      []string{"none"},
		RevocationEndpointAuthMethodsSupported: []string{"none"},
		CodeChallengeMethodsSupported:          []string{"S256"},
		ClientIDMetadataDocumentSupported:      true,
	}
}

// errInvalidTarget is RFC 8707's error for a resource quire is not.
func errInvalidTarget(resource string) *fosite.RFC6749Error {
	return &fosite.RFC6749Error{
		ErrorField:       "invalid_target",
		DescriptionField: "The requested resource is invalid, unknown, or malformed.",
		HintField:        "This server issues tokens for its MCP endpoint only; resource " + resource + " is not it.",
		CodeField:        http.StatusBadRequest,
	}
}

// checkResource compares the resource parameters of form with the one
// resource tokens may be for; none given means that one.
func checkResource(form url.Values, resource string) error {
	for _, r := range form["resource"] {
		if strings.TrimSuffix(r, "/") != resource {
			return errInvalidTarget(r)
		}
	}
	return nil
}

// Token serves the token endpoint: a code or a refresh token for tokens
// of resource (the URL of /mcp as the client reaches it).
func (s *Server) Token(w http.ResponseWriter, r *http.Request, resource string) {
	ctx := r.Context()
	ar, err := s.p.NewAccessRequest(ctx, r, &fosite.DefaultSession{})
	if err == nil {
		err = checkResource(ar.GetRequestForm(), resource)
	}
	if err == nil {
		for _, a := range ar.GetRequestedAudience() {
			if a != resource {
				err = errInvalidTarget(resource)
			}
		}
	}
	if err != nil {
		s.p.WriteAccessError(ctx, w, ar, err)
		return
	}
	resp, err := s.p.NewAccessResponse(ctx, ar)
	if err != nil {
		s.p.WriteAccessError(ctx, w, ar, err)
		return
	}
	s.p.WriteAccessResponse(ctx, w, ar, resp)
}

// Revoke serves the revocation endpoint (RFC 7009): the token, and with a
// refresh token its grant's other tokens, stop working.
func (s *Server) Revoke(w http.ResponseWriter, r *http.Request) {
	err := s.p.NewRevocationRequest(r.Context(), r)
	s.p.WriteRevocationResponse(r.Context(), w, err)
}

// Register serves Dynamic Client Registration (RFC 7591): 201 with the
// client's metadata, or 400 with an RFC 7591 error.
func (s *Server) Register(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	var md Metadata
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxMetadataDoc))
	if err := dec.Decode(&md); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata", "error_description": "the body must be a JSON object of client metadata: " + err.Error()})
		return
	}
	out, err := s.clients.register(r.Context(), md)
	var me *errMetadata
	switch {
	case errors.As(err, &me):
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": me.code, "error_description": me.msg})
	case err != nil:
		status := http.StatusInternalServerError
		if quire.ErrorCode(err) == quire.EUNAVAILABLE || quire.ErrorCode(err) == quire.ENOSPACE || quire.ErrorCode(err) == quire.ECONFLICT {
			status = http.StatusServiceUnavailable
		}
		writeJSON(w, status, map[string]string{"error": "server_error", "error_description": "the client could not be registered; retry"})
	default:
		writeJSON(w, http.StatusCreated, out)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Grant returns the grant an access token of resource belongs to; a
// token that is not one, expired, revoked, or for another resource is
// EUNAUTHORIZED.
func (s *Server) Grant(ctx context.Context, token, resource string) (*quire.OAuthGrant, error) {
	unauthorized := quire.Errorf(quire.EUNAUTHORIZED, "missing or invalid credential")
	if !strings.HasPrefix(token, quire.OAuthAccessPrefix) {
		return nil, unauthorized
	}
	use, ar, err := s.p.IntrospectToken(ctx, token, fosite.AccessToken, &fosite.DefaultSession{})
	var rfc *fosite.RFC6749Error
	if errors.As(err, &rfc) && rfc.CodeField >= 500 {
		return nil, err
	}
	if err != nil || use != fosite.AccessToken || !ar.GetGrantedAudience().Has(resource) {
		return nil, unauthorized
	}
	g, err := s.store.st.OAuthGrant(ctx, ar.GetID())
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return nil, unauthorized
	}
	return g, err
}

// IsToken reports whether token is one of the server's access tokens
// (by its form, not whether it is valid).
func IsToken(token string) bool { return strings.HasPrefix(token, quire.OAuthAccessPrefix) }
