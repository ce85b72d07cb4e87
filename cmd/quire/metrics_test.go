package main

import (
	"io"
	"net/http"
	"regexp"
	"testing"
)

// GET /metrics on the API listener is 404, authenticated or not; the
// metrics are served on --metrics-addr only.
func TestMetricsListener(t *testing.T) {
	t.Run("off by default", func(t *testing.T) {
		m, _ := start(t, t.TempDir(), "")
		if m.MetricsAddr() != "" {
			t.Fatalf("a metrics listener without --metrics-addr: %s", m.MetricsAddr())
		}
		_, login := call(t, m, "POST", "/v1/auth/login", "", map[string]string{"email": "admin@example.com", "password": "admin-password"})
		for _, token := range []string{"", login["token"].(string)} {
			code, body := call(t, m, "GET", "/metrics", token, nil)
			if code != 404 || body["code"] != "not_found" {
				t.Fatalf("GET /metrics on the API listener (token %t): %d %v", token != "", code, body)
			}
		}
	})
	t.Run("own listener", func(t *testing.T) {
		m, _ := start(t, t.TempDir(), "", func(c *Config) { c.MetricsAddr = "127.0.0.1:0" })
		if code, _ := call(t, m, "GET", "/healthz", "", nil); code != 200 {
			t.Fatal(code)
		}
		if code, _ := call(t, m, "GET", "/metrics", "", nil); code != 404 {
			t.Fatalf("GET /metrics on the API listener: %d", code)
		}
		res, err := http.Get("http://" + m.MetricsAddr() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		for _, re := range []string{
			`(?m)^quire_http_requests_total\{method="GET",route="/healthz",status="200"\} 1$`,
			`(?m)^quire_connections_open [1-9]`,
			`(?m)^quire_connections_max [1-9]`,
			`(?m)^quire_connections_refused_total\{cap="address"\} 0$`,
		} {
			if res.StatusCode != 200 || !regexp.MustCompile(re).Match(b) {
				t.Fatalf("metrics listener: %d, no %s in\n%s", res.StatusCode, re, b)
			}
		}
		// Only /metrics there.
		if res, err := http.Get("http://" + m.MetricsAddr() + "/v1/projects"); err != nil || res.StatusCode != 404 {
			t.Fatalf("metrics listener serves more than /metrics: %v %v", res, err)
		}
	})
}
