package httpapi

import (
	"context"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/oauth"
)

// quire as the OAuth authorization server of /mcp (package oauth; the
// consent page is web's): its RFC 8414 metadata, the token, registration
// and revocation endpoints, and the bearer check that lets an access
// token in at /mcp and nowhere else. The endpoints answer as OAuth says
// (RFC 6749 §5.2 and RFC 7591 §3.2.2 error objects, not APIError), since
// OAuth clients read those.

// oauthRoutes mounts the endpoints. Registration writes to the store
// without a credential, so it is under the per-address request limit.
func (s *Server) oauthRoutes(r *gin.Engine) {
	if s.oauth == nil {
		return
	}
	r.GET(oauth.MetadataPath, func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=3600")
		c.Header("Access-Control-Allow-Origin", "*")
		c.JSON(http.StatusOK, s.oauth.Metadata(s.origin(c.Request)))
	})
	limited := func(h gin.HandlerFunc) []gin.HandlerFunc {
		if s.pipe.Limited() {
			return []gin.HandlerFunc{s.limitAddress, h}
		}
		return []gin.HandlerFunc{h}
	}
	r.POST(oauth.TokenPath, limited(func(c *gin.Context) {
		c.Header("Access-Control-Allow-Origin", "*")
		s.oauth.Token(c.Writer, c.Request, s.mcpResource(c.Request))
	})...)
	r.POST(oauth.RegisterPath, limited(func(c *gin.Context) {
		c.Header("Access-Control-Allow-Origin", "*")
		s.oauth.Register(c.Writer, c.Request)
	})...)
	r.POST(oauth.RevokePath, limited(func(c *gin.Context) {
		c.Header("Access-Control-Allow-Origin", "*")
		s.oauth.Revoke(c.Writer, c.Request)
	})...)
	// A host running in a browser (the MCP Inspector) registers with a
	// JSON body, which a browser sends only after a CORS preflight.
	for _, p := range []string{oauth.RegisterPath, oauth.TokenPath, oauth.RevokePath} {
		r.OPTIONS(p, preflight)
	}
}

// preflight answers a CORS preflight of the OAuth endpoints: any origin
// may POST (they take no cookie and no credential but their own).
func preflight(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization")
	h.Set("Access-Control-Max-Age", "3600")
	c.Status(http.StatusNoContent)
}

// mcpResource is the RFC 8707 resource /mcp is, as r reached quire.
func (s *Server) mcpResource(r *http.Request) string { return s.origin(r) + "/mcp" }

// authenticateMCP is authenticate for /mcp: an OAuth access token for
// this resource acts as its grant's user within the grant's scope
// (app.GrantPrincipal), admitted through the same pipeline (request
// limit) as every credential; any other credential goes through
// authenticate, as on every route.
func (s *Server) authenticateMCP(c *gin.Context) {
	tok := bearer(c.Request)
	if s.oauth == nil || !oauth.IsToken(tok) || oneAuthorization(c.Request) != nil {
		s.authenticate(c)
		return
	}
	p, err := s.pipe.AdmitWith(c.Request.Context(), s.clientIP(c), func(ctx context.Context) (*quire.Principal, error) {
		g, err := s.oauth.Grant(ctx, tok, s.mcpResource(c.Request))
		if err != nil {
			return nil, err
		}
		return s.app.GrantPrincipal(ctx, g)
	})
	if err != nil {
		s.fail(c, err)
		return
	}
	requestOf(c).principal = p
	c.Next()
}

// oauthAPIRoutes document the authorization server's endpoints.
var oauthAPIRoutes = []apiRoute{
	route("GET", oauth.MetadataPath, "oauth", "OAuth authorization server metadata (RFC 8414): endpoints, PKCE S256, public clients, Client ID Metadata Documents; public", public(), ok(200, "AuthServerMetadata")),
	route("POST", oauth.TokenPath, "oauth", "OAuth token endpoint: an authorization code (with its PKCE verifier) or a refresh token (rotated: the old one stops working) for tokens of /mcp (RFC 8707 resource); public clients, no secret", public(), form("TokenForm"), ok(200, "TokenResponse"), oauthError(400), oauthError(401), fails(429)),
	route("POST", oauth.RegisterPath, "oauth", "Dynamic Client Registration (RFC 7591): a public client with its redirect URIs (https, loopback http, or a private-use scheme)", public(), body("ClientMetadata"), ok(201, "ClientRegistration"), oauthError(400), fails(429)),
	route("OPTIONS", oauth.RegisterPath, "oauth", "CORS preflight: any origin may POST here", public(), ok(204, "")),
	route("OPTIONS", oauth.TokenPath, "oauth", "CORS preflight: any origin may POST here", public(), ok(204, "")),
	route("OPTIONS", oauth.RevokePath, "oauth", "CORS preflight: any origin may POST here", public(), ok(204, "")),
	route("POST", oauth.RevokePath, "oauth", "Token revocation (RFC 7009): the token stops working; a refresh token ends its grant's access tokens too", public(), form("RevocationForm"), ok(200, ""), oauthError(400), oauthError(401), fails(429)),
}

// oauthAPISchemas are the types oauthAPIRoutes name.
var oauthAPISchemas = map[string]any{
	"AuthServerMetadata": oauth.AuthServerMetadata{},
	"ClientMetadata":     oauth.Metadata{},
	"ClientRegistration": oauth.Registered{},
	"TokenForm":          tokenForm{},
	"TokenResponse":      tokenResponse{},
	"RevocationForm":     revocationForm{},
	"OAuthError":         oauthErrorBody{},
}

// tokenForm is the token endpoint's form (documentation only: fosite
// reads it). Its client_id is the registered client's id, or the URL of
// the client's metadata document. Neither it, revocationForm nor
// ClientMetadata is named "…Request": clients send fields quire does not
// list, which OAuth says to ignore, not refuse.
type tokenForm struct {
	GrantType    string `json:"grant_type" openapi:"required"`
	ClientID     string `json:"client_id" openapi:"required"`
	Code         string `json:"code,omitempty"`
	RedirectURI  string `json:"redirect_uri,omitempty"`
	CodeVerifier string `json:"code_verifier,omitempty"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Resource     string `json:"resource,omitempty"`
}

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope" enum:"read,write"`
}

type revocationForm struct {
	Token         string `json:"token" openapi:"required"`
	ClientID      string `json:"client_id" openapi:"required"`
	TokenTypeHint string `json:"token_type_hint,omitempty"`
}

type oauthErrorBody struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description,omitempty"`
}

// form documents a request body of application/x-www-form-urlencoded.
func form(schema string) routeOpt {
	return func(op *openapi3.Operation, b *docBuilder) {
		op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithContent(openapi3.Content{
			"application/x-www-form-urlencoded": openapi3.NewMediaType().WithSchemaRef(b.ref(schema)),
		})}
	}
}

// oauthError documents an OAuth error object answered with status.
func oauthError(status int) routeOpt {
	return func(op *openapi3.Operation, b *docBuilder) {
		op.AddResponse(status, openapi3.NewResponse().WithDescription(http.StatusText(status)).WithJSONSchemaRef(b.ref("OAuthError")))
	}
}
