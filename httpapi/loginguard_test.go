package httpapi_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/pipeline"
)

// loginDown asserts the one answer every login gets while the session
// store is down, and returns its body without the request id.
func loginDown(t *testing.T, r *testenv.Response, what string) string {
	t.Helper()
	if r.Status != 503 || r.Header.Get("Retry-After") != "5" {
		t.Fatalf("%s with Redis down: %d Retry-After %q %s; want 503 with Retry-After", what, r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil || m["code"] != string(quire.EUNAVAILABLE) {
		t.Fatalf("%s: %s", what, r.Body)
	}
	delete(m, "request_id")
	b, _ := json.Marshal(m)
	return string(b)
}

// TestLoginRedisDown: while Redis is down, a right password, a wrong one
// and an unknown email get the same 503, byte for byte, so logins are no
// oracle for passwords; with throttles on, an in-process throttle with
// the same limits counts the attempts meanwhile.
func TestLoginRedisDown(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits *pipeline.RateLimits
	}{
		{"no throttle", nil},
		{"throttled", &pipeline.RateLimits{
			LoginAccount: quire.Limit{Rate: 3, Period: time.Hour},
			LoginAddress: quire.Limit{Rate: 6, Period: time.Hour},
		}},
		{"address throttle off", &pipeline.RateLimits{LoginAccount: quire.Limit{Rate: 100, Period: time.Hour}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newClock()
			url := clock.redis(t)
			m := clock.m
			e := testenv.NewWith(t, testenv.Options{RedisURL: url, Prefix: randomPrefix(),
				RateLimits: tc.limits, Clock: clock.Now})
			e.CreateUser("bo@example.com")
			e.CreateUser("cy@example.com")
			login := func(email, password string) *testenv.Response {
				return e.Do("POST", "/v1/auth/login", "", map[string]string{"email": email, "password": password})
			}
			wantError(t, login("bo@example.com", "wrong"), 401)

			m.Close()
			want := loginDown(t, login("bo@example.com", "password-bo@example.com"), "right password")
			for _, c := range []struct{ what, email, password string }{
				{"wrong password", "bo@example.com", "wrong"},
				{"unknown email", "nobody@example.com", "password-bo@example.com"},
			} {
				if got := loginDown(t, login(c.email, c.password), c.what); got != want {
					t.Fatalf("%s: %s\nright password: %s", c.what, got, want)
				}
			}
			if tc.name != "throttled" {
				return
			}
			// bo: two attempts so far with Redis down, a third, then the
			// fourth is over the account limit, kept in process. The right
			// password is refused alike.
			loginDown(t, login("bo@example.com", "wrong"), "bo")
			wantLimited(t, login("bo@example.com", "password-bo@example.com"), "1200", "this account")
			// The address has made five attempts (a refusal counts too),
			// and a sixth: cy, with none of its own, is then held back.
			loginDown(t, login("cy@example.com", "wrong"), "cy")
			wantLimited(t, login("cy@example.com", "password-cy@example.com"), "600", "this address")

			// Redis is back (empty): its throttle counts again, the
			// in-process one is not consulted, and logins work.
			if err := m.Restart(); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if r := login("bo@example.com", "password-bo@example.com"); r.Status == 200 {
					break
				} else if time.Now().After(deadline) {
					t.Fatalf("login after Redis came back: %d %s", r.Status, r.Body)
				}
			}
			wantError(t, login("cy@example.com", "wrong"), 401)
		})
	}
}
