package httpapi

import (
	"net"
	"net/http"
	"net/netip"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// request is what the API keeps of one request, in the request's context:
// made once by begin, read by the middleware and handlers after it. One
// value, where the id, the principal and the asset in gin's Keys, and the
// read scope, the InRequest mark and a copy of the *http.Request per
// mark, were eight allocations on the hot path.
type request struct {
	quire.RequestContext
	id        string
	principal *quire.Principal // set by authenticate
	handle    *app.Handle      // set by openAsset
}

type requestKey struct{}

// Value answers the request itself, and what quire.RequestContext does.
func (r *request) Value(key any) any {
	if _, ok := key.(requestKey); ok {
		return r
	}
	return r.RequestContext.Value(key)
}

// requestOf is c's request, or nil for a context begin did not make.
func requestOf(c *gin.Context) *request {
	r, _ := c.Request.Context().Value(requestKey{}).(*request)
	return r
}

// requestIDOf is the id of c's request, or "" when it has none.
func requestIDOf(c *gin.Context) string {
	if r := requestOf(c); r != nil {
		return r.id
	}
	return ""
}

// begin starts every request: its id (the client's X-Request-ID when
// sane, or a new one), echoed in the answer; its trace, when the tracer
// records no span (continueTrace; otelgin's middleware makes a recorded
// one after this); and its context, made once.
func (s *Server) begin(c *gin.Context) {
	// The header's canonical spelling: net/http would make it again
	// for every request (a copy: "X-Request-Id" is not one it interns).
	const header = "X-Request-Id"
	id := headerValue(c.Request.Header, header)
	if len(id) == 0 || len(id) > 128 || !printable(id) {
		id = newRequestID()
	}
	c.Writer.Header()[header] = []string{id}
	ctx := c.Request.Context()
	if s.tracer != nil && !s.spansRecorded && traced(c.FullPath()) {
		ctx = s.continueTrace(ctx, c.Request.Header)
	}
	m := c.Request.Method
	c.Request = c.Request.WithContext(&request{
		// A write's background work waits for its answer.
		RequestContext: quire.RequestContext{Context: ctx, Answered: m != http.MethodGet && m != http.MethodHead},
		id:             id,
	})
	c.Next()
}

// principal returns the authenticated caller.
func principal(c *gin.Context) *quire.Principal {
	return requestOf(c).principal
}

// handle is the request's hold on its asset (openAsset).
func handle(c *gin.Context) *app.Handle {
	return requestOf(c).handle
}

// clientIP is c.ClientIP(), the address a request limit counts against.
// Where no proxy is trusted that is the peer's address, which net/http
// has already written in canonical form in RemoteAddr; gin parses and
// prints it again, an allocation on every request. An IPv4 address is
// its own canonical form (netip refuses any other spelling); anything
// else (IPv6, a RemoteAddr that is not host:port) goes to gin as before.
func (s *Server) clientIP(c *gin.Context) string {
	if len(s.trusted) == 0 {
		if host, _, err := net.SplitHostPort(c.Request.RemoteAddr); err == nil {
			if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
				return host
			}
		}
	}
	return c.ClientIP()
}
