package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/quire/quire"
)

const (
	// sessionCookie holds the session token app.Login issued: the same
	// session the API accepts as a bearer token, listed and revoked with
	// the others.
	sessionCookie = "quire_session"
	// loginCookie holds the token the sign-in form must echo (there is no
	// session yet to bind one to).
	loginCookie = "quire_login"
	csrfField   = "csrf"
)

// session is a signed-in browser: who it is and the token its forms carry.
type session struct {
	p    *quire.Principal
	csrf string
}

// csrfToken is the form token of a session: a one-way function of the
// session token, so it is stable for the session, the same on every quire
// process, reveals nothing about the cookie, and dies with the session.
func csrfToken(sessionToken string) string {
	sum := sha256.Sum256([]byte("quire web csrf\x00" + sessionToken))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

type authedHandler func(w http.ResponseWriter, r *http.Request, s *session)

// authed resolves the session cookie through app.Authenticate. A browser
// without a valid session is sent to the sign-in page (a GET) or refused
// (anything else); every request that may change state must carry the
// session's form token, or it is refused with 403.
func (u *UI) authed(h authedHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(quire.WithReadScope(r.Context()))
		c, err := r.Cookie(sessionCookie)
		var p *quire.Principal
		if err == nil && strings.HasPrefix(c.Value, quire.SessionPrefix) {
			p, err = u.pipe.Admit(r.Context(), c.Value, u.clientAddr(r), false)
		} else {
			err = quire.Errorf(quire.EUNAUTHORIZED, "not signed in")
		}
		if err != nil {
			if quire.ErrorCode(err) != quire.EUNAUTHORIZED {
				u.fail(w, r, nil, err)
				return
			}
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				http.Redirect(w, r, Prefix+"login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			u.renderError(w, r, nil, http.StatusForbidden, "Sign in first.")
			return
		}
		s := &session{p: p, csrf: csrfToken(c.Value)}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if !sameToken(r.PostFormValue(csrfField), s.csrf) {
				u.renderError(w, r, s, http.StatusForbidden, "This form has expired or did not come from quire. Go back, reload the page and try again.")
				return
			}
			// A write's background work waits for its answer.
			r = r.WithContext(quire.InRequest(r.Context()))
		}
		w.Header().Set("Cache-Control", "no-store")
		h(w, r, s)
	}
}

type loginView struct {
	Next, Email, Error, CSRF string
}

func (u *UI) loginPage(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if _, err := u.app.Authenticate(r.Context(), c.Value); err == nil {
			http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
			return
		}
	}
	u.showLogin(w, r, http.StatusOK, loginView{Next: safeNext(r.URL.Query().Get("next"))})
}

// showLogin renders the sign-in form with a fresh form token, kept in a
// short-lived cookie the POST must match.
func (u *UI) showLogin(w http.ResponseWriter, r *http.Request, status int, v loginView) {
	var b [24]byte
	rand.Read(b[:])
	v.CSRF = base64.RawURLEncoding.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{
		Name: loginCookie, Value: v.CSRF, Path: Prefix + "login", MaxAge: 3600,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: u.secure(r),
	})
	w.Header().Set("Cache-Control", "no-store")
	u.render(w, r, nil, status, "login", "Sign in", v)
}

func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	if err := u.pipe.Allow(r.Context(), nil, u.clientAddr(r)); err != nil {
		u.fail(w, r, nil, err)
		return
	}
	c, err := r.Cookie(loginCookie)
	if err != nil || !sameToken(r.PostFormValue(csrfField), c.Value) {
		u.renderError(w, r, nil, http.StatusForbidden, "This sign-in form has expired or did not come from quire. Reload the page and try again.")
		return
	}
	email, next := strings.TrimSpace(r.PostFormValue("email")), safeNext(r.PostFormValue("next"))
	l, err := u.app.Login(r.Context(), email, r.PostFormValue("password"), u.clientAddr(r), r.UserAgent())
	if err != nil {
		status, msg := statusOf(err)
		if quire.ErrorCode(err) == quire.EUNAUTHORIZED {
			msg = "Wrong email or password."
		}
		u.showLogin(w, r, status, loginView{Next: next, Email: email, Error: msg})
		return
	}
	maxAge := int(time.Until(l.Session.ExpiresAt).Seconds())
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: l.Token, Path: Prefix, MaxAge: max(maxAge, 1),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: u.secure(r),
	})
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Path: Prefix + "login", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: u.secure(r)})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (u *UI) logout(w http.ResponseWriter, r *http.Request, s *session) {
	if err := u.app.Logout(r.Context(), s.p); err != nil {
		u.fail(w, r, s, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: Prefix, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: u.secure(r)})
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}

// safeNext keeps a post-sign-in redirect inside the UI: only a local
// path that still starts with Prefix once decoded and cleaned (dot
// segments, plain or percent-encoded as browsers resolve them, and
// duplicate slashes) is followed, as that clean path and its query;
// anything else (another host, //evil, a backslash trick, /ui/../v1/…)
// goes to the projects list.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n\t") {
		return Prefix
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || strings.ContainsAny(u.Path, "\\\r\n\t") {
		return Prefix
	}
	clean := path.Clean(u.Path)
	if strings.HasSuffix(u.Path, "/") && !strings.HasSuffix(clean, "/") {
		clean += "/"
	}
	if !strings.HasPrefix(clean, Prefix) {
		return Prefix
	}
	return (&url.URL{Path: clean, RawQuery: u.RawQuery}).String()
}
