package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// TestErrorShape checks that every failure, the router's included, is one
// APIError: error (the message), code, request_id equal to X-Request-ID,
// and details where the client can act on them.
func TestErrorShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "shape")
	cases := []struct {
		name, method, path string
		body               any
		headers            []string
		status             int
		code               string
		field              string // details.field, when set
		allow              string // the Allow header, when set
	}{
		{name: "unknown route", method: "GET", path: "/v1/nothing", status: 404, code: "not_found"},
		{name: "trailing slash", method: "GET", path: "/v1/projects/", status: 404, code: "not_found"},
		{name: "trailing slash on a resource", method: "GET", path: s.url("/"), status: 404, code: "not_found"},
		{name: "trailing slash outside v1", method: "GET", path: "/healthz/", status: 404, code: "not_found"},
		{name: "method not allowed", method: "PUT", path: "/v1/projects", status: 405, code: "method_not_allowed", allow: "GET, POST"},
		{name: "unknown field", method: "POST", path: "/v1/projects", body: map[string]string{"name": "P", "descripton": "typo"}, status: 400, code: "invalid", field: "descripton"},
		{name: "unknown nested field", method: "POST", path: "/v1/projects/" + s.projectID + "/prompts", body: `{"name":"p","slug":"p","extra":{"a":1}}`, status: 400, code: "invalid", field: "extra"},
		{name: "wrong type", method: "PATCH", path: s.url(), body: map[string]any{"name": 5}, status: 400, code: "invalid", field: "name"},
		{name: "unknown field on publish", method: "POST", path: s.url("/versions/1/publish"), body: map[string]any{"force": true}, status: 400, code: "invalid", field: "force"},
		{name: "text/plain body", method: "POST", path: "/v1/projects", body: `{"name":"P"}`, headers: []string{"Content-Type: text/plain"}, status: 415, code: "unsupported_media_type"},
		{name: "form body", method: "PATCH", path: s.url(), body: `name=x`, headers: []string{"Content-Type: application/x-www-form-urlencoded"}, status: 415, code: "unsupported_media_type"},
		{name: "empty body where one is required", method: "POST", path: "/v1/projects", body: "", status: 400, code: "invalid"},
		{name: "no credential", method: "GET", path: "/v1/projects", status: 401, code: "unauthorized"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			token := e.Admin
			if tc.code == "unauthorized" {
				token = ""
			}
			r := e.Do(tc.method, tc.path, token, tc.body, tc.headers...)
			m := wantError(t, r, tc.status)
			if got := m["code"]; got != tc.code {
				t.Errorf("code %v, want %s", got, tc.code)
			}
			if id := r.Header.Get("X-Request-ID"); id == "" || m["request_id"] != id {
				t.Errorf("request_id %v, X-Request-ID %q", m["request_id"], id)
			}
			if tc.field != "" {
				if f := get(t, m, "details", "field"); f != tc.field {
					t.Errorf("details.field %v, want %s", f, tc.field)
				}
			}
			if tc.allow != "" {
				if a := r.Header.Get("Allow"); a != tc.allow {
					t.Errorf("Allow %q, want %q", a, tc.allow)
				}
			}
		})
	}
}

// TestBodylessActions checks that publish takes an empty body with no
// Content-Type at all (as curl -X POST sends it), and any Content-Type
// with an empty body.
func TestBodylessActions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSkill(t, e, "bodyless")
	for i, ct := range []string{"", "text/plain"} {
		n := s.draft(t, nil)
		if n != i+1 {
			t.Fatalf("draft %d, want %d", n, i+1)
		}
		s.put(t, n, "SKILL.md", testenv.SkillManifest(s.slug))
		req, err := http.NewRequest("POST", e.URL+s.vurl(n, "/publish"), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+e.Admin)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(b), `"published"`) {
			t.Fatalf("publish with Content-Type %q: %d %s", ct, res.StatusCode, b)
		}
	}
}
