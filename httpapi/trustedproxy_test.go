package httpapi_test

import (
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/httpapi"
	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/pipeline"
)

// TestTrustedProxies: the per-address login throttle counts the
// connection's address, whatever X-Forwarded-For says, unless the
// connection comes from a trusted proxy; then the header names the client.
func TestTrustedProxies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted []string
		// apart: two clients behind the proxy have buckets of their own.
		apart bool
	}{
		{"none trusted", nil, false},
		{"another proxy trusted", []string{"10.0.0.0/8"}, false},
		{"loopback trusted", []string{"127.0.0.1/32", "::1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := testenv.NewWith(t, testenv.Options{Embedded: true, TrustedProxies: tc.trusted,
				RateLimits: &pipeline.RateLimits{LoginAddress: quire.Limit{Rate: 2, Period: time.Hour}}})
			login := func(client string) *testenv.Response {
				return e.Do("POST", "/v1/auth/login", "", map[string]string{"email": "nobody@example.com", "password": "wrong"},
					"X-Forwarded-For: "+client)
			}
			wantError(t, login("192.0.2.1"), 401)
			wantError(t, login("192.0.2.1"), 401)
			wantLimited(t, login("192.0.2.1"), "1800", "this address")
			if r := login("192.0.2.2"); tc.apart {
				wantError(t, r, 401)
			} else {
				wantLimited(t, r, "1800", "this address")
			}
		})
	}
}

func TestCheckTrustedProxies(t *testing.T) {
	got, err := httpapi.CheckTrustedProxies(" 10.0.0.0/8, 192.0.2.7 ,,fd00::/8")
	if err != nil || len(got) != 3 || got[0] != "10.0.0.0/8" || got[1] != "192.0.2.7" || got[2] != "fd00::/8" {
		t.Fatalf("%q, %v", got, err)
	}
	if got, err := httpapi.CheckTrustedProxies(""); err != nil || got != nil {
		t.Fatalf("empty: %q, %v", got, err)
	}
	if _, err := httpapi.CheckTrustedProxies("10.0.0.0/8,proxy.example"); err == nil {
		t.Fatal("a host name was accepted")
	}
}
