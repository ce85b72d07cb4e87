package testenv

import (
	"net/http"
	"strings"
	"testing"
)

// TestCheckContract checks the response check fails what breaks the
// document and passes what keeps it, so a suite that passes through it
// says something.
func TestCheckContract(t *testing.T) {
	const id = "0b6f3f4e-8d0c-4d5e-9a57-4b0c7c4d9b1e"
	project := `{"project":{"id":"` + id + `","name":"P","slug":"p","description":"","members":[],"visibility":"private","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","created_by":"` + id + `"}}`
	apiError := `{"error":"x","code":"not_found","request_id":"r"}`
	cases := []struct {
		name, method, path string
		status             int
		ct, body           string
		ok                 bool
	}{
		{"a project", "GET", "/v1/projects/p", 200, "application/json", project, true},
		{"a missing required field", "GET", "/v1/projects/p", 200, "application/json", strings.Replace(project, `"slug":"p",`, "", 1), false},
		{"a wrong type", "GET", "/v1/projects/p", 200, "application/json", strings.Replace(project, `"name":"P"`, `"name":5`, 1), false},
		{"not a uuid", "GET", "/v1/projects/p", 200, "application/json", strings.Replace(project, `"id":"`+id+`"`, `"id":"nope"`, 1), false},
		{"an error", "GET", "/v1/projects/p", 404, "application/json", apiError, true},
		{"an error without its code", "GET", "/v1/projects/p", 404, "application/json", `{"error":"x","request_id":"r"}`, false},
		{"an unknown error code", "GET", "/v1/projects/p", 404, "application/json", `{"error":"x","code":"oops","request_id":"r"}`, false},
		{"an unknown route's error", "GET", "/v1/nothing", 404, "application/json", apiError, true},
		{"an unknown route's HTML", "GET", "/v1/nothing/", 301, "text/html", "<a>moved</a>", false},
		{"an undocumented status", "GET", "/v1/projects", 304, "", "", false},
		{"no body where one is documented", "GET", "/v1/projects/p", 200, "", "", false},
		{"another media type", "GET", "/v1/projects/p", 200, "text/plain", "project", false},
		{"a body where none is documented", "DELETE", "/v1/projects/p", 204, "application/json", `{}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, "http://quire.test"+tc.path, nil)
			h := http.Header{}
			if tc.ct != "" {
				h.Set("Content-Type", tc.ct)
			}
			err := CheckContract(req, &Response{Status: tc.status, Header: h, Body: []byte(tc.body)})
			if (err == nil) != tc.ok {
				t.Fatalf("CheckContract = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
