package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/quire/quire/app"
	"github.com/quire/quire/httpapi"
	"github.com/quire/quire/internal/testenv"
)

// slowBody is a request body whose connection's read deadline passed
// after the first bytes, as internal/netguard's body-min-rate ends it.
type slowBody struct{ sent bool }

func (b *slowBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, `{"email":`), nil
	}
	return 0, os.ErrDeadlineExceeded
}

func (b *slowBody) Close() error { return nil }

// TestPanicAndTimeoutShape checks that a handler's panic and a body that
// arrives too slowly are answered like every other failure: the status
// the one error table gives their code (500 internal, 408
// request_timeout), one APIError with request_id equal to X-Request-ID,
// and a status the document lists for the operation.
func TestPanicAndTimeoutShape(t *testing.T) {
	t.Parallel()
	srv := httpapi.New(app.New(app.Config{}), httpapi.Config{Ready: func(context.Context) error { panic("a bug in a readiness check") }})
	cases := []struct {
		name   string
		req    func() *http.Request
		status int
		code   string
	}{
		{"panic", func() *http.Request { return httptest.NewRequest("GET", "/readyz", nil) }, 500, "internal"},
		{"slow body", func() *http.Request {
			r := httptest.NewRequest("POST", "/v1/auth/login", nil)
			r.Body, r.ContentLength = &slowBody{}, -1
			r.Header.Set("Content-Type", "application/json")
			return r
		}, 408, "request_timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req()
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, req)
			res := &testenv.Response{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
			if res.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", res.Status, tc.status, res.Body)
			}
			var e map[string]any
			if err := json.Unmarshal(res.Body, &e); err != nil {
				t.Fatalf("body is not JSON: %q", res.Body)
			}
			if e["code"] != tc.code || e["error"] == "" || e["error"] == nil {
				t.Fatalf("body %s, want code %s and a message", res.Body, tc.code)
			}
			if id := res.Header.Get("X-Request-ID"); id == "" || e["request_id"] != id {
				t.Fatalf("request_id %v, X-Request-ID %q", e["request_id"], id)
			}
			if msg, _ := e["error"].(string); strings.Contains(msg, "readiness") {
				t.Fatalf("the panic's value reached the client: %q", msg)
			}
			req.Body = io.NopCloser(strings.NewReader("")) // the contract check reads no request body
			if err := testenv.CheckContract(req, res); err != nil {
				t.Fatal(err)
			}
		})
	}
}
