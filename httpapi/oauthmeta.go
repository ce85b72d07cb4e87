package httpapi

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/gin-gonic/gin"
)

// OAuth protected resource metadata (RFC 9728), as the MCP authorization
// spec asks of an MCP server: a host that meets /mcp's 401 follows the
// challenge's resource_metadata to this document, which names the
// resource (/mcp) and its authorization server (quire's own origin).
// The document is public: it says nothing a 401 does not.

// protectedResourcePath is the metadata's well-known path for the
// resource /mcp (RFC 9728 §3.1: the well-known segment inserted before
// the resource's path); the path without /mcp is served too, for hosts
// that look at the origin.
const protectedResourcePath = "/.well-known/oauth-protected-resource"

// ProtectedResource is the RFC 9728 metadata of /mcp.
type ProtectedResource struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ScopesSupported        []string `json:"scopes_supported"`
	ResourceName           string   `json:"resource_name"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
}

// oauthMetaRoutes mounts the metadata document.
func (s *Server) oauthMetaRoutes(r *gin.Engine) {
	serve := func(c *gin.Context) {
		origin := s.origin(c.Request)
		c.Header("Cache-Control", "public, max-age=3600")
		c.Header("Access-Control-Allow-Origin", "*")
		c.JSON(http.StatusOK, ProtectedResource{
			Resource:               origin + "/mcp",
			AuthorizationServers:   []string{origin},
			BearerMethodsSupported: []string{"header"},
			ScopesSupported:        []string{"read", "write"},
			ResourceName:           "quire",
		})
	}
	r.GET(protectedResourcePath, serve)
	r.GET(protectedResourcePath+"/mcp", serve)
}

// resourceMetadataURL is where a 401 on /mcp points a host.
func (s *Server) resourceMetadataURL(r *http.Request) string {
	return s.origin(r) + protectedResourcePath + "/mcp"
}

// origin is the scheme and host the client reached quire at: https when
// the connection is TLS, or when a trusted proxy (--trusted-proxies)
// says so in X-Forwarded-Proto; the host from the request (a proxy
// passes the client's Host on).
func (s *Server) origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || (s.fromTrustedProxy(r) && strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https")) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// fromTrustedProxy reports whether r's peer is one of Config.TrustedProxies.
func (s *Server) fromTrustedProxy(r *http.Request) bool {
	if len(s.trusted) == 0 {
		return false
	}
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	addr := peer.Addr().Unmap()
	for _, t := range s.trusted {
		if p, err := netip.ParsePrefix(t); err == nil && p.Contains(addr) {
			return true
		}
		if a, err := netip.ParseAddr(t); err == nil && a.Unmap() == addr {
			return true
		}
	}
	return false
}
