package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// Skills and prompts share their metadata and version life cycle; the
// handlers here serve both, keyed by kind.

// assetCollectionRoutes are a project's skills or prompts: create and list.
func (s *Server) assetCollectionRoutes(g *gin.RouterGroup, kind quire.Kind) {
	pl := "/projects/:projectID/" + kind.Plural()
	g.POST(pl, s.idempotent, s.createAsset(kind))
	g.GET(pl, s.listAssets(kind))
}

// assetRoutes are one skill's or prompt's metadata, versions and life
// cycle, relative to the asset (see Server.assetTree).
func (s *Server) assetRoutes(t *gin.RouterGroup) {
	t.GET("", s.getAsset)
	t.PATCH("", s.writes, s.updateAsset)
	t.DELETE("", s.deleteAsset)
	t.GET("/versions", s.listVersions)
	t.GET("/versions/:version", s.getVersion)
	t.DELETE("/versions/:version", s.deleteVersion)
	t.POST("/versions/:version/publish", s.writes, s.publishReviewed) // reviews.go
	t.POST("/versions/:version/promote", s.versionAction((*app.Handle).PromoteVersion))
	t.POST("/versions/:version/archive", s.versionAction((*app.Handle).ArchiveVersion))
	t.GET("/diff", s.diffVersions)
	t.GET("/history", s.history)
}

// openAsset opens the asset {id} (an id, or a slug naming one asset the
// caller can see) for the caller, once per request: the handlers of its
// tree read it with handle(c). An asset the caller cannot see is 404
// before anything of the request is read.
func (s *Server) openAsset(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		h, err := s.app.Open(c.Request.Context(), principal(c), kind, c.Param("id"), quire.AccessRead)
		s.opened(c, h, err)
	}
}

// scopedAsset is openAsset at the project-scoped address: {projectID}
// (id or slug) and {slug} (the asset's slug or id within that project).
// It sets {id} to the asset's id, so the tree's handlers serve both
// addresses alike.
func (s *Server) scopedAsset(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		h, err := s.app.OpenIn(c.Request.Context(), principal(c), c.Param("projectID"), kind, c.Param("slug"), quire.AccessRead)
		if err == nil {
			c.Params = append(c.Params, gin.Param{Key: "id", Value: h.Asset.ID})
		}
		s.opened(c, h, err)
	}
}

func (s *Server) opened(c *gin.Context, h *app.Handle, err error) {
	if err != nil {
		s.fail(c, err)
		c.Abort()
		return
	}
	requestOf(c).handle = h
	c.Next()
}

// writes is the precondition of a route that changes its asset and reads
// a body: the caller must be able to write before the body is read, so a
// caller who may not learns nothing from how its request is formed. The
// use case checks the access it needs itself.
func (s *Server) writes(c *gin.Context) {
	if err := handle(c).Need(quire.AccessWrite); err != nil {
		s.fail(c, err)
		c.Abort()
	}
}

func (s *Server) createAsset(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		h, ok := s.openProject(c, quire.AccessWrite)
		if !ok {
			return
		}
		e, err := decodeMeta[metaCreateRequest](s, c)
		if err != nil {
			s.fail(c, err)
			return
		}
		a, err := h.CreateAsset(c.Request.Context(), kind, e)
		if err != nil {
			s.fail(c, err)
			return
		}
		c.Header("Location", "/v1/"+kind.Plural()+"/"+a.ID)
		c.JSON(http.StatusCreated, gin.H{string(kind): a})
	}
}

func (s *Server) listAssets(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		opts, err := listOptions(c)
		if err != nil {
			s.fail(c, err)
			return
		}
		pg, next, err := s.app.Assets(c.Request.Context(), principal(c), kind, c.Param("projectID"), opts)
		if err != nil {
			s.fail(c, err)
			return
		}
		c.JSON(http.StatusOK, gin.H{kind.Plural(): pg, "next_cursor": next})
	}
}

func (s *Server) getAsset(c *gin.Context) {
	h := handle(c)
	c.JSON(http.StatusOK, gin.H{string(h.Asset.Kind): h.Asset})
}

func (s *Server) updateAsset(c *gin.Context) {
	h := handle(c)
	e, err := decodeMeta[metaRequest](s, c)
	if err != nil {
		s.fail(c, err)
		return
	}
	a, err := h.UpdateAsset(c.Request.Context(), e)
	s.respond(c, http.StatusOK, string(h.Asset.Kind), a, err)
}

func (s *Server) deleteAsset(c *gin.Context) {
	if err := handle(c).DeleteAsset(c.Request.Context()); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// versionView is a version as clients see it: skill_id or prompt_id, and
// for prompts the template and config.
func (s *Server) versionView(ctx context.Context, a *quire.Asset, v *quire.Version) (any, error) {
	if a.Kind == quire.KindPrompt {
		return s.promptVersionView(ctx, a, v)
	}
	return struct {
		SkillID string `json:"skill_id"`
		*quire.Version
	}{a.ID, v}, nil
}

// writeVersion answers with {"version": ...} and the commit as ETag.
func (s *Server) writeVersion(c *gin.Context, status int, a *quire.Asset, v *quire.Version, extra gin.H) {
	view, err := s.versionView(c.Request.Context(), a, v)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := gin.H{"version": view}
	for k, x := range extra {
		out[k] = x
	}
	c.Header("ETag", `"`+v.Commit+`"`)
	if status == http.StatusCreated {
		c.Header("Location", "/v1/"+a.Kind.Plural()+"/"+a.ID+"/versions/"+strconv.Itoa(v.Number))
	}
	c.JSON(status, out)
}

func (s *Server) listVersions(c *gin.Context) {
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx, h := c.Request.Context(), handle(c)
	pg, next, err := h.Versions(ctx, quire.VersionState(c.Query("state")), opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]any, len(pg))
	for i, v := range pg {
		if out[i], err = s.versionView(ctx, h.Asset, v); err != nil {
			s.fail(c, err)
			return
		}
	}
	c.JSON(http.StatusOK, gin.H{"versions": out, "next_cursor": next})
}

func (s *Server) getVersion(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	h := handle(c)
	v, err := h.Version(c.Request.Context(), n)
	if err != nil {
		s.fail(c, err)
		return
	}
	if notModified(c, v.Commit) {
		return
	}
	s.writeVersion(c, http.StatusOK, h.Asset, v, nil)
}

func (s *Server) deleteVersion(c *gin.Context) {
	n, err := versionParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := handle(c).DeleteVersion(c.Request.Context(), n); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// versionAction serves promote and archive, which differ only in the use
// case.
func (s *Server) versionAction(do func(h *app.Handle, ctx context.Context, n int) (*quire.Version, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		n, err := s.bodylessAt(c, versionParam)
		if err != nil {
			s.fail(c, err)
			return
		}
		h := handle(c)
		v, err := do(h, c.Request.Context(), n)
		if err != nil {
			s.fail(c, err)
			return
		}
		s.writeVersion(c, http.StatusOK, h.Asset, v, nil)
	}
}

func (s *Server) diffVersions(c *gin.Context) {
	format := c.Query("format")
	if format != "" && format != "json" && format != "patch" {
		s.fail(c, quire.Errorf(quire.EINVALID, "format must be json or patch"))
		return
	}
	from, err1 := strconv.Atoi(c.Query("from"))
	to, err2 := strconv.Atoi(c.Query("to"))
	if err1 != nil || err2 != nil {
		s.fail(c, quire.Errorf(quire.EINVALID, "from and to must be positive version numbers"))
		return
	}
	files, err := handle(c).Diff(c.Request.Context(), from, to)
	if err != nil {
		s.fail(c, err)
		return
	}
	if format == "patch" || format == "" && c.GetHeader("Accept") == "text/x-diff" {
		var b []byte
		for _, f := range files {
			b = append(b, f.Patch...)
		}
		rawHeaders(c)
		c.Data(http.StatusOK, "text/x-diff; charset=utf-8", b)
		return
	}
	c.JSON(http.StatusOK, gin.H{"from": from, "to": to, "files": files})
}

func (s *Server) history(c *gin.Context) {
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	commits, next, err := handle(c).History(c.Request.Context(), opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"commits": commits, "next_cursor": next})
}
