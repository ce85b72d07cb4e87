package httpapi_test

import (
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// TestOpenAPITellsTheTruth: what independent OpenAPI tools (Redocly,
// Spectral, generators) found the document and the server disagreeing
// on. Every operation and tag has a description; the document names its
// server (relative /); a HEAD of a public route lists 401 (a bad token is
// refused there too) and every route behind the request limiter lists 429
// with Retry-After; diff's from and to are required, as the server answers
// 400 without them; the 202 answers of webhook ping and redeliver have
// schemas; the state and format query parameters are enums.
func TestOpenAPITellsTheTruth(t *testing.T) {
	e := testenv.New(t)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(e.Must(200, "GET", "/openapi.json", "", nil).Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/" {
		t.Errorf("servers %v, want one, relative /", doc.Servers)
	}
	for _, tag := range doc.Tags {
		if tag.Description == "" {
			t.Errorf("tag %s has no description", tag.Name)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			if op.Description == "" {
				t.Errorf("%s has no description", name)
			}
			limited := strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/.well-known/") || strings.HasPrefix(path, "/git/")
			if limited {
				r := op.Responses.Status(429)
				if r == nil || r.Value.Headers["Retry-After"] == nil {
					t.Errorf("%s does not list 429 with Retry-After", name)
				}
			}
			if limited && op.Responses.Status(401) == nil {
				t.Errorf("%s does not list 401", name)
			}
			for _, p := range op.Parameters {
				if p.Value.In == "query" && (p.Value.Name == "state" || p.Value.Name == "format") && len(p.Value.Schema.Value.Enum) == 0 {
					t.Errorf("%s: query %s is not an enum", name, p.Value.Name)
				}
			}
			if strings.HasSuffix(path, "/diff") {
				for _, q := range []string{"from", "to"} {
					if p := op.Parameters.GetByInAndName("query", q); p == nil || !p.Required {
						t.Errorf("%s: %s is not required", name, q)
					}
				}
			}
			if strings.HasSuffix(path, "/ping") || strings.HasSuffix(path, "/redeliver") {
				r := op.Responses.Status(202)
				if r == nil || r.Value.Content.Get("application/json") == nil {
					t.Errorf("%s: 202 without a schema", name)
				}
			}
		}
	}
	// Every state, kind, role, scope, status, visibility, source and type
	// field of the schemas is an enum, but for those free by design: a
	// chat message's role (any name matching a pattern) and type ("" or
	// "placeholder"), the health status, and the review schemas (kept by
	// the review code, issue 29 left them alone).
	free := map[string]bool{"messages[].role": true, "messages[].type": true, "Status.status": true,
		// OAuth scope strings are space-separated lists (RFC 6749 §3.3).
		"ClientMetadata.scope": true, "ClientRegistration.scope": true}
	var walk func(path string, s *openapi3.Schema)
	walk = func(path string, s *openapi3.Schema) {
		if s == nil {
			return
		}
		for name, p := range s.Properties {
			sub := path + "." + name
			switch name {
			case "state", "kind", "role", "scope", "status", "visibility", "source", "type":
				last := sub[strings.LastIndex(sub[:strings.LastIndex(sub, ".")], ".")+1:]
				if p.Value.Type.Includes("string") && len(p.Value.Enum) == 0 && !free[last] && !free[sub] && !strings.HasPrefix(sub, "Review") && !strings.HasPrefix(sub, "Verdict") {
					t.Errorf("%s is not an enum", sub)
				}
			}
			if strings.HasSuffix(name, "_id") && name != "request_id" && p.Value.Type.Includes("string") && p.Value.Format != "uuid" {
				t.Errorf("%s is not format: uuid", sub)
			}
			walk(sub, p.Value)
			if p.Value.Items != nil {
				walk(sub+"[]", p.Value.Items.Value)
			}
		}
	}
	for name, s := range doc.Components.Schemas {
		walk(name, s.Value)
	}
	// A webhooks entry per event type, its body the envelope.
	for _, typ := range quire.EventTypes {
		w := doc.Webhooks[string(typ)]
		if w == nil || w.Post == nil || w.Post.RequestBody == nil || w.Post.Description == "" {
			t.Errorf("webhooks has no POST for %s", typ)
		}
	}
	// The server does answer 400 without from or to.
	s := e.CreateSkill(e.Admin, e.CreateProject(e.Admin, "truth"), "diffed")
	for _, q := range []string{"", "?from=1", "?to=1"} {
		if r := e.Do("GET", "/v1/skills/"+s+"/diff"+q, e.Admin, nil); r.Status != 400 {
			t.Errorf("diff%s: %d, want 400", q, r.Status)
		}
	}
}
