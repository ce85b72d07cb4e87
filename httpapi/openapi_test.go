package httpapi_test

import (
	"bytes"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/quire/quire/httpapi"
	"github.com/quire/quire/internal/testenv"
)

// TestOpenAPIMatchesRouter keeps /openapi.json true: every route the
// router serves is documented, every documented route is served, and the
// document is valid OpenAPI 3.1 for kin-openapi.
func TestOpenAPIMatchesRouter(t *testing.T) {
	e := testenv.New(t)
	res := e.Must(200, "GET", "/openapi.json", "", nil)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q", ct)
	}

	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(res.Body)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() || doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("invalid OpenAPI document: %v", err)
	}

	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	served := map[string]bool{}
	methodsOf := map[string]int{}
	for _, r := range e.Server.Routes() {
		methodsOf[r.Path]++
	}
	for _, r := range e.Server.Routes() {
		// A route registered for every method (router.Any, as /git/*path
		// is) need only document GET and POST, the methods it answers.
		if methodsOf[r.Path] >= 7 && r.Method != http.MethodGet && r.Method != http.MethodPost {
			continue
		}
		served[r.Method+" "+httpapi.OpenAPIPath(r.Path)] = true
	}
	var missing, extra []string
	for k := range served {
		if !documented[k] {
			missing = append(missing, k)
		}
	}
	for k := range documented {
		if !served[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes served but not in openapi.json (add them to a route table: see the top of httpapi/openapi.go):\n  %s", strings.Join(missing, "\n  "))
	}
	if len(extra) > 0 {
		t.Errorf("routes in openapi.json that the router does not serve:\n  %s", strings.Join(extra, "\n  "))
	}

	// Every operation says what it answers and has a unique id.
	ids := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Summary == "" || op.Responses.Len() < 2 {
				t.Errorf("%s %s: no summary or responses", method, path)
			}
			if ids[op.OperationID] {
				t.Errorf("%s %s: duplicate operationId %s", method, path, op.OperationID)
			}
			ids[op.OperationID] = true
		}
	}

	// The same bytes every time (the document is built once).
	again := e.Must(200, "GET", "/openapi.json", "", nil)
	if !bytes.Equal(again.Body, res.Body) {
		t.Fatal("openapi.json changed between requests")
	}
}

// TestOpenAPISchemasAreThreeOne checks the generated schemas use 3.1's
// type arrays, not 3.0's nullable.
func TestOpenAPISchemasAreThreeOne(t *testing.T) {
	b, err := httpapi.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"nullable"`)) {
		t.Fatal("document uses 3.0 nullable")
	}
	if !bytes.Contains(b, []byte(`"null"`)) {
		t.Fatal("document has no nullable field as a 3.1 type array")
	}
}

// TestOpenAPIStatuses checks what the document says an operation can
// answer against what the server does: no route requires a precondition
// (If-Match is optional), so no operation lists 428; a HEAD documents no
// body; a 204 has none.
func TestOpenAPIStatuses(t *testing.T) {
	b, err := httpapi.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Responses.Status(http.StatusPreconditionRequired) != nil {
				t.Errorf("%s %s lists 428, which nothing answers", method, path)
			}
			for code, r := range op.Responses.Map() {
				if (method == http.MethodHead || code == "204" || code == "304") && len(r.Value.Content) > 0 {
					t.Errorf("%s %s: %s documents a body", method, path, code)
				}
			}
		}
	}
}
