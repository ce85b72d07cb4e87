package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/quire/quire/httpapi"
)

// Every answer a test gets through Env.Do is checked against the OpenAPI
// document the server serves (httpapi.OpenAPI): status, headers and, for
// JSON, the body's schema. So every test of the suite is also a test of
// the contract, and a field the document misdescribes fails the test
// that saw it.

var contract struct {
	once   sync.Once
	router routers.Router
	err    error
}

func contractRouter() (routers.Router, error) {
	contract.once.Do(func() {
		// The formats the document uses, checked (kin-openapi checks
		// only those defined).
		// uuid is RFC 9562's: kin-openapi's RFC 4122 pattern stops at
		// version 5, and event and delivery ids are UUIDv7.
		openapi3.DefineStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(`^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000)$`))
		openapi3.DefineStringFormatValidator("email", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForEmail))
		b, err := httpapi.OpenAPI()
		if err != nil {
			contract.err = err
			return
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(b)
		if err != nil {
			contract.err = err
			return
		}
		if err := doc.Validate(loader.Context); err != nil {
			contract.err = fmt.Errorf("served OpenAPI document is invalid: %w", err)
			return
		}
		contract.router, contract.err = legacy.NewRouter(doc)
	})
	return contract.router, contract.err
}

// CheckContract returns why res, the answer to req, breaks the document,
// or nil.
func CheckContract(req *http.Request, res *Response) error {
	router, err := contractRouter()
	if err != nil {
		return err
	}
	if req.Method == http.MethodHead || strings.HasPrefix(req.URL.Path, "/git/") {
		return nil // git's own protocol (docs/git.md)
	}
	route, params, err := router.FindRoute(req)
	if p := req.URL.Path; err == nil && len(p) > 1 && strings.HasSuffix(p, "/") {
		// kin-openapi's router ignores a trailing slash; the server
		// does not (a trailing slash is an unknown path).
		err = fmt.Errorf("trailing slash")
	}
	if err != nil {
		// An unknown path or method, or one the router cannot match
		// (a file path holding "/"): an error must still be an APIError.
		if res.Status >= 400 {
			return checkAPIError(res)
		}
		if strings.Contains(req.URL.Path, "/files/") || strings.Contains(req.URL.Path, "agent-skills/") || strings.Contains(req.URL.Path, "/.well-known/skills/") {
			return nil // a file path holding "/", which the router cannot match
		}
		return fmt.Errorf("%d answered to %s %s, which the document does not describe (%v)", res.Status, req.Method, req.URL.Path, err)
	}
	// Every status answered is listed for its operation (kin-openapi
	// skips 304 and redirects).
	if route.Operation.Responses.Status(res.Status) == nil && route.Operation.Responses.Default() == nil {
		return fmt.Errorf("%s %s answered %d, a status the document does not list for %s %s\n%.300s", req.Method, req.URL.Path, res.Status, route.Method, route.Path, res.Body)
	}
	// The body is of a media type the document lists for the status,
	// or absent when it lists none: a generated client decodes by what
	// the document says (kin-openapi skips a body it has no schema for).
	if content := route.Operation.Responses.Status(res.Status).Value.Content; res.Status != http.StatusNotModified {
		ct := res.Header.Get("Content-Type")
		switch {
		case len(content) == 0 && len(res.Body) > 0:
			return fmt.Errorf("%s %s answered %d with a body (%s), where the document lists none\n%.300s", req.Method, req.URL.Path, res.Status, ct, res.Body)
		case len(content) > 0 && content.Get(ct) == nil:
			return fmt.Errorf("%s %s answered %d as %q, a media type the document does not list (%v)\n%.300s", req.Method, req.URL.Path, res.Status, ct, mediaTypes(content), res.Body)
		}
	}
	mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 res.Status,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(res.Body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			// Only JSON bodies have schemas; raw files, zips and diffs
			// are documented as binary strings.
			ExcludeResponseBody: mt != "application/json",
		},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s answered %d, not as the document says: %v\n%.500s", req.Method, req.URL.Path, res.Status, err, res.Body)
	}
	return nil
}

// checkAPIError checks an error answer the router could not match.
func checkAPIError(res *Response) error {
	var e struct {
		Error     *string `json:"error"`
		Code      *string `json:"code"`
		RequestID *string `json:"request_id"`
	}
	if err := json.Unmarshal(res.Body, &e); err != nil || e.Error == nil || e.Code == nil || e.RequestID == nil {
		return fmt.Errorf("%d answer is not an APIError (error, code, request_id): %.300s", res.Status, res.Body)
	}
	return nil
}

func mediaTypes(c openapi3.Content) []string {
	out := make([]string, 0, len(c))
	for k := range c {
		out = append(out, k)
	}
	return out
}
