package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	lru "github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/ory/fosite"
	"github.com/quire/quire"
	"github.com/quire/quire/webhook"
)

// client is an OAuth client as fosite sees it: always public (a host on
// a user's machine or a hosted agent keeps no secret quire could trust),
// the authorization code and refresh grants only, scopes read and write.
type client struct {
	id           string
	name         string
	redirectURIs []string
}

func (c *client) GetID() string                      { return c.id }
func (c *client) GetHashedSecret() []byte            { return nil }
func (c *client) GetRedirectURIs() []string          { return c.redirectURIs }
func (c *client) GetGrantTypes() fosite.Arguments    { return grantTypes }
func (c *client) GetResponseTypes() fosite.Arguments { return fosite.Arguments{"code"} }
func (c *client) GetScopes() fosite.Arguments        { return scopes }
func (c *client) IsPublic() bool                     { return true }
func (c *client) GetAudience() fosite.Arguments      { return nil }

// Name is what the consent page calls the client.
func (c *client) Name() string { return c.name }

var (
	grantTypes = fosite.Arguments{"authorization_code", "refresh_token"}
	scopes     = fosite.Arguments{string(quire.ScopeRead), string(quire.ScopeWrite)}
)

// Limits on what a client may register or publish.
const (
	maxRedirectURIs = 10
	maxNameLen      = 200
	maxURILen       = 2000
	maxMetadataDoc  = 64 << 10
)

// clients finds clients: registered ones in the store, and those whose
// id is the https URL of a Client ID Metadata Document by fetching it
// (cached for a few minutes).
type clients struct {
	st     quire.OAuthStore
	http   *http.Client
	cached *lru.LRU[string, *client]
}

func newClients(st quire.OAuthStore, allowPrivate bool) *clients {
	c := &clients{st: st, cached: lru.NewLRU[string, *client](1024, nil, 5*time.Minute)}
	control := func(network, address string, _ syscall.RawConn) error {
		if allowPrivate {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", webhook.ErrRefused, address)
		}
		if why := webhook.Refused(ap.Addr()); why != "" {
			return fmt.Errorf("%w: %s is %s", webhook.ErrRefused, ap.Addr(), why)
		}
		return nil
	}
	// The webhook sender's guard: the address is checked after DNS, on
	// the address dialed, so a name resolving to a private address (or
	// rebinding to one) is refused; no proxy, no redirects.
	d := &net.Dialer{Timeout: 5 * time.Second, Control: control}
	c.http = &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           d.DialContext,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: 5 * time.Second,
		},
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

// isMetadataID reports whether id names a Client ID Metadata Document.
func isMetadataID(id string) bool { return strings.HasPrefix(id, "https://") }

func (cs *clients) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	if isMetadataID(id) {
		return cs.metadataClient(ctx, id)
	}
	c, err := cs.st.OAuthClient(ctx, id)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &client{id: c.ID, name: c.Name, redirectURIs: c.RedirectURIs}, nil
}

// Metadata is a client's metadata, as a Client ID Metadata Document or a
// registration request carries it (RFC 7591 §2).
type Metadata struct {
	ClientID                string   `json:"client_id,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
}

// metadataClient fetches and checks the Client ID Metadata Document at
// id (draft-ietf-oauth-client-id-metadata-document): its client_id must
// be id itself, and its client a public one.
func (cs *clients) metadataClient(ctx context.Context, id string) (*client, error) {
	if c, ok := cs.cached.Get(id); ok {
		return c, nil
	}
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" || u.Path == "" || u.Path == "/" || len(id) > maxURILen {
		return nil, fmt.Errorf("%w: client_id %q is not a Client ID Metadata Document URL", fosite.ErrNotFound, id)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", fosite.ErrNotFound, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := cs.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: fetch client metadata: %w", fosite.ErrNotFound, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: client metadata answered %s", fosite.ErrNotFound, resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, fmt.Errorf("%w: client metadata is %q, not application/json", fosite.ErrNotFound, mt)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataDoc+1))
	if err != nil || len(b) > maxMetadataDoc {
		return nil, fmt.Errorf("%w: client metadata unreadable or over %d bytes", fosite.ErrNotFound, maxMetadataDoc)
	}
	var md Metadata
	if err := json.Unmarshal(b, &md); err != nil {
		return nil, fmt.Errorf("%w: client metadata: %w", fosite.ErrNotFound, err)
	}
	if md.ClientID != id {
		return nil, fmt.Errorf("%w: client metadata names client_id %q, not its own URL", fosite.ErrNotFound, md.ClientID)
	}
	if err := md.check(); err != nil {
		return nil, fmt.Errorf("%w: client metadata: %w", fosite.ErrNotFound, err)
	}
	c := &client{id: id, name: md.ClientName, redirectURIs: md.RedirectURIs}
	if c.name == "" {
		c.name = u.Host
	}
	cs.cached.Add(id, c)
	return c, nil
}

// errMetadata is a client's metadata breaking a rule; its message is
// for the client.
type errMetadata struct {
	code string // invalid_redirect_uri or invalid_client_metadata
	msg  string
}

func (e *errMetadata) Error() string { return e.msg }

// check applies quire's rules to client metadata: at least one redirect
// URI, each https, http to a loopback address (RFC 8252 §7.3), or a
// private-use scheme (§7.1); a public client (no secret) of the code and
// refresh grants.
func (md *Metadata) check() error {
	if len(md.RedirectURIs) == 0 || len(md.RedirectURIs) > maxRedirectURIs {
		return &errMetadata{"invalid_redirect_uri", fmt.Sprintf("redirect_uris must list 1 to %d URIs", maxRedirectURIs)}
	}
	for _, r := range md.RedirectURIs {
		if err := checkRedirect(r); err != nil {
			return &errMetadata{"invalid_redirect_uri", err.Error()}
		}
	}
	if len(md.ClientName) > maxNameLen || len(md.ClientURI) > maxURILen {
		return &errMetadata{"invalid_client_metadata", "client_name or client_uri too long"}
	}
	if m := md.TokenEndpointAuthMethod; m != "" && m != "none" {
		return &errMetadata{"invalid_client_metadata", fmt.Sprintf("token_endpoint_auth_method %q: quire's clients are public, use \"none\" with PKCE", m)}
	}
	for _, g := range md.GrantTypes {
		if !slices.Contains(grantTypes, g) {
			return &errMetadata{"invalid_client_metadata", fmt.Sprintf("grant_types: %q is not supported (authorization_code, refresh_token)", g)}
		}
	}
	for _, r := range md.ResponseTypes {
		if r != "code" {
			return &errMetadata{"invalid_client_metadata", fmt.Sprintf("response_types: %q is not supported (code)", r)}
		}
	}
	return nil
}

func checkRedirect(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || len(raw) > maxURILen {
		return fmt.Errorf("redirect URI %q is not an absolute URI", raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("redirect URI %q has a fragment", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("redirect URI %q has no host", raw)
		}
	case "http":
		if !fosite.IsLocalhost(u) {
			return fmt.Errorf("redirect URI %q: http only to a loopback address; use https", raw)
		}
	case "javascript", "data", "file", "vbscript", "blob", "about":
		return fmt.Errorf("redirect URI %q: scheme %s is not allowed", raw, u.Scheme)
	}
	return nil
}

// Registered is a registration's answer (RFC 7591 §3.2.1).
type Registered struct {
	Metadata
	ClientIDIssuedAt int64 `json:"client_id_issued_at"`
}

// register makes a client of md (Dynamic Client Registration).
func (cs *clients) register(ctx context.Context, md Metadata) (*Registered, error) {
	if md.ClientID != "" {
		return nil, &errMetadata{"invalid_client_metadata", "client_id is assigned by the server"}
	}
	if err := md.check(); err != nil {
		return nil, err
	}
	c := &quire.OAuthClient{Name: md.ClientName, URI: md.ClientURI, RedirectURIs: md.RedirectURIs}
	if c.Name == "" {
		c.Name = "unnamed client"
	}
	if err := cs.st.CreateOAuthClient(ctx, c); err != nil {
		return nil, err
	}
	out := &Registered{Metadata: md, ClientIDIssuedAt: c.CreatedAt.Unix()}
	out.ClientID = c.ID
	out.ClientName = c.Name
	out.GrantTypes = []string(grantTypes)
	out.ResponseTypes = []string{"code"}
	out.TokenEndpointAuthMethod = "none"
	if out.Scope == "" {
		out.Scope = "read write"
	}
	return out, nil
}
