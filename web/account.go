package web

import (
	"net/http"
	"sort"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// The account page: the user's sessions (revoke) and API keys (create,
// with the token shown once; rotate; revoke), through the same use cases
// as /v1/auth/sessions and /v1/api-keys.

func (u *UI) accountRoutes() {
	m := u.mux
	m.HandleFunc("GET "+Prefix+"account", u.authed(u.accountPage))
	m.HandleFunc("POST "+Prefix+"account/sessions/{id}/revoke", u.authed(u.revokeSession))
	m.HandleFunc("POST "+Prefix+"account/keys", u.authed(u.createKey))
	m.HandleFunc("POST "+Prefix+"account/keys/{id}/rotate", u.authed(u.rotateKey))
	m.HandleFunc("POST "+Prefix+"account/keys/{id}/revoke", u.authed(u.revokeKey))
}

type sessionRow struct {
	*quire.Session
	Current bool
}

type accountView struct {
	User     *quire.User
	Sessions []sessionRow
	Keys     []*quire.APIKey
	// Apps are the OAuth applications the user allowed (web/oauth.go).
	Apps     []*quire.OAuthGrant
	Projects []*quire.Project
	// NewToken is a key's token, shown on the page that made it and
	// never again.
	NewToken, NewKeyName string
	CSRF                 string
}

func (u *UI) accountPage(w http.ResponseWriter, r *http.Request, s *session) {
	u.showAccount(w, r, s, http.StatusOK, nil)
}

func (u *UI) showAccount(w http.ResponseWriter, r *http.Request, s *session, status int, made *app.NewKey) {
	ctx := r.Context()
	v := accountView{User: s.p.User, CSRF: s.csrf}
	if made != nil {
		v.NewToken, v.NewKeyName = made.Token, made.Key.Name
	}
	sessions, err := u.app.Sessions(ctx, s.p, "")
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	for _, ss := range sessions {
		v.Sessions = append(v.Sessions, sessionRow{Session: ss, Current: ss.ID == s.p.SessionID})
	}
	sort.Slice(v.Sessions, func(i, j int) bool { return v.Sessions[i].CreatedAt.After(v.Sessions[j].CreatedAt) })
	if v.Keys, err = u.app.APIKeys(ctx, s.p, false); err != nil {
		u.fail(w, r, s, err)
		return
	}
	if v.Apps, err = u.app.Applications(ctx, s.p); err != nil {
		u.fail(w, r, s, err)
		return
	}
	if v.Projects, err = u.app.Projects(ctx, s.p); err != nil {
		u.fail(w, r, s, err)
		return
	}
	// A page holding a fresh token must not be cached anywhere.
	w.Header().Set("Cache-Control", "no-store")
	u.render(w, r, s, status, "account", "Account", v)
}

func (u *UI) revokeSession(w http.ResponseWriter, r *http.Request, s *session) {
	if err := u.app.RevokeSession(r.Context(), s.p, r.PathValue("id")); err != nil {
		u.fail(w, r, s, err)
		return
	}
	if r.PathValue("id") == s.p.SessionID {
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: Prefix, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: u.secure(r)})
		http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, Prefix+"account", http.StatusSeeOther)
}

// createKey answers with the account page itself (not a redirect), so
// the token appears once and is in no URL or history entry.
func (u *UI) createKey(w http.ResponseWriter, r *http.Request, s *session) {
	r.ParseForm()
	nk, err := u.app.CreateAPIKey(r.Context(), s.p, app.KeyEdit{
		Name:       strings.TrimSpace(r.PostForm.Get("name")),
		Scope:      quire.Scope(r.PostForm.Get("scope")),
		ProjectIDs: r.PostForm["project"],
	})
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	u.showAccount(w, r, s, http.StatusOK, nk)
}

func (u *UI) rotateKey(w http.ResponseWriter, r *http.Request, s *session) {
	nk, err := u.app.RotateAPIKey(r.Context(), s.p, r.PathValue("id"))
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	u.showAccount(w, r, s, http.StatusOK, nk)
}

func (u *UI) revokeKey(w http.ResponseWriter, r *http.Request, s *session) {
	if err := u.app.DeleteAPIKey(r.Context(), s.p, r.PathValue("id")); err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, Prefix+"account", http.StatusSeeOther)
}
