package httpapi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"golang.org/x/time/rate"
)

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
func (s *Server) allowLogin(c *gin.Context, a *loginAttempt) error {
	if s.rl.limiter == nil {
		return nil
	}
	ctx := c.Request.Context()
	err, down := s.throttleLogin(ctx, a)
	if !down {
		return err
	}
	a.local = true
	limits := s.rl.limits
	if l := limits.LoginAddress; l.Enabled() {
		if d, _ := s.rl.local.Allow(ctx, a.address, l); !d.Allowed {
			s.rl.limited.WithLabelValues("login_address").Inc()
			return rateLimited("too many failed logins from this address", d.RetryAfter)
		}
	}
	if l := limits.LoginAccount; l.Enabled() {
		if d, _ := s.rl.local.Allow(ctx, a.account, l); !d.Allowed {
			s.rl.limited.WithLabelValues("login_account").Inc()
			return rateLimited("too many failed logins for this account", d.RetryAfter)
		}
	}
	return s.sessionStoreUp(ctx)
}

// throttleLogin consults the Redis throttle; down reports that it could
// not be.
func (s *Server) throttleLogin(ctx context.Context, a *loginAttempt) (err error, down bool) {
	if l := s.rl.limits.LoginAddress; l.Enabled() {
		d, err := s.rl.limiter.Peek(ctx, a.address, l)
		if err != nil {
			s.limiterFailed(ctx, err)
			return nil, true
		}
		if !d.Allowed {
			s.rl.limited.WithLabelValues("login_address").Inc()
			return rateLimited("too many failed logins from this address", d.RetryAfter), false
		}
	}
	if l := s.rl.limits.LoginAccount; l.Enabled() {
		d, err := s.rl.limiter.Allow(ctx, a.account, l)
		if err != nil {
			s.limiterFailed(ctx, err)
			return nil, true
		}
		if !d.Allowed {
			s.rl.limited.WithLabelValues("login_account").Inc()
			return rateLimited("too many failed logins for this account", d.RetryAfter), false
		}
	}
	return nil, false
}

// loginFailed counts a failed login against the client address and
// returns the error to answer: the wrong-password error, or
// loginUnavailable when Redis did not answer, as a right password would
// have found.
func (s *Server) loginFailed(c *gin.Context, a *loginAttempt, bad error) error {
	ctx := c.Request.Context()
	if l := s.rl.limits.LoginAddress; s.rl.limiter != nil && l.Enabled() && !a.local {
		if _, err := s.rl.limiter.Allow(ctx, a.address, l); err != nil {
			s.limiterFailed(ctx, err)
			s.rl.local.Allow(ctx, a.address, l)
			return loginUnavailable(err)
		}
		return bad
	}
	if err := s.sessionStoreUp(ctx); err != nil {
		return err
	}
	return bad
}

// loginSucceeded forgets the account's failed attempts.
func (s *Server) loginSucceeded(c *gin.Context, a *loginAttempt) {
	if !s.rl.limits.LoginAccount.Enabled() {
		return
	}
	if a.local || s.rl.limiter == nil {
		s.rl.local.Reset(c.Request.Context(), a.account)
		return
	}
	if err := s.rl.limiter.Reset(c.Request.Context(), a.account); err != nil {
		s.limiterFailed(c.Request.Context(), err)
	}
}

// sessionStoreUp pings the session store, when it can be pinged, and
// answers loginUnavailable when it does not answer.
func (s *Server) sessionStoreUp(ctx context.Context) error {
	p, ok := s.sessions.(interface{ Ping(context.Context) error })
	if !ok {
		return nil
	}
	if err := p.Ping(ctx); err != nil {
		return loginUnavailable(err)
	}
	return nil
}

// localLimiter is a quire.RateLimiter kept in this process: the login
// throttle while the Redis one cannot be consulted. Each key is a token
// bucket (golang.org/x/time/rate) of the limit's rate and capacity, as the
// Redis buckets are.
type localLimiter struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	max     int
	now     func() time.Time
}

func newLocalLimiter(maxKeys int, now func() time.Time) *localLimiter {
	if now == nil {
		now = time.Now
	}
	return &localLimiter{buckets: map[string]*rate.Limiter{}, max: maxKeys, now: now}
}

// bucket returns key's bucket, or nil when the table is full even after
// dropping the buckets that are full again (idle keys).
func (l *localLimiter) bucket(key string, lim quire.Limit, now time.Time) *rate.Limiter {
	if b := l.buckets[key]; b != nil {
		return b
	}
	if len(l.buckets) >= l.max {
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(b.Burst()) {
				delete(l.buckets, k)
			}
		}
		if len(l.buckets) >= l.max {
			return nil
		}
	}
	b := rate.NewLimiter(rate.Every(lim.Interval()), lim.Capacity())
	l.buckets[key] = b
	return b
}

// Allow counts one event for key. With the table full of busy keys it
// refuses: the table is only used while Redis is down, when a login
// cannot succeed anyway.
func (l *localLimiter) Allow(_ context.Context, key string, lim quire.Limit) (quire.Decision, error) {
	if !lim.Enabled() {
		return quire.Decision{Allowed: true}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.bucket(key, lim, now)
	if b == nil {
		return quire.Decision{RetryAfter: lim.Interval()}, nil
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return quire.Decision{RetryAfter: d}, nil
	}
	return quire.Decision{Allowed: true, Remaining: int(b.TokensAt(now))}, nil
}

// Peek reports whether one more event for key would be allowed.
func (l *localLimiter) Peek(_ context.Context, key string, lim quire.Limit) (quire.Decision, error) {
	if !lim.Enabled() {
		return quire.Decision{Allowed: true}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		return quire.Decision{Allowed: true, Remaining: lim.Capacity()}, nil
	}
	now := l.now()
	if t := b.TokensAt(now); t < 1 {
		return quire.Decision{RetryAfter: time.Duration((1 - t) * float64(lim.Interval()))}, nil
	}
	return quire.Decision{Allowed: true, Remaining: int(b.TokensAt(now))}, nil
}

// Reset forgets key's count.
func (l *localLimiter) Reset(_ context.Context, key string) error {
	l.mu.Lock()
	delete(l.buckets, key)
	l.mu.Unlock()
	return nil
}

var _ quire.RateLimiter = (*localLimiter)(nil)
