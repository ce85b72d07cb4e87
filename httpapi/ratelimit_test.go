package httpapi_test

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/pipeline"
)

// testClock is a clock moved by hand, so no test waits: the API's (for
// Options.Clock) and, once it has one, a miniredis's, which is the rate
// limiter's (the buckets run on Redis's TIME).
type testClock struct {
	mu sync.Mutex
	t  time.Time
	m  *miniredis.Miniredis
}

func newClock() *testClock { return &testClock{t: time.Unix(1_800_000_000, 0)} }

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	if c.m != nil {
		c.m.SetTime(c.t)
	}
}

// redis starts a miniredis on the clock and returns its URL.
func (c *testClock) redis(t *testing.T) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = miniredis.RunT(t)
	c.m.SetTime(c.t)
	c.m.ClockTTL(true)
	return "redis://" + c.m.Addr()
}

// limitRedis is a Redis a limit test runs against; clock is nil for the
// real Redis, whose clock a test cannot move.
type limitRedis struct {
	url   string
	clock *testClock
}

// sharedRedis returns the Redis servers a limit test runs against: its
// own miniredis on a clock the test moves, and the real Redis when
// QUIRE_TEST_REDIS_URL is set. Both can be shared by several Envs,
// unlike the embedded one.
func sharedRedis(t *testing.T) map[string]limitRedis {
	clock := newClock()
	rs := map[string]limitRedis{"miniredis": {url: clock.redis(t), clock: clock}}
	if u := testenv.RedisURL(); u != "" {
		rs["redis"] = limitRedis{url: u}
	}
	return rs
}

// wantLimited is wantLimited, but on a running clock (the real Redis)
// the Retry-After may be a second short: the bucket's time has moved on.
func (tr limitRedis) wantLimited(t *testing.T, r *testenv.Response, retry string, subs ...string) {
	t.Helper()
	if n, err := strconv.Atoi(retry); err == nil && tr.clock == nil && r.Header.Get("Retry-After") == strconv.Itoa(n-1) {
		retry = strconv.Itoa(n - 1)
	}
	wantLimited(t, r, retry, subs...)
}

func randomPrefix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "quiretest:" + hex.EncodeToString(b) + ":"
}

// wantLimited asserts a 429 APIError with a whole-second Retry-After.
func wantLimited(t *testing.T, r *testenv.Response, retry string, subs ...string) {
	t.Helper()
	m := wantError(t, r, 429, subs...)
	if m["code"] != string(quire.ERATELIMIT) {
		t.Fatalf("code %v, want %s", m["code"], quire.ERATELIMIT)
	}
	if got := r.Header.Get("Retry-After"); got != retry {
		t.Fatalf("Retry-After %q, want %q", got, retry)
	}
}

// TestRequestLimitAcrossServers runs two servers on one data root and one
// Redis: a credential's requests count together, wherever they land.
// What comes back when is checked on miniredis only, whose clock the test
// moves; on the real Redis the clock runs (a Retry-After may be a second
// short) and the test stops after the sharing.
func TestRequestLimitAcrossServers(t *testing.T) {
	for name, tr := range sharedRedis(t) {
		t.Run(name, func(t *testing.T) {
			clock := tr.clock
			// 3 a minute: one request's allowance comes back every 20s.
			limits := &pipeline.RateLimits{Request: quire.Limit{Rate: 3, Period: time.Minute}}
			opts := testenv.Options{Root: t.TempDir(), RedisURL: tr.url, Prefix: randomPrefix(), RateLimits: limits}
			a, z := newEnv(t, opts), newEnv(t, opts)
			// The admin's logins count against the admin: start afresh.
			if clock != nil {
				clock.Advance(time.Hour)
			}
			key := a.CreateKey(a.Admin, "read")
			if clock != nil {
				clock.Advance(time.Hour)
			}
			a.Must(200, "GET", "/v1/projects", key, nil)
			z.Must(200, "GET", "/v1/projects", key, nil)
			a.Must(200, "GET", "/v1/auth/me", key, nil)
			for _, e := range []*testenv.Env{z, a} {
				tr.wantLimited(t, e.Do("GET", "/v1/projects", key, nil), "20", "too many requests")
			}
			// The admin's session is another credential, with its own bucket.
			z.Must(200, "GET", "/v1/projects", a.Admin, nil)
			if clock == nil {
				return
			}

			clock.Advance(19 * time.Second)
			wantLimited(t, z.Do("GET", "/v1/projects", key, nil), "1")
			clock.Advance(time.Second)
			z.Must(200, "GET", "/v1/projects", key, nil)
			wantLimited(t, a.Do("GET", "/v1/projects", key, nil), "20")

			clock.Advance(time.Minute)
			for range 3 {
				a.Must(200, "GET", "/v1/projects", key, nil)
			}
		})
	}
}

// TestRequestLimitPerUser: a user's sessions share one bucket; requests
// without a valid credential count against the client address.
func TestRequestLimitPerUser(t *testing.T) {
	clock := newClock()
	limits := &pipeline.RateLimits{Request: quire.Limit{Rate: 4, Period: time.Minute}}
	e := newEnv(t, testenv.Options{RedisURL: clock.redis(t), RateLimits: limits})
	clock.Advance(time.Hour)
	other := e.Login(testenv.AdminEmail, testenv.AdminPassword) // counted as an address request
	e.Must(200, "GET", "/v1/auth/me", e.Admin, nil)
	e.Must(200, "GET", "/v1/auth/me", other, nil)
	e.Must(200, "GET", "/v1/auth/me", e.Admin, nil)
	e.Must(200, "GET", "/v1/auth/me", other, nil)
	wantLimited(t, e.Do("GET", "/v1/auth/me", e.Admin, nil), "15")
	wantLimited(t, e.Do("GET", "/v1/auth/me", other, nil), "15")

	// The login above was one of the address's 4.
	for _, tok := range []string{"", "sess_bogus", "ak_bogus"} {
		wantError(t, e.Do("GET", "/v1/projects", tok, nil), 401)
	}
	wantLimited(t, e.Do("GET", "/v1/projects", "", nil), "15")
	wantLimited(t, e.Do("POST", "/v1/auth/login", "", map[string]string{"email": testenv.AdminEmail, "password": testenv.AdminPassword}), "15")
}

// TestLoginThrottle: failed logins are limited per account and per client
// address, independently; a success clears the account's count. That an
// allowance comes back is checked on miniredis only, whose clock the test
// moves.
func TestLoginThrottle(t *testing.T) {
	for name, tr := range sharedRedis(t) {
		t.Run(name, func(t *testing.T) {
			limits := &pipeline.RateLimits{
				LoginAccount: quire.Limit{Rate: 3, Period: 15 * time.Minute}, // one back every 5m
				LoginAddress: quire.Limit{Rate: 8, Period: 80 * time.Minute}, // one back every 10m
			}
			e := newEnv(t, testenv.Options{RedisURL: tr.url, Prefix: randomPrefix(), RateLimits: limits})
			_, _ = e.CreateUser("bo@example.com")
			_, _ = e.CreateUser("cy@example.com")
			login := func(email, password string) *testenv.Response {
				return e.Do("POST", "/v1/auth/login", "", map[string]string{"email": email, "password": password})
			}

			// Bad input is not a guess: never counted.
			for range 10 {
				wantError(t, login("", "x"), 400)
			}
			// A success clears the account's failures.
			wantError(t, login(testenv.AdminEmail, "wrong"), 401)
			wantError(t, login(testenv.AdminEmail, "wrong"), 401)
			e.Must(200, "POST", "/v1/auth/login", "", map[string]string{"email": testenv.AdminEmail, "password": testenv.AdminPassword})
			wantError(t, login(testenv.AdminEmail, "wrong"), 401) // address: 3 failures

			// bo: three failures (address: 6), then even the right password
			// is refused, and that refusal is not counted.

			for range 3 {
				wantError(t, login("bo@example.com", "wrong"), 401)
			}
			tr.wantLimited(t, login("BO@example.com", "password-bo@example.com"), "300", "this account")
			// cy, from the same address, is not held back by bo's count.
			e.Must(200, "POST", "/v1/auth/login", "", map[string]string{"email": "cy@example.com", "password": "password-cy@example.com"})
			wantError(t, login("cy@example.com", "wrong"), 401)
			wantError(t, login("nobody@example.com", "wrong"), 401) // address: 8 failures

			// The address is spent: even an account with no failures waits.
			tr.wantLimited(t, login("cy@example.com", "password-cy@example.com"), "600", "this address")

			if tr.clock == nil {
				return
			}
			tr.clock.Advance(10 * time.Minute)
			e.Must(200, "POST", "/v1/auth/login", "", map[string]string{"email": "bo@example.com", "password": "password-bo@example.com"})
		})
	}
}

// TestRateLimitFailOpen: with Redis down, limits let requests through,
// counted in a metric and logged, never a 5xx for an API key.
func TestRateLimitFailOpen(t *testing.T) {
	m := miniredis.RunT(t)
	limits := &pipeline.RateLimits{Request: quire.Limit{Rate: 1, Period: time.Hour}}
	e := testenv.NewWith(t, testenv.Options{RedisURL: "redis://" + m.Addr(), Prefix: randomPrefix(), RateLimits: limits})
	key := e.CreateKey(e.Admin, "read")
	e.Must(200, "GET", "/v1/projects", key, nil)
	wantLimited(t, e.Do("GET", "/v1/projects", key, nil), "3600")

	m.Close()
	for range 5 {
		e.Must(200, "GET", "/v1/projects", key, nil)
	}
	// Sessions do need Redis: 503, not 401 or 500.
	wantError(t, e.Do("GET", "/v1/projects", e.Admin, nil), 503)

	metrics := e.Scrape().Body
	if !strings.Contains(string(metrics), "quire_rate_limit_errors_total ") || strings.Contains(string(metrics), "quire_rate_limit_errors_total 0") {
		t.Errorf("quire_rate_limit_errors_total not counted:\n%s", grepLines(string(metrics), "rate_limit"))
	}
	if n := strings.Count(e.Log.String(), "rate limit unknown"); n < 1 || n > 3 {
		t.Errorf("%d log lines about the limiter failing, want a few, not one per request", n)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// BenchmarkRenderLiveRateLimited is BenchmarkRenderLive with a request
// limit no client reaches: "lease" takes up to 100 tokens from Redis at a
// time, "per-request" (a bucket of 10, so leases of 1) asks Redis on
// every request.
func BenchmarkRenderLiveRateLimited(b *testing.B) {
	for name, l := range map[string]quire.Limit{
		"lease":       {Rate: 1_000_000, Period: time.Second},
		"per-request": {Rate: 1_000_000, Period: time.Second, Burst: 10},
	} {
		b.Run(name, func(b *testing.B) {
			e := testenv.NewWith(b, testenv.Options{RateLimits: &pipeline.RateLimits{Request: l}})
			id := newPrompt(e, "bench")
			publishTemplate(e, id, "Hello {{name}}, here is a short note about {{topic}}.")
			key := e.CreateKey(e.Admin, "read")
			body := `{"variables":{"name":"Ann","topic":"caching"}}`
			path := "/v1/prompts/" + id + "/render"
			do := func() *httptest.ResponseRecorder {
				req := httptest.NewRequest("POST", path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+key)
				w := httptest.NewRecorder()
				e.Server.ServeHTTP(w, req)
				return w
			}
			if w := do(); w.Code != http.StatusOK {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				do()
			}
		})
	}
}

// TestRequestLimitSharedByDoors: the API and git admit requests through
// one pipeline, so a credential's git requests and API requests draw on
// one budget, and a bad credential on git counts against the address as
// on the API.
func TestRequestLimitSharedByDoors(t *testing.T) {
	clock := newClock()
	limits := &pipeline.RateLimits{Request: quire.Limit{Rate: 4, Period: time.Minute}}
	e := newEnv(t, testenv.Options{RedisURL: clock.redis(t), RateLimits: limits})
	clock.Advance(time.Hour)
	e.CreateSkill(e.Admin, e.CreateProject(e.Admin, "doors"), "tool") // 2 requests
	refs := "/git/doors/skills/tool.git/info/refs?service=git-upload-pack"
	e.Must(200, "GET", refs, e.Admin, nil)
	e.Must(200, "GET", "/v1/auth/me", e.Admin, nil)
	wantLimited(t, e.Do("GET", refs, e.Admin, nil), "15")
	wantLimited(t, e.Do("GET", "/v1/auth/me", e.Admin, nil), "15")

	for range 4 {
		wantError(t, e.Do("GET", refs, "ak_bogus", nil), 401)
	}
	wantLimited(t, e.Do("GET", "/v1/projects", "ak_bogus", nil), "15")
}
