package web

import (
	"net/http"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/oauth"
)

// The OAuth consent page (package oauth is the authorization server):
// a host sends the user's browser here; signed in (the sign-in page
// comes back here after), the user sees who asks and where the answer
// goes, chooses read or write, and allows or denies. The form is the
// UI's like any other: the session cookie, its form token, the
// cross-origin check. Approved grants are listed on the account page as
// applications, revoked there.

func (u *UI) oauthRoutes() {
	if u.oauth == nil {
		return
	}
	u.mux.HandleFunc("GET "+oauth.AuthorizePath, u.authed(u.authorizePage))
	u.mux.HandleFunc("POST "+oauth.AuthorizePath, u.authed(u.authorize))
	u.mux.HandleFunc("POST "+Prefix+"account/applications/{id}/revoke", u.authed(u.revokeApplication))
}

type consentView struct {
	ClientName, ClientID string
	Registered           bool
	RedirectHost         string
	Scope                quire.Scope
	Hidden               map[string][]string
	User                 *quire.User
	CSRF                 string
}

// resource is the URL of /mcp as the browser reached quire: what the
// tokens of this consent will be for.
func (u *UI) resource(r *http.Request) string {
	scheme := "http"
	if u.secure(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/mcp"
}

// parseAuthorize reads the authorization request of r, answering
// itself when it is not one to show: a page for an unknown client or
// redirect URI (nothing is sent to a URI quire cannot trust), a
// redirect with the error otherwise.
func (u *UI) parseAuthorize(w http.ResponseWriter, r *http.Request, s *session) *oauth.Request {
	q, err := u.oauth.ParseAuthorize(r.Context(), r, u.resource(r))
	if q == nil {
		u.renderError(w, r, s, http.StatusBadRequest, "This application's sign-in request cannot be used: "+oauth.ErrorText(err))
		return nil
	}
	if err != nil {
		u.oauth.WriteError(r.Context(), w, q, err)
		return nil
	}
	if err := s.p.CheckAccount(); err != nil {
		u.fail(w, r, s, err)
		return nil
	}
	return q
}

func (u *UI) authorizePage(w http.ResponseWriter, r *http.Request, s *session) {
	q := u.parseAuthorize(w, r, s)
	if q == nil {
		return
	}
	// The form's answer is a redirect to the client: the policy's
	// form-action must allow its origin, or the browser stops there.
	h := w.Header()
	h.Set("Content-Security-Policy", strings.Replace(h.Get("Content-Security-Policy"), "form-action 'self'", "form-action 'self' "+formSource(q), 1))
	v := consentView{
		ClientName: q.ClientName, ClientID: q.ClientID, Registered: q.Registered,
		RedirectHost: q.RedirectURI.Host, Scope: q.Scope, Hidden: q.Hidden(),
		User: s.p.User, CSRF: s.csrf,
	}
	if v.RedirectHost == "" {
		v.RedirectHost = q.RedirectURI.Scheme + ":"
	}
	u.render(w, r, s, http.StatusOK, "oauth", "Authorize "+q.ClientName, v)
}

// formSource is the CSP source of q's redirect URI: its origin, or its
// scheme for a private-use one (RFC 8252 §7.1).
func formSource(q *oauth.Request) string {
	if s := q.RedirectURI.Scheme; s != "http" && s != "https" {
		return s + ":"
	}
	return q.RedirectOrigin()
}

func (u *UI) authorize(w http.ResponseWriter, r *http.Request, s *session) {
	q := u.parseAuthorize(w, r, s)
	if q == nil {
		return
	}
	if r.PostFormValue("decision") != "approve" {
		u.oauth.Deny(r.Context(), w, q)
		return
	}
	u.oauth.Approve(r.Context(), w, q, s.p.User.ID, quire.Scope(r.PostFormValue("access")))
}

func (u *UI) revokeApplication(w http.ResponseWriter, r *http.Request, s *session) {
	if err := u.app.RevokeApplication(r.Context(), s.p, r.PathValue("id")); err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, Prefix+"account", http.StatusSeeOther)
}
