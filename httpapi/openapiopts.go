package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/quire/quire"
)

// routeOpt is what a route line of a table (openapi.go) says it takes
// or answers, applied to its operation.
type routeOpt func(*openapi3.Operation, *docBuilder)

func public() routeOpt {
	return func(op *openapi3.Operation, _ *docBuilder) { op.Security = &openapi3.SecurityRequirements{} }
}

// requiredQuery is query with every name required: the server answers
// 400 without it.
func requiredQuery(names ...string) routeOpt {
	return func(op *openapi3.Operation, b *docBuilder) {
		query(names...)(op, b)
		for _, n := range names {
			op.Parameters.GetByInAndName("query", n).Required = true
		}
	}
}

func query(names ...string) routeOpt {
	return func(op *openapi3.Operation, _ *docBuilder) {
		for _, n := range names {
			q := apiQuery[n]
			op.AddParameter(openapi3.NewQueryParameter(n).WithDescription(q.desc).WithSchema(&openapi3.Schema{Type: &openapi3.Types{q.typ}}))
		}
	}
}

func body(schema string) routeOpt {
	return func(op *openapi3.Operation, b *docBuilder) {
		op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithJSONSchemaRef(b.ref(schema)).WithDescription(bodyLimit())}
	}
}

// bodyLimit says how large a JSON body may be (quire.Limits.MaxBody at
// its default; 413 past it), in the request body's description: OpenAPI
// has no keyword for a body's size.
func bodyLimit() string {
	return fmt.Sprintf("A JSON object of at most %d bytes (413 past it).", quire.DefaultLimits().MaxBody)
}

// optionalBody is a JSON body the route does without (an empty one).
func optionalBody(schema string) routeOpt {
	return func(op *openapi3.Operation, b *docBuilder) {
		op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithJSONSchemaRef(b.ref(schema)).WithDescription(bodyLimit())}
	}
}

func zip() routeOpt {
	return func(op *openapi3.Operation, _ *docBuilder) {
		bin := &openapi3.Schema{Type: &openapi3.Types{"string"}, Format: "binary", ContentMediaType: "application/zip"}
		op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithContent(openapi3.Content{
			"application/zip":     openapi3.NewMediaType().WithSchema(bin),
			"multipart/form-data": openapi3.NewMediaType().WithSchema(openapi3.NewObjectSchema().WithProperty("file", bin)),
		})}
	}
}

// ok answers status with a JSON body of schema ("" for none or any).
func ok(status int, schema string) routeOpt {
	return func(op *openapi3.Operation, b *docBuilder) {
		r := openapi3.NewResponse().WithDescription(http.StatusText(status))
		if status != http.StatusNoContent {
			if schema == "" {
				r = r.WithJSONSchema(&openapi3.Schema{})
			} else {
				r = r.WithJSONSchemaRef(b.ref(schema))
			}
		}
		op.AddResponse(status, r)
	}
}

// alsoAs documents that the route's status may also answer a body of
// mediaType (a diff as text/x-diff, events as text/event-stream).
func alsoAs(status int, mediaType string) routeOpt {
	return func(op *openapi3.Operation, _ *docBuilder) {
		op.Responses.Status(status).Value.Content[mediaType] = openapi3.NewMediaType().WithSchema(&openapi3.Schema{Type: &openapi3.Types{"string"}})
	}
}

// head answers a HEAD: 200 with the headers of the GET and no body.
func head() routeOpt {
	return func(op *openapi3.Operation, _ *docBuilder) {
		op.AddResponse(http.StatusOK, openapi3.NewResponse().WithDescription("OK: the headers a GET would send, no body"))
	}
}

// wrap answers {"<key>": <schema>}.
func wrap(status int, key, schema string) routeOpt {
	return func(op *openapi3.Operation, b *docBuilder) {
		s := openapi3.NewObjectSchema()
		s.Properties = openapi3.Schemas{key: b.ref(schema)}
		s.Required = []string{key}
		op.AddResponse(status, openapi3.NewResponse().WithDescription(http.StatusText(status)).WithJSONSchema(s))
	}
}

// list answers {"<key>": [<schema>], "next_cursor": "..."}.
func list(status int, key, schema string) routeOpt {
	return func(op *openapi3.Operation, b *docBuilder) {
		s := openapi3.NewObjectSchema()
		s.Properties = openapi3.Schemas{
			key:           openapi3.NewSchemaRef("", openapi3.NewArraySchema().WithItems(b.ref(schema).Value)),
			"next_cursor": openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, Description: "empty on the last page"}),
		}
		s.Properties[key].Value.Items = b.ref(schema)
		s.Required = []string{key, "next_cursor"}
		op.AddResponse(status, openapi3.NewResponse().WithDescription(http.StatusText(status)).WithJSONSchema(s))
	}
}

// text answers status with a body of the given media type.
func text(status int, mediaType string) routeOpt {
	return func(op *openapi3.Operation, _ *docBuilder) {
		op.AddResponse(status, openapi3.NewResponse().WithDescription(http.StatusText(status)).WithContent(openapi3.Content{
			mediaType: openapi3.NewMediaType().WithSchema(&openapi3.Schema{Type: &openapi3.Types{"string"}, Format: "binary"}),
		}))
	}
}

// fails documents a specific error status (every route has the default).
func fails(status int) routeOpt {
	return func(op *openapi3.Operation, b *docBuilder) {
		op.AddResponse(status, errorResponse(b, status))
	}
}

// etag documents the ETag header of the route's successes.
func etag() routeOpt {
	return func(op *openapi3.Operation, _ *docBuilder) {
		for code, r := range op.Responses.Map() {
			if strings.HasPrefix(code, "2") {
				addHeader(r.Value, "ETag", "the version's commit (a file: its blob id; a render: its inputs' hash), quoted")
			}
		}
	}
}

// conditional documents If-None-Match and its 304.
func conditional() routeOpt {
	return func(op *openapi3.Operation, _ *docBuilder) {
		op.AddParameter(openapi3.NewHeaderParameter("If-None-Match").WithDescription("an ETag this route sent; 304 with no body while it still matches").
			WithSchema(openapi3.NewStringSchema()))
		r := openapi3.NewResponse().WithDescription("Not Modified: the ETag still matches")
		addHeader(r, "ETag", "the same ETag")
		op.AddResponse(http.StatusNotModified, r)
	}
}

// ifMatchHeader documents If-Match and its 412.
func ifMatchHeader() routeOpt {
	return func(op *openapi3.Operation, b *docBuilder) {
		op.AddParameter(openapi3.NewHeaderParameter("If-Match").WithDescription("the draft's commit (its ETag) the change was made against, or *; 412 when it moved").
			WithSchema(openapi3.NewStringSchema()))
		op.AddResponse(http.StatusPreconditionFailed, errorResponse(b, http.StatusPreconditionFailed))
	}
}

// idempotent documents Idempotency-Key (idempotency.go).
func idempotent() routeOpt {
	return func(op *openapi3.Operation, b *docBuilder) {
		op.AddParameter(openapi3.NewHeaderParameter("Idempotency-Key").
			WithDescription("1 to 255 printable ASCII characters: a retry with the same key (same user, route and body) within 24 hours gets the first success again, with Idempotent-Replayed: true").
			WithSchema(&openapi3.Schema{Type: &openapi3.Types{"string"}, MinLength: 1, MaxLength: ptr(uint64(maxIdempotencyKey))}))
		for code, r := range op.Responses.Map() {
			if strings.HasPrefix(code, "2") {
				addHeader(r.Value, "Idempotent-Replayed", "true when this is the kept answer of an earlier request with the same Idempotency-Key")
			}
		}
		op.AddResponse(http.StatusConflict, errorResponse(b, http.StatusConflict))
		op.AddResponse(http.StatusUnprocessableEntity, errorResponse(b, http.StatusUnprocessableEntity))
	}
}

func addHeader(r *openapi3.Response, name, desc string) {
	if r.Headers == nil {
		r.Headers = openapi3.Headers{}
	}
	r.Headers[name] = &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
		Description: desc, Schema: openapi3.NewSchemaRef("", openapi3.NewStringSchema()),
	}}}
}

// errorResponse is an APIError answer, with the headers its status sends.
func errorResponse(b *docBuilder, status int) *openapi3.Response {
	r := openapi3.NewResponse().WithDescription(http.StatusText(status)).WithJSONSchemaRef(b.ref("APIError"))
	switch status {
	case http.StatusUnauthorized:
		addHeader(r, "WWW-Authenticate", `Bearer realm="quire" (Basic on /git/)`)
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		addHeader(r, "Retry-After", "seconds to wait before retrying")
	case http.StatusConflict:
		addHeader(r, "Retry-After", "with an Idempotency-Key whose first request still runs: seconds to wait")
	}
	return r
}

// versionRef documents {version} as the routes that take app.ParseVersionRef
// read it: a number, "live" or a label name.
func versionRef() routeOpt {
	return func(op *openapi3.Operation, _ *docBuilder) {
		for _, p := range op.Parameters {
			if p.Value != nil && p.Value.In == "path" && p.Value.Name == "version" {
				p.Value.Schema = openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, MinLength: 1})
				p.Value.Description = `a version number, "live" or a label name`
			}
		}
	}
}
