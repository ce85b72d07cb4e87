package httpapi

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// RateLimits are the limits the server applies with Config.RateLimiter.
// A zero Limit is off.
type RateLimits struct {
	// Request limits the API requests of one credential: an API key, or
	// the user of a session (all their sessions together). Requests
	// without a valid credential count against the client address.
	Request quire.Limit
	// LoginAccount and LoginAddress limit failed logins per email and per
	// client address.
	LoginAccount quire.Limit
	LoginAddress quire.Limit
}

// DefaultRateLimits: no request limit (a deployment picks one for its
// traffic), and login throttles no person typing a password meets.
func DefaultRateLimits() RateLimits {
	return RateLimits{
		LoginAccount: quire.Limit{Rate: 10, Period: 15 * time.Minute},
		LoginAddress: quire.Limit{Rate: 100, Period: 15 * time.Minute},
	}
}

// rateLimiting is the server's rate limit state.
type rateLimiting struct {
	limiter quire.RateLimiter
	limits  RateLimits
	// limited counts refusals by limit, failOpen the checks that failed
	// and let a request through; allowed requests are not counted, to
	// keep the hot path free.
	limited  *prometheus.CounterVec
	failOpen prometheus.Counter
	warn     quietLog
}

// quietLog lets a warning through at most every 10s: while a dependency is
// down, a few lines say so instead of one per request.
type quietLog struct {
	last    atomic.Int64 // unix ns of the last line written
	skipped atomic.Int64 // lines held back since
}

// ok reports whether to write a line now, and how many were held back.
func (q *quietLog) ok() (bool, int64) {
	now := time.Now().UnixNano()
	last := q.last.Load()
	if now-last < int64(10*time.Second) || !q.last.CompareAndSwap(last, now) {
		q.skipped.Add(1)
		return false, 0
	}
	return true, q.skipped.Swap(0)
}

// warn logs msg through q.
func (s *Server) warn(ctx context.Context, q *quietLog, msg string, args ...any) {
	if ok, skipped := q.ok(); ok {
		s.log.WarnContext(ctx, msg, append(args, "similar_lines_skipped", skipped)...)
	}
}

func (s *Server) setupRateLimits(cfg Config) {
	rl := &s.rl
	rl.limiter, rl.limits = cfg.RateLimiter, cfg.RateLimits
	rl.limited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "quire", Name: "rate_limited_total",
		Help: "Requests refused with 429, by limit (request, login_account, login_address).",
	}, []string{"limit"})
	rl.failOpen = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "quire", Name: "rate_limit_errors_total",
		Help: "Rate limit checks that failed (Redis down) and let the request through.",
	})
	s.metrics.MustRegister(rl.limited, rl.failOpen)
}

// requestLimited reports whether per-credential limits are on: when
// they are not, no handler is installed and requests pay nothing.
func (s *Server) requestLimited() bool {
	return s.rl.limiter != nil && s.rl.limits.Request.Enabled()
}

// limitRequests applies the request limit: after authenticate to the
// credential, on routes that take none (login) to the client address.
func (s *Server) limitRequests(c *gin.Context) {
	if err := s.allowRequest(c); err != nil {
		s.fail(c, err)
		return
	}
	c.Next()
}

// allowRequest counts the request against its credential: the API key,
// the session's user, or the address when there is no principal. It
// returns a rate-limited error, or nil.
func (s *Server) allowRequest(c *gin.Context) error {
	if !s.requestLimited() {
		return nil
	}
	var key string
	if v, ok := c.Get(ctxPrincipal); !ok || v.(*quire.Principal).IsAnonymous() {
		key = "req:addr:" + c.ClientIP()
	} else if p := v.(*quire.Principal); p.Key != nil {
		key = "req:key:" + p.Key.ID
	} else {
		key = "req:user:" + p.User.ID
	}
	return s.allow(c, key, s.rl.limits.Request, "request", "too many requests for this credential")
}

// allow counts one event against key, returning a rate-limited error with
// msg when it is over l. A limiter failure lets the request through (fail
// open).
func (s *Server) allow(c *gin.Context, key string, l quire.Limit, name, msg string) error {
	if s.rl.limiter == nil || !l.Enabled() {
		return nil
	}
	d, err := s.rl.limiter.Allow(c.Request.Context(), key, l)
	if err != nil {
		s.limiterFailed(c.Request.Context(), err)
		return nil
	}
	if !d.Allowed {
		s.rl.limited.WithLabelValues(name).Inc()
		return app.RateLimited(msg, d.RetryAfter)
	}
	return nil
}

// limiterFailed counts a failed check and logs it (quietly).
func (s *Server) limiterFailed(ctx context.Context, err error) {
	s.rl.failOpen.Inc()
	s.warn(ctx, &s.rl.warn, "rate limit unknown, request let through", "error", err.Error())
}

// loginConfig is the login throttle app applies (app.LoginConfig), with
// its refusals and failures counted and logged as the request limit's.
func (s *Server) loginConfig() app.LoginConfig {
	return app.LoginConfig{
		Account: s.rl.limits.LoginAccount, Address: s.rl.limits.LoginAddress,
		Limited:       func(limit string) { s.rl.limited.WithLabelValues(limit).Inc() },
		LimiterFailed: s.limiterFailed,
	}
}

// CheckTrustedProxies splits a comma-separated list of addresses and CIDRs
// (quire serve --trusted-proxies) into Config.TrustedProxies, refusing
// anything else. "" is none.
func CheckTrustedProxies(list string) ([]string, error) {
	var out []string
	for p := range strings.SplitSeq(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if _, err := netip.ParsePrefix(p); err != nil {
			if _, err := netip.ParseAddr(p); err != nil {
				return nil, fmt.Errorf("trusted proxy %q is not an address or a CIDR", p)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// retryAfterHeader is the Retry-After value of a rate-limited error, or "".
func retryAfterHeader(err error) string {
	if secs, ok := quire.ErrorDetails(err)["retry_after"].(int); ok {
		return strconv.Itoa(secs)
	}
	return ""
}
