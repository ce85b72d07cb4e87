package httpapi

import (
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// MCP's Streamable HTTP transport at /mcp (the mcp package serves it):
// the same bearer tokens as /v1, authenticated here, the request limit
// and access log as every route; a 401 carries WWW-Authenticate, as MCP's
// authorization spec asks, so a host knows to send a token.

// mcpRoutes mounts handler, which reads the caller with
// app.PrincipalFrom. GET opens the session's event stream, DELETE ends
// the session.
func (s *Server) mcpRoutes(r *gin.Engine, auth []gin.HandlerFunc, handler http.Handler) {
	serve := func(c *gin.Context) {
		c.Writer.Header().Del("WWW-Authenticate")
		if c.Request.Method != http.MethodPost && c.GetHeader("Mcp-Session-Id") == "" {
			s.fail(c, quire.Errorf(quire.EINVALID, "%s /mcp names a session: send the Mcp-Session-Id header initialize answered with", c.Request.Method))
			return
		}
		p := principal(c)
		handler.ServeHTTP(c.Writer, c.Request.WithContext(app.WithPrincipal(c.Request.Context(), p)))
	}
	s.oauthMetaRoutes(r)
	chain := append([]gin.HandlerFunc{s.challengeBearer}, auth...)
	chain = append(chain, serve)
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		r.Handle(m, "/mcp", chain...)
	}
}

// challengeBearer sets the challenge a 401 answers with, naming the
// protected resource metadata (RFC 9728 §5.1, oauthmeta.go); a request
// that authenticates has it removed before MCP answers.
func (s *Server) challengeBearer(c *gin.Context) {
	c.Header("WWW-Authenticate", `Bearer realm="quire", resource_metadata="`+s.resourceMetadataURL(c.Request)+`"`)
}

// mcpAPIRoutes document /mcp.
var mcpAPIRoutes = []apiRoute{
	route("POST", "/mcp", "mcp", "Model Context Protocol, Streamable HTTP: JSON-RPC requests (docs/mcp.md); 401 with WWW-Authenticate without a valid bearer token", ok(200, ""), mcpTransport(400), fails(401), mcpTransport(404), mcpTransport(413)),
	route("GET", "/mcp", "mcp", "Model Context Protocol: the session's server-sent event stream (Mcp-Session-Id)", text(200, "text/event-stream"), mcpTransport(400), fails(401), mcpTransport(404)),
	route("DELETE", "/mcp", "mcp", "Model Context Protocol: end the session named by Mcp-Session-Id", ok(204, ""), mcpTransport(400), fails(401), mcpTransport(404)),
	route("GET", protectedResourcePath, "mcp", "OAuth protected resource metadata of /mcp (RFC 9728): the resource, its authorization server, bearer methods and scopes; public", public(), ok(200, "ProtectedResource")),
	route("GET", protectedResourcePath+"/mcp", "mcp", "OAuth protected resource metadata of /mcp at the RFC 9728 path for the resource /mcp (the same document)", public(), ok(200, "ProtectedResource")),
}

// mcpTransport documents a status the MCP SDK's transport answers itself:
// a JSON-RPC error object, or a line of plain text for a request it cannot
// read as JSON-RPC at all (no body, a bad batch, an unknown session, a
// body over the limit).
func mcpTransport(status int) routeOpt {
	return func(op *openapi3.Operation, _ *docBuilder) {
		op.AddResponse(status, openapi3.NewResponse().WithDescription(http.StatusText(status)).WithContent(openapi3.Content{
			"application/json": openapi3.NewMediaType().WithSchema(&openapi3.Schema{}),
			"text/plain":       openapi3.NewMediaType().WithSchema(&openapi3.Schema{Type: &openapi3.Types{"string"}}),
		}))
	}
}
