package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/quire/quire/httpapi"
	"github.com/quire/quire/internal/testenv"
)

// servedDoc is the document the server serves, loaded.
func servedDoc(t *testing.T) *openapi3.T {
	t.Helper()
	b, err := httpapi.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// requestSchema is the JSON body schema of an operation, and the operation.
func requestSchema(t *testing.T, doc *openapi3.T, method, path string) (*openapi3.Schema, *openapi3.Operation) {
	t.Helper()
	item := doc.Paths.Value(path)
	if item == nil || item.GetOperation(method) == nil {
		t.Fatalf("%s %s is not in the document", method, path)
	}
	op := item.GetOperation(method)
	if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
		t.Fatalf("%s %s documents no JSON body", method, path)
	}
	return op.RequestBody.Value.Content.Get("application/json").Schema.Value, op
}

// fieldSchema is the schema of the field at path ("a.b", "a[]": an
// array's items) in s.
func fieldSchema(t *testing.T, s *openapi3.Schema, path string) *openapi3.Schema {
	t.Helper()
	for _, part := range strings.Split(path, ".") {
		p := s.Properties[strings.TrimSuffix(part, "[]")]
		if p == nil {
			t.Fatalf("the document has no field %s", path)
		}
		s = p.Value
		if strings.HasSuffix(part, "[]") {
			s = s.Items.Value
		}
	}
	return s
}

// bound is one limit the document states for a field: the size at the
// limit passes, the size past it is refused.
type bound struct {
	what      string
	at, past  int
	fromBytes bool
}

// bounds reads what the document says of a field's size: maxLength (or
// x-max-bytes, when the rule counts bytes), minLength (x-min-bytes),
// maxItems, minItems, maximum.
func bounds(s *openapi3.Schema) []bound {
	var out []bound
	ext := func(k string) (int, bool) {
		switch v := s.Extensions[k].(type) {
		case float64:
			return int(v), true
		case int64:
			return int(v), true
		}
		return 0, false
	}
	if n, ok := ext("x-max-bytes"); ok {
		out = append(out, bound{"x-max-bytes", n, n + 1, true})
	} else if s.MaxLength != nil {
		out = append(out, bound{"maxLength", int(*s.MaxLength), int(*s.MaxLength) + 1, false})
	}
	if n, ok := ext("x-min-bytes"); ok {
		out = append(out, bound{"x-min-bytes", n, n - 1, true})
	} else if s.MinLength > 1 {
		out = append(out, bound{"minLength", int(s.MinLength), int(s.MinLength) - 1, false})
	}
	if s.MaxItems != nil {
		out = append(out, bound{"maxItems", int(*s.MaxItems), int(*s.MaxItems) + 1, false})
	}
	if s.MinItems > 0 {
		out = append(out, bound{"minItems", int(s.MinItems), int(s.MinItems) - 1, false})
	}
	if s.Max != nil {
		out = append(out, bound{"maximum", int(*s.Max), int(*s.Max) + 1, false})
	}
	return out
}

// TestRequestLimits checks that the size limits the document states for
// request fields are the ones the server enforces: for each field of the
// table, a value at the documented limit is accepted and one past it is
// refused with the status the rule gives, which the document lists for
// the operation.
func TestRequestLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	doc := servedDoc(t)
	s := newSkill(t, e, "limits")
	promptID := e.CreatePrompt(e.Admin, s.projectID, "limits-prompt")
	e.Must(201, "POST", "/v1/prompts/"+promptID+"/versions", e.Admin, map[string]any{"template": "Hi {{name}}"})
	s.draft(t, map[string]any{"from": "empty"})
	seq := 0
	uniq := func() string { seq++; return fmt.Sprintf("u%04d", seq) }
	// A fresh draft of the skill, for a review of its own.
	draft := func() string {
		r := e.Must(201, "POST", s.url("/versions"), e.Admin, map[string]any{"from": "empty"})
		return s.vurl(num(t, r.JSON(t), "version", "version"), "/reviews")
	}
	ascii := func(n int) string { return strings.Repeat("a", max(n, 0)) }
	chars := func(n int) string { return strings.Repeat("é", max(n, 0)) } // 2 bytes each: characters are counted
	cases := []struct {
		method, path, field string
		status              int
		under               int           // the status of a value under a minimum, when not status
		url                 func() string // the path with ids; path when nil
		value               func(n int) any
		body                func(v any) map[string]any
	}{
		{method: "POST", path: "/v1/projects", field: "name", status: 400, value: func(n int) any { return chars(n) },
			body: func(v any) map[string]any { return map[string]any{"name": v, "slug": uniq()} }},
		{method: "POST", path: "/v1/projects", field: "description", status: 400, value: func(n int) any { return chars(n) },
			body: func(v any) map[string]any { return map[string]any{"name": "P", "slug": uniq(), "description": v} }},
		{method: "POST", path: "/v1/projects", field: "slug", status: 400, value: func(n int) any { return uniq() + ascii(n-5) },
			body: func(v any) map[string]any { return map[string]any{"name": "P", "slug": v} }},
		{method: "PATCH", path: "/v1/projects/{project}", field: "review_policy.protected_labels", status: 422, url: func() string { return "/v1/projects/" + s.projectID },
			value: func(n int) any {
				ls := make([]string, n)
				for i := range ls {
					ls[i] = fmt.Sprintf("l%d", i)
				}
				return ls
			},
			body: func(v any) map[string]any {
				return map[string]any{"review_policy": map[string]any{"protected_labels": v}}
			}},
		{method: "PATCH", path: "/v1/projects/{project}", field: "review_policy.protected_labels[]", status: 422, url: func() string { return "/v1/projects/" + s.projectID },
			value: func(n int) any { return []string{ascii(n)} },
			body: func(v any) map[string]any {
				return map[string]any{"review_policy": map[string]any{"protected_labels": v}}
			}},
		{method: "PATCH", path: "/v1/projects/{project}", field: "review_policy.required_approvals", status: 422, url: func() string { return "/v1/projects/" + s.projectID },
			value: func(n int) any { return n },
			body: func(v any) map[string]any {
				return map[string]any{"review_policy": map[string]any{"required_approvals": v}}
			}},
		{method: "POST", path: "/v1/users", field: "email", status: 400, value: func(n int) any { return uniq() + ascii(n-5-len("@example.com")) + "@example.com" },
			body: func(v any) map[string]any { return map[string]any{"email": v, "password": "password", "name": "N"} }},
		{method: "POST", path: "/v1/users", field: "password", status: 400, value: func(n int) any { return ascii(n) },
			body: func(v any) map[string]any { return map[string]any{"email": uniq() + "@example.com", "password": v} }},
		{method: "POST", path: "/v1/users", field: "name", status: 400, value: func(n int) any { return chars(n) },
			body: func(v any) map[string]any {
				return map[string]any{"email": uniq() + "@example.com", "password": "password", "name": v}
			}},
		{method: "POST", path: "/v1/api-keys", field: "name", status: 400, value: func(n int) any { return chars(n) },
			body: func(v any) map[string]any { return map[string]any{"name": v} }},
		{method: "POST", path: "/v1/skills/{id}/versions/{version}/files", field: "content", status: 413, url: func() string { return s.vurl(1, "/files") },
			value: func(n int) any { return ascii(n) },
			body:  func(v any) map[string]any { return map[string]any{"file_path": uniq(), "content": v} }},
		{method: "POST", path: "/v1/skills/{id}/versions/{version}/files", field: "file_path", status: 400, url: func() string { return s.vurl(1, "/files") },
			value: func(n int) any {
				p := uniq() + "/"
				for len(p) < n {
					p += ascii(min(100, n-len(p))) + "/"
				}
				return strings.TrimSuffix(p[:n-1], "/") + "z"
			},
			body: func(v any) map[string]any { return map[string]any{"file_path": v, "content": "x"} }},
		{method: "POST", path: "/v1/skills/{id}/versions/{version}/files", field: "message", status: 400, url: func() string { return s.vurl(1, "/files") },
			value: func(n int) any { return chars(n) },
			body: func(v any) map[string]any {
				return map[string]any{"file_path": "f.txt", "content": uniq(), "message": v}
			}},
		{method: "POST", path: "/v1/prompts/{id}/versions", field: "template", status: 413, url: func() string { return "/v1/prompts/" + promptID + "/versions" },
			value: func(n int) any { return ascii(n) },
			body:  func(v any) map[string]any { return map[string]any{"template": v} }},
		{method: "POST", path: "/v1/prompts/{id}/versions", field: "messages", status: 413, under: 400, url: func() string { return "/v1/prompts/" + promptID + "/versions" },
			value: func(n int) any {
				ms := make([]map[string]string, n)
				for i := range ms {
					ms[i] = map[string]string{"role": "user", "content": "m"}
				}
				return ms
			},
			body: func(v any) map[string]any { return map[string]any{"messages": v} }},
		{method: "POST", path: "/v1/prompts/{id}/versions", field: "model", status: 400, url: func() string { return "/v1/prompts/" + promptID + "/versions" },
			value: func(n int) any { return ascii(n) },
			body:  func(v any) map[string]any { return map[string]any{"template": "t", "model": v} }},
		{method: "POST", path: "/v1/prompts/{id}/payloads", field: "variables", status: 413, url: func() string { return "/v1/prompts/" + promptID + "/payloads" },
			value: func(n int) any { return map[string]string{"k": ascii(n - len(`{"k":""}`))} },
			body:  func(v any) map[string]any { return map[string]any{"variables": v} }},
		{method: "POST", path: "/v1/prompts/{id}/payloads", field: "name", status: 400, url: func() string { return "/v1/prompts/" + promptID + "/payloads" },
			value: func(n int) any { return chars(n) },
			body:  func(v any) map[string]any { return map[string]any{"variables": map[string]any{}, "name": v} }},
		{method: "POST", path: "/v1/prompts/{id}/render", field: "variables", status: 413, url: func() string { return "/v1/prompts/" + promptID + "/render" },
			value: func(n int) any { return map[string]string{"name": ascii(n - len(`{"name":""}`))} },
			body:  func(v any) map[string]any { return map[string]any{"version": 1, "variables": v} }},
		{method: "POST", path: "/v1/skills/{id}/versions/{version}/reviews", field: "title", status: 413, url: draft,
			value: func(n int) any { return ascii(n) },
			body:  func(v any) map[string]any { return map[string]any{"title": v} }},
		{method: "POST", path: "/v1/skills/{id}/versions/{version}/reviews", field: "description", status: 413, url: draft,
			value: func(n int) any { return ascii(n) },
			body:  func(v any) map[string]any { return map[string]any{"title": "t", "description": v} }},
		{method: "POST", path: "/v1/projects/{project}/webhooks", field: "url", status: 422, url: func() string { return "/v1/projects/" + s.projectID + "/webhooks" },
			value: func(n int) any { return "https://93.184.216.34/" + ascii(n-len("https://93.184.216.34/")) },
			body:  func(v any) map[string]any { return map[string]any{"url": v, "events": []string{"*"}} }},
		{method: "POST", path: "/v1/projects/{project}/webhooks", field: "events", status: 422, url: func() string { return "/v1/projects/" + s.projectID + "/webhooks" },
			value: func(n int) any { return []string{"*", "*"}[:n] },
			body:  func(v any) map[string]any { return map[string]any{"url": "https://93.184.216.34/", "events": v} }},
		{method: "POST", path: "/v1/projects/{project}/webhooks", field: "assets", status: 422, url: func() string { return "/v1/projects/" + s.projectID + "/webhooks" },
			value: func(n int) any {
				as := make([]string, n)
				for i := range as {
					as[i] = fmt.Sprintf("a%d", i)
				}
				return as
			},
			body: func(v any) map[string]any {
				return map[string]any{"url": "https://93.184.216.34/", "events": []string{"*"}, "assets": v}
			}},
		{method: "POST", path: "/v1/projects/{project}/webhooks", field: "description", status: 422, url: func() string { return "/v1/projects/" + s.projectID + "/webhooks" },
			value: func(n int) any { return ascii(n) },
			body: func(v any) map[string]any {
				return map[string]any{"url": "https://93.184.216.34/", "events": []string{"*"}, "description": v}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path+" "+tc.field, func(t *testing.T) {
			schema, op := requestSchema(t, doc, tc.method, tc.path)
			bs := bounds(fieldSchema(t, schema, tc.field))
			if len(bs) == 0 {
				t.Fatalf("the document states no limit for %s", tc.field)
			}
			for _, st := range []int{tc.status, tc.under} {
				if st != 0 && op.Responses.Status(st) == nil {
					t.Fatalf("the document does not list %d, which a value past the limit gets", st)
				}
			}
			url := func() string {
				if tc.url != nil {
					return tc.url()
				}
				return tc.path
			}
			for _, b := range bs {
				at := e.Do(tc.method, url(), e.Admin, tc.body(tc.value(b.at)))
				if at.Status >= 300 {
					t.Fatalf("%s %d: answered %d, want it accepted: %.300s", b.what, b.at, at.Status, at.Body)
				}
				past := e.Do(tc.method, url(), e.Admin, tc.body(tc.value(b.past)))
				want := tc.status
				if b.past < b.at && tc.under != 0 {
					want = tc.under
				}
				if past.Status != want {
					t.Fatalf("%s %d, past it (%d): answered %d, want %d: %.300s", b.what, b.at, b.past, past.Status, want, past.Body)
				}
			}
		})
	}
}

// TestRequestRequired checks that the fields the document lists as
// required in request bodies are the ones the server refuses to do
// without: a body of only the required fields is accepted, the same body
// without any one of them is refused (400 or 422, listed for the
// operation). Every request schema with a required list is tried.
func TestRequestRequired(t *testing.T) {
	t.Parallel()
	sequentialHeavy(t)
	e := newEnv(t)
	doc := servedDoc(t)
	s := newSkill(t, e, "required")
	promptID := e.CreatePrompt(e.Admin, s.projectID, "required-prompt")
	userID, _ := e.CreateUser("member@example.com")
	n := s.draft(t, nil)
	s.put(t, n, "SKILL.md", testenv.SkillManifest(s.slug))
	s.publish(t, n)
	review := e.Must(201, "POST", s.vurl(s.draft(t, nil), "/reviews"), e.Admin, map[string]any{"title": "r"}).JSON(t)
	reviewURL := s.url(fmt.Sprintf("/reviews/%d", num(t, review, "review", "number")))
	payload := e.Must(201, "POST", "/v1/prompts/"+promptID+"/payloads", e.Admin, map[string]any{"variables": map[string]any{}}).JSON(t)
	seq := 0
	uniq := func() string { seq++; return fmt.Sprintf("r%04d", seq) }
	cases := []struct {
		method, path string
		url          func() string
		values       func() map[string]any // a value for every field the document may require
	}{
		{"POST", "/v1/auth/login", nil, func() map[string]any {
			return map[string]any{"email": testenv.AdminEmail, "password": testenv.AdminPassword}
		}},
		{"POST", "/v1/users", nil, func() map[string]any {
			return map[string]any{"email": uniq() + "@example.com", "password": "password"}
		}},
		{"POST", "/v1/api-keys", nil, func() map[string]any { return map[string]any{"name": "k"} }},
		{"POST", "/v1/projects", nil, func() map[string]any { return map[string]any{"name": "P " + uniq()} }},
		{"POST", "/v1/projects/{project}/skills", func() string { return "/v1/projects/" + s.projectID + "/skills" },
			func() map[string]any { return map[string]any{"name": "S " + uniq()} }},
		{"PUT", "/v1/projects/{project}/members/{userID}", func() string { return "/v1/projects/" + s.projectID + "/members/" + userID },
			func() map[string]any { return map[string]any{"role": "viewer"} }},
		{"POST", "/v1/skills/{id}/versions/{version}/files", func() string { return s.vurl(2, "/files") },
			func() map[string]any { return map[string]any{"file_path": uniq(), "content": "c"} }},
		{"POST", "/v1/prompts/{id}/payloads", func() string { return "/v1/prompts/" + promptID + "/payloads" },
			func() map[string]any { return map[string]any{"variables": map[string]any{}} }},
		{"PUT", "/v1/prompts/{id}/payloads/{payloadID}", func() string {
			return "/v1/prompts/" + promptID + "/payloads/" + str(t, payload, "payload", "id")
		}, func() map[string]any { return map[string]any{"variables": map[string]any{"a": 1}} }},
		{"POST", "/v1/skills/{id}/versions/{version}/reviews", func() string { return s.vurl(s.draft(t, nil), "/reviews") },
			func() map[string]any { return map[string]any{"title": "t"} }},
		{"POST", "/v1/skills/{id}/reviews/{number}/comments", func() string { return reviewURL + "/comments" },
			func() map[string]any { return map[string]any{"body": "b"} }},
		{"PUT", "/v1/skills/{id}/labels/{name}", func() string { return s.url("/labels/stable") },
			func() map[string]any { return map[string]any{"version": n} }},
		{"POST", "/v1/projects/{project}/webhooks", func() string { return "/v1/projects/" + s.projectID + "/webhooks" },
			func() map[string]any { return map[string]any{"url": "https://93.184.216.34/", "events": []string{"*"}} }},
		{"POST", "/oauth/register", nil, func() map[string]any {
			return map[string]any{"redirect_uris": []string{"http://127.0.0.1:8976/callback"}}
		}},
	}
	tried := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			schema, op := requestSchema(t, doc, tc.method, tc.path)
			tried[op.RequestBody.Value.Content.Get("application/json").Schema.Ref] = true
			if len(schema.Required) == 0 {
				t.Fatal("the document lists no required field")
			}
			url := func() string {
				if tc.url != nil {
					return tc.url()
				}
				return tc.path
			}
			only := func(skip string) map[string]any {
				vs, body := tc.values(), map[string]any{}
				for _, f := range schema.Required {
					v, ok := vs[f]
					if !ok {
						t.Fatalf("no value for %s, which the document requires", f)
					}
					if f != skip {
						body[f] = v
					}
				}
				return body
			}
			if r := e.Do(tc.method, url(), e.Admin, only("")); r.Status >= 300 {
				t.Fatalf("only the required fields %v: answered %d: %.300s", schema.Required, r.Status, r.Body)
			}
			for _, f := range schema.Required {
				r := e.Do(tc.method, url(), e.Admin, only(f))
				if r.Status != 400 && r.Status != 422 || op.Responses.Status(r.Status) == nil {
					t.Fatalf("without %s: answered %d, want 400 or 422 as documented: %.300s", f, r.Status, r.Body)
				}
			}
		})
	}
	// Every request schema that requires a field was tried.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
				continue
			}
			sr := op.RequestBody.Value.Content.Get("application/json").Schema
			if len(sr.Value.Required) > 0 && !tried[sr.Ref] {
				t.Errorf("%s %s: %s requires %v, and no case of this test sends it", method, path, sr.Ref, sr.Value.Required)
			}
		}
	}
}
