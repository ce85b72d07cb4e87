// Package web is quire's browser UI: server-rendered html/template pages
// under /ui/, with their CSS and the little JavaScript they need embedded
// in the binary. It is a door like httpapi: it decodes a request, calls
// one use case in app (the same sign-in, sessions and access rules the
// API uses) and renders the answer; it holds no rule of its own and never
// reaches a store.
package web

import (
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"

	"github.com/quire/quire/app"
	"github.com/quire/quire/oauth"
	"github.com/quire/quire/pipeline"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the UI is mounted; every page lives under it.
const Prefix = "/ui/"

// Config is what the UI needs besides the use cases.
type Config struct {
	// TrustedProxies are the addresses or CIDRs of reverse proxies whose
	// X-Forwarded-Proto and X-Forwarded-For headers are believed (the
	// same list as httpapi.Config.TrustedProxies): behind one that says
	// https, the session cookie is Secure.
	TrustedProxies []string
	Logger         *slog.Logger
	// Pipeline admits every signed-in request (the API's, so a browser
	// and a script share one request budget); one without limits over
	// the app when nil.
	Pipeline *pipeline.Pipeline
	// OAuth, when set, is the authorization server whose consent page
	// the UI serves (web/oauth.go).
	OAuth *oauth.Server
}

// UI serves the pages.
type UI struct {
	app     *app.App
	log     *slog.Logger
	pipe    *pipeline.Pipeline
	trusted []netip.Prefix
	pages   map[string]*template.Template
	mux     *http.ServeMux
	handler http.Handler
	oauth   *oauth.Server
}

// New builds the UI over the use cases of a.
func New(a *app.App, cfg Config) (*UI, error) {
	u := &UI{app: a, log: cfg.Logger, mux: http.NewServeMux(), pipe: cfg.Pipeline, oauth: cfg.OAuth}
	if u.log == nil {
		u.log = slog.New(slog.DiscardHandler)
	}
	if u.pipe == nil {
		u.pipe = pipeline.New(pipeline.Config{App: a, Logger: u.log})
	}
	for _, t := range cfg.TrustedProxies {
		if p, err := netip.ParsePrefix(t); err == nil {
			u.trusted = append(u.trusted, p.Masked())
		} else if ad, err := netip.ParseAddr(t); err == nil {
			u.trusted = append(u.trusted, netip.PrefixFrom(ad.Unmap(), ad.Unmap().BitLen()))
		}
	}
	if err := u.parseTemplates(); err != nil {
		return nil, err
	}
	u.routes()
	// net/http's cross-origin protection refuses a state-changing request
	// a browser marks as cross-site (Sec-Fetch-Site, Origin) with 403,
	// before the per-session token is even checked (csrf.go).
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.renderError(w, r, nil, http.StatusForbidden, "This request came from another site and was refused.")
	}))
	u.handler = cop.Handler(u.mux)
	return u, nil
}

// ServeHTTP serves one request under Prefix, with the security headers
// every UI response carries.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// No inline script or style anywhere: scripts and styles come from
	// /ui/static only; user content cannot run even if it escaped.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	if r.Body != nil {
		// Forms are small; an upload is the largest body the UI takes.
		r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
	}
	u.handler.ServeHTTP(w, r)
}

func (u *UI) routes() {
	m := u.mux
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix(Prefix+"static/", http.FileServerFS(static))
	m.Handle("GET "+Prefix+"static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	}))
	m.HandleFunc("GET "+Prefix+"highlight.css", u.highlightCSS)
	m.HandleFunc("GET "+Prefix+"login", u.loginPage)
	m.HandleFunc("POST "+Prefix+"login", u.login)
	m.HandleFunc("POST "+Prefix+"logout", u.authed(u.logout))

	m.HandleFunc("GET "+Prefix+"p/{project}/{kind}/{asset}", u.authed(u.assetPage))
	m.HandleFunc("GET "+Prefix+"p/{project}/{kind}/{asset}/diff", u.authed(u.diffPage))
	m.HandleFunc("GET "+Prefix+"p/{project}/{kind}/{asset}/v/{n}", u.authed(u.versionPage))
	m.HandleFunc("GET "+Prefix+"p/{project}/skills/{asset}/v/{n}/f/{path...}", u.authed(u.filePage))
	m.HandleFunc("GET "+Prefix+"p/{project}/skills/{asset}/v/{n}/raw/{path...}", u.authed(u.rawFile))
	m.HandleFunc("GET "+Prefix+"p/{project}/skills/{asset}/v/{n}/zip", u.authed(u.zipDownload))
	u.projectRoutes()
	u.editRoutes()
	u.accountRoutes()
	u.playRoutes()
	u.labelRoutes()
	u.reviewRoutes()
	u.oauthRoutes()
	m.HandleFunc(Prefix, u.authed(func(w http.ResponseWriter, r *http.Request, s *session) {
		u.renderError(w, r, s, http.StatusNotFound, "There is no page here.")
	}))
}

// clientAddr is the address the login throttle counts against: the
// peer's, or, from a trusted proxy, the right-most address in
// X-Forwarded-For that is not itself a trusted proxy.
func (u *UI) clientAddr(r *http.Request) string {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	addr := peer.Addr().Unmap()
	if !u.isTrusted(addr) {
		return addr.String()
	}
	hops := strings.Split(r.Header.Get("X-Forwarded-For"), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		addr = a.Unmap()
		if !u.isTrusted(addr) {
			break
		}
	}
	return addr.String()
}

func (u *UI) isTrusted(a netip.Addr) bool {
	for _, p := range u.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// secure reports whether the browser reached quire over https: directly
// over TLS, or through a trusted proxy that says so.
func (u *UI) secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil || !u.isTrusted(peer.Addr().Unmap()) {
		return false
	}
	return strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https")
}
