package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/valid"
)

// skillRoutes are a skill's drafts and files, relative to the skill.
func (s *Server) skillRoutes(t *gin.RouterGroup) {
	const v = "/versions"
	t.POST(v, s.writes, s.idempotent, s.createSkillVersion)
	t.POST(v+"/upload", s.writes, s.idempotent, s.uploadSkillVersion)
	t.POST(v+"/:version/files", s.writes, s.upsertFile)
	t.PUT(v+"/:version/files", s.writes, s.replaceFiles) // push.go
	t.GET(v+"/:version/files", s.listFiles)
	t.GET(v+"/:version/files/*file_path", s.getFile)
	t.DELETE(v+"/:version/files/*file_path", s.deleteFile)
	t.GET(v+"/:version/download", s.downloadVersion)
	t.GET("/live", s.liveSkill)
}

// liveSkill answers the live version and its files (path, size, sha256),
// with the commit as ETag; a matching If-None-Match is a 304 before any
// file is read. Nothing live is 404.
func (s *Server) liveSkill(c *gin.Context) {
	ctx, h := c.Request.Context(), handle(c)
	a := h.Asset
	v, err := h.LiveVersion(ctx)
	if err != nil {
		s.fail(c, err)
		return
	}
	if notModified(c, v.Commit) {
		return
	}
	files, err := s.app.LiveFiles(ctx, a, v.Number)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeVersion(c, http.StatusOK, a, v, gin.H{"files": files})
}

// baseRequest says what a new draft starts from: {"from": N} or
// {"from": "empty"}; the live version when absent.
type baseRequest struct {
	From json.RawMessage `json:"from"`
}

func parseBase(raw json.RawMessage) (quire.Base, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return quire.Base{Live: true}, nil
	}
	var n int
	if json.Unmarshal(raw, &n) == nil {
		if n <= 0 {
			return quire.Base{}, quire.Errorf(quire.EINVALID, "from must be a positive version number or \"empty\"")
		}
		return quire.Base{Version: n}, nil
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		switch str {
		case "empty":
			return quire.Base{Empty: true}, nil
		case "live", "":
			return quire.Base{Live: true}, nil
		}
		if n, err := valid.VersionNumber(str); err == nil {
			return quire.Base{Version: n}, nil
		}
	}
	return quire.Base{}, quire.Errorf(quire.EINVALID, "from must be a positive version number or \"empty\"")
}

// createSkillVersion opens a draft. A JSON body picks the base; a zip body
// (Content-Type application/zip) becomes the draft's content.
func (s *Server) createSkillVersion(c *gin.Context) {
	if isZip(c) {
		s.uploadSkillVersion(c)
		return
	}
	var req baseRequest
	if c.Request.ContentLength != 0 {
		if err := s.decode(c, &req); err != nil {
			s.fail(c, err)
			return
		}
	}
	base, err := parseBase(req.From)
	if err != nil {
		s.fail(c, err)
		return
	}
	h := handle(c)
	v, err := h.CreateVersion(c.Request.Context(), base)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeVersion(c, http.StatusCreated, h.Asset, v, nil)
}

func isZip(c *gin.Context) bool {
	mt, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	return mt == "application/zip" || mt == "application/x-zip-compressed"
}

// uploadSkillVersion makes a new draft from an uploaded zip: the raw body,
// or the "file" part of a multipart form.
func (s *Server) uploadSkillVersion(c *gin.Context) {
	zip, err := s.readZip(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if c.Query("from") == "live" {
		s.pushVersion(c, zip) // push.go
		return
	}
	h := handle(c)
	v, n, err := h.UploadVersion(c.Request.Context(), zip)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeVersion(c, http.StatusCreated, h.Asset, v, gin.H{"files": n})
}

// readZip reads an uploaded zip: the raw body, or the "file" part of a
// multipart form.
func (s *Server) readZip(c *gin.Context) ([]byte, error) {
	limit := s.limits.MaxVersionBytes + s.limits.MaxBody
	var body io.Reader = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	if strings.HasPrefix(c.GetHeader("Content-Type"), "multipart/form-data") {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
		f, _, err := c.Request.FormFile("file")
		if err != nil {
			return nil, quire.Errorf(quire.EINVALID, "multipart upload needs a \"file\" part holding the zip")
		}
		defer f.Close()
		body = f
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(body); err != nil {
		return nil, jsonError(err, limit)
	}
	return buf.Bytes(), nil
}

type fileRequest struct {
	FilePath *string `json:"file_path" openapi:"required"`
	Content  *string `json:"content" openapi:"required"`
	Message  string  `json:"message"`
	// Mode is "100755" for an executable file, "100644" for a regular
	// one; absent keeps the file's mode (regular for a new file).
	Mode fileMode `json:"mode"`
}

// fileMode is a file's git mode as the API writes it.
type fileMode string

// upsertFile is SPEC endpoint 2: create or update one file in a draft.
func (s *Server) upsertFile(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req fileRequest
	if err := s.decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if err := requireString("file_path", req.FilePath); err != nil {
		s.fail(c, err)
		return
	}
	if err := requireString("content", req.Content); err != nil {
		s.fail(c, err)
		return
	}
	w := app.FileWrite{Path: *req.FilePath, Content: []byte(*req.Content), Message: req.Message, IfMatch: ifMatch(c)}
	if req.Mode != "" {
		if w.Mode, err = quire.ParseFileMode(string(req.Mode)); err != nil {
			s.fail(c, err)
			return
		}
	}
	h := handle(c)
	v, f, err := h.UpsertFile(c.Request.Context(), n, w)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeVersion(c, http.StatusOK, h.Asset, v, gin.H{"file": f})
}

func (s *Server) listFiles(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if c.Query("limit") == "" {
		opts.Limit = 500
	}
	files, err := handle(c).Files(c.Request.Context(), n)
	if err != nil {
		s.fail(c, err)
		return
	}
	pg, next, err := app.Page(files, opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"files": pg, "next_cursor": next})
}

func filePathParam(c *gin.Context) string {
	return strings.TrimPrefix(c.Param("file_path"), "/")
}

// getFile answers a file's raw bytes, with its blob id as ETag, never as
// active content (rawcontent.go).
func (s *Server) getFile(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	b, f, err := handle(c).ReadFile(c.Request.Context(), n, filePathParam(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	rawHeaders(c)
	if notModified(c, f.SHA) {
		return
	}
	c.Data(http.StatusOK, rawContentType(f.Path, b), b)
}

func (s *Server) deleteFile(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	h := handle(c)
	v, err := h.DeleteFile(c.Request.Context(), n, filePathParam(c), ifMatch(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeVersion(c, http.StatusOK, h.Asset, v, nil)
}

// downloadVersion answers a zip of the version (app.DownloadVersion).
func (s *Server) downloadVersion(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if f := c.Query("format"); f != "" && f != "zip" {
		s.fail(c, quire.Errorf(quire.EINVALID, "format must be zip"))
		return
	}
	h := handle(c)
	zip, err := h.DownloadVersion(c.Request.Context(), n)
	if err != nil {
		s.fail(c, err)
		return
	}
	rawHeaders(c)
	c.Header("Content-Disposition", `attachment; filename="`+h.Asset.Slug+"-v"+c.Param("version")+`.zip"`)
	c.Data(http.StatusOK, "application/zip", zip)
}
