package httpapi

import (
	"bytes"
	"io"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gin-gonic/gin"
	"github.com/quire/quire/app"
)

// replaceFiles sets a draft's whole content from a zip body as one
// commit (quire push): PUT …/versions/{n}/files, ?message= the commit
// message, If-Match the commit the draft must be at.
func (s *Server) replaceFiles(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	limit := s.limits.MaxVersionBytes + s.limits.MaxBody
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.Reader(http.MaxBytesReader(c.Writer, c.Request.Body, limit))); err != nil {
		s.fail(c, jsonError(err, limit))
		return
	}
	h := handle(c)
	w := app.TreeWrite{Zip: buf.Bytes(), Message: c.Query("message"), IfMatch: ifMatch(c)}
	v, files, err := h.ReplaceFiles(c.Request.Context(), n, w)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeVersion(c, http.StatusOK, h.Asset, v, gin.H{"files": files})
}

// pushVersion is an upload with ?from=live (quire push): a new draft
// from the live version whose one commit holds exactly the zip's files,
// ?message= its commit message.
func (s *Server) pushVersion(c *gin.Context, zip []byte) {
	h := handle(c)
	v, files, err := h.ReplaceFiles(c.Request.Context(), 0, app.TreeWrite{Zip: zip, Message: c.Query("message")})
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeVersion(c, http.StatusCreated, h.Asset, v, gin.H{"files": files})
}

// pushQuery documents the upload's ?from=live and ?message=.
func pushQuery() routeOpt {
	return func(op *openapi3.Operation, _ *docBuilder) {
		op.AddParameter(openapi3.NewQueryParameter("from").WithDescription("live: the draft is opened from the live version and its one commit holds exactly the zip's files (quire push); absent: from an empty tree").
			WithSchema(openapi3.NewStringSchema().WithEnum("live")))
		op.AddParameter(openapi3.NewQueryParameter("message").WithDescription("the commit message, with from=live").WithSchema(openapi3.NewStringSchema()))
	}
}

// replaceFilesDoc documents replaceFiles' body (a raw zip) and its
// ?message= parameter.
func replaceFilesDoc() routeOpt {
	return func(op *openapi3.Operation, _ *docBuilder) {
		bin := &openapi3.Schema{Type: &openapi3.Types{"string"}, Format: "binary", ContentMediaType: "application/zip"}
		op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithContent(openapi3.Content{
			"application/zip": openapi3.NewMediaType().WithSchema(bin),
		})}
		op.AddParameter(openapi3.NewQueryParameter("message").WithDescription("the commit message; one listing the changed paths when absent").WithSchema(openapi3.NewStringSchema()))
	}
}
