package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/quire/quire"
	"golang.org/x/crypto/bcrypt"
)

// DefaultBcryptCost is tuned to take tens of milliseconds here: slow for
// guessing, quick enough for a login.
const DefaultBcryptCost = 11

// A login must not tell a right password from a wrong one by anything but
// success. While the session store (Redis) cannot be reached, a right
// password cannot log in (no session can be stored) and used to answer
// 503 where a wrong one answered 401: an oracle for guessing passwords,
// unthrottled too, since the throttle lives in the same Redis. So:
//
//   - when the Redis throttle cannot be consulted, an in-process throttle
//     with the same limits counts the attempt instead (localLimiter), and
//     the session store is pinged; if it does not answer, every login is
//     refused with the same 503 before any password is looked at;
//   - a wrong password is answered 401 only once Redis has answered after
//     the password check (the failure counted against the address, or a
//     ping), at the point where a right password stores its session; if
//     it does not answer, the wrong password gets that same 503.
//
// Right and wrong passwords thus meet Redis at the same step and get the
// same answer from it.

// LoginConfig is the login throttle: failed logins limited per account
// (email) and per client address with Config.RateLimiter (a zero Limit,
// or no RateLimiter, is off), and who hears of what it does.
type LoginConfig struct {
	Account, Address quire.Limit
	// Limited, when set, hears of each login a throttle refused, by
	// limit: "login_account" or "login_address".
	Limited func(limit string)
	// LimiterFailed, when set, hears of each throttle check that failed
	// (Redis down).
	LimiterFailed func(ctx context.Context, err error)
}

// loginGuard is the login throttle's state.
type loginGuard struct {
	LoginConfig
	// local is the throttle while the Redis one cannot be consulted.
	local *localLimiter
	// dummyHash is compared against when no user has the email, so a
	// login takes as long whether or not the account exists: it has the
	// cost real hashes have.
	dummyHash []byte
}

func newLoginGuard(cfg LoginConfig, bcryptCost int, now func() time.Time) loginGuard {
	g := loginGuard{LoginConfig: cfg, local: newLocalLimiter(10000, now)}
	if g.Limited == nil {
		g.Limited = func(string) {}
	}
	if g.LimiterFailed == nil {
		g.LimiterFailed = func(context.Context, error) {}
	}
	g.dummyHash, _ = bcrypt.GenerateFromPassword([]byte("quire-dummy-password"), bcryptCost)
	return g
}

// Login is a session opened by a login, with the token to show once.
type Login struct {
	Token   string
	Session *quire.Session
	User    *quire.User
}

// Login checks email and password and opens a session for userAgent. addr
// is the client address the throttle counts failures against. Every
// failure is EUNAUTHORIZED with one message; while the session store is
// down, every attempt gets the one EUNAVAILABLE of loginUnavailable.
func (a *App) Login(ctx context.Context, email, password, addr, userAgent string) (*Login, error) {
	if email == "" || password == "" {
		return nil, quire.Errorf(quire.EINVALID, "email and password are required")
	}
	att := &loginAttempt{}
	att.account, att.address = loginKeys(email, addr)
	if err := a.allowLogin(ctx, att); err != nil {
		return nil, err
	}
	bad := quire.Errorf(quire.EUNAUTHORIZED, "wrong email or password")
	u, err := a.meta.UserByEmail(ctx, email)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		bcrypt.CompareHashAndPassword(a.login.dummyHash, []byte(password))
		return nil, a.loginFailed(ctx, att, bad)
	}
	if err != nil {
		return nil, err
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) != nil || u.Disabled {
		return nil, a.loginFailed(ctx, att, bad)
	}
	a.loginSucceeded(ctx, att)
	secret := quire.NewSecret()
	now := a.now().UTC()
	sess := &quire.Session{
		ID: uuid.NewString(), UserID: u.ID, SecretHash: quire.HashSecret(secret),
		CreatedAt: now, ExpiresAt: now.Add(a.sessionTTL), UserAgent: truncate(userAgent, 200),
	}
	if err := a.sessions.CreateSession(ctx, sess); err != nil {
		if quire.ErrorCode(err) == quire.EUNAVAILABLE {
			err = loginUnavailable(err) // as a wrong password gets (loginFailed)
		}
		return nil, err
	}
	return &Login{Token: quire.Token(quire.SessionPrefix, sess.ID, secret), Session: sess, User: u}, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// loginRetryAfter is what a login refused for want of the session store
// is told to wait.
const loginRetryAfter = 5

// loginUnavailable is the one answer to every login while the session
// store cannot be reached; cause is only logged.
func loginUnavailable(cause error) error {
	return &quire.Error{
		Code: quire.EUNAVAILABLE, Err: cause,
		Message: fmt.Sprintf("logging in is unavailable for now; retry in %d s", loginRetryAfter),
		Details: map[string]any{"retry_after": loginRetryAfter},
	}
}

// RateLimited is the error of a request a limit refused, telling the
// caller to retry in whole seconds (at least one): its retry_after
// detail becomes the HTTP Retry-After header.
func RateLimited(msg string, retry time.Duration) error {
	secs := max(1, int(math.Ceil(retry.Seconds())))
	return quire.Errorf(quire.ERATELIMIT, "%s; retry in %d s", msg, secs).WithDetail("retry_after", secs)
}

// loginKeys are the buckets of a login attempt: the account (by email,
// case folded) and the client address. The email is hashed: a key of
// fixed size whatever a client sends, and no addresses in Redis.
func loginKeys(email, addr string) (account, address string) {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(email))))
	return "login:acct:" + hex.EncodeToString(sum[:16]), "login:addr:" + addr
}

// loginAttempt is one login's throttle buckets and where they are kept.
type loginAttempt struct {
	account, address string
	// local: the Redis throttle could not be consulted, the in-process
	// one counted this attempt (against both buckets) instead.
	local bool
}

// allowLogin is asked before a password is checked: it applies the
// throttle, and refuses every login alike while Redis is unreachable.
//
// With Redis, the account's bucket counts every attempt at once, so
// concurrent guesses cannot overrun it; a success empties it again
// (loginSucceeded). The address's bucket is only looked at here and
// counts failures (loginFailed), so people behind one address who log in
// successfully do not use it up.
func (a *App) allowLogin(ctx context.Context, at *loginAttempt) error {
	if a.limiter == nil {
		return nil
	}
	err, down := a.throttleLogin(ctx, at)
	if !down {
		return err
	}
	at.local = true
	g := &a.login
	if l := g.Address; l.Enabled() {
		if d, _ := g.local.Allow(ctx, at.address, l); !d.Allowed {
			g.Limited("login_address")
			return RateLimited("too many failed logins from this address", d.RetryAfter)
		}
	}
	if l := g.Account; l.Enabled() {
		if d, _ := g.local.Allow(ctx, at.account, l); !d.Allowed {
			g.Limited("login_account")
			return RateLimited("too many failed logins for this account", d.RetryAfter)
		}
	}
	return a.sessionStoreUp(ctx)
}

// throttleLogin consults the Redis throttle; down reports that it could
// not be.
func (a *App) throttleLogin(ctx context.Context, at *loginAttempt) (err error, down bool) {
	g := &a.login
	if l := g.Address; l.Enabled() {
		d, err := a.limiter.Peek(ctx, at.address, l)
		if err != nil {
			g.LimiterFailed(ctx, err)
			return nil, true
		}
		if !d.Allowed {
			g.Limited("login_address")
			return RateLimited("too many failed logins from this address", d.RetryAfter), false
		}
	}
	if l := g.Account; l.Enabled() {
		d, err := a.limiter.Allow(ctx, at.account, l)
		if err != nil {
			g.LimiterFailed(ctx, err)
			return nil, true
		}
		if !d.Allowed {
			g.Limited("login_account")
			return RateLimited("too many failed logins for this account", d.RetryAfter), false
		}
	}
	return nil, false
}

// loginFailed counts a failed login against the client address and
// returns the error to answer: the wrong-password error, or
// loginUnavailable when Redis did not answer, as a right password would
// have found.
func (a *App) loginFailed(ctx context.Context, at *loginAttempt, bad error) error {
	g := &a.login
	if l := g.Address; a.limiter != nil && l.Enabled() && !at.local {
		if _, err := a.limiter.Allow(ctx, at.address, l); err != nil {
			g.LimiterFailed(ctx, err)
			g.local.Allow(ctx, at.address, l)
			return loginUnavailable(err)
		}
		return bad
	}
	if err := a.sessionStoreUp(ctx); err != nil {
		return err
	}
	return bad
}

// loginSucceeded forgets the account's failed attempts.
func (a *App) loginSucceeded(ctx context.Context, at *loginAttempt) {
	g := &a.login
	if !g.Account.Enabled() {
		return
	}
	if at.local || a.limiter == nil {
		g.local.Reset(ctx, at.account)
		return
	}
	if err := a.limiter.Reset(ctx, at.account); err != nil {
		g.LimiterFailed(ctx, err)
	}
}

// sessionStoreUp pings the session store, when it can be pinged, and
// answers loginUnavailable when it does not answer.
func (a *App) sessionStoreUp(ctx context.Context) error {
	p, ok := a.sessions.(interface{ Ping(context.Context) error })
	if !ok {
		return nil
	}
	if err := p.Ping(ctx); err != nil {
		return loginUnavailable(err)
	}
	return nil
}
