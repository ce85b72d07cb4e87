package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
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
func (s *Server) assetRoutes(t *gin.RouterGroup, kind quire.Kind) {
	t.GET("", s.getAsset(kind))
	t.PATCH("", s.updateAsset(kind))
	t.DELETE("", s.deleteAsset(kind))
	t.GET("/versions", s.listVersions(kind))
	t.GET("/versions/:version", s.getVersion(kind))
	t.DELETE("/versions/:version", s.deleteVersion(kind))
	t.POST("/versions/:version/publish", s.publishVersion(kind))
	t.POST("/versions/:version/promote", s.promoteVersion(kind))
	t.POST("/versions/:version/archive", s.archiveVersion(kind))
	t.GET("/diff", s.diffVersions(kind))
	t.GET("/history", s.history(kind))
}

// scopedAsset resolves {projectID} (id or slug) and {slug} (the asset's
// slug or id within that project) to the asset, and sets {id} to its id,
// so the handlers of the asset's tree serve the project-scoped address
// exactly as the global one. A project or asset the caller cannot see is
// 404; each handler checks the access it needs again, by id.
func (s *Server) scopedAsset(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		a, _, err := s.app.ProjectAsset(c.Request.Context(), principal(c), c.Param("projectID"), kind, c.Param("slug"), quire.AccessRead)
		if err != nil {
			s.fail(c, err)
			return
		}
		c.Params = append(c.Params, gin.Param{Key: "id", Value: a.ID})
		c.Next()
	}
}

func (s *Server) createAsset(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		a, err := s.app.CreateAsset(c.Request.Context(), principal(c), kind, c.Param("projectID"), metaInput[metaCreateRequest](s, c))
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

func (s *Server) getAsset(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		a, err := s.app.Asset(c.Request.Context(), principal(c), kind, c.Param("id"), quire.AccessRead)
		s.respond(c, http.StatusOK, string(kind), a, err)
	}
}

func (s *Server) updateAsset(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		a, err := s.app.UpdateAsset(c.Request.Context(), principal(c), kind, c.Param("id"), metaInput[metaRequest](s, c))
		s.respond(c, http.StatusOK, string(kind), a, err)
	}
}

func (s *Server) deleteAsset(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := s.app.DeleteAsset(c.Request.Context(), principal(c), kind, c.Param("id")); err != nil {
			s.fail(c, err)
			return
		}
		c.Status(http.StatusNoContent)
	}
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

func (s *Server) listVersions(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		opts, err := listOptions(c)
		if err != nil {
			s.fail(c, err)
			return
		}
		ctx := c.Request.Context()
		a, pg, next, err := s.app.Versions(ctx, principal(c), kind, c.Param("id"), quire.VersionState(c.Query("state")), opts)
		if err != nil {
			s.fail(c, err)
			return
		}
		out := make([]any, len(pg))
		for i, v := range pg {
			if out[i], err = s.versionView(ctx, a, v); err != nil {
				s.fail(c, err)
				return
			}
		}
		c.JSON(http.StatusOK, gin.H{"versions": out, "next_cursor": next})
	}
}

func (s *Server) getVersion(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		n, err := versionParam(c)
		if err != nil {
			s.fail(c, err)
			return
		}
		a, v, err := s.app.Version(c.Request.Context(), principal(c), kind, c.Param("id"), n)
		if err != nil {
			s.fail(c, err)
			return
		}
		if notModified(c, v.Commit) {
			return
		}
		s.writeVersion(c, http.StatusOK, a, v, nil)
	}
}

func (s *Server) deleteVersion(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		n, err := versionParam(c)
		if err != nil {
			s.fail(c, err)
			return
		}
		if err := s.app.DeleteVersion(c.Request.Context(), principal(c), kind, c.Param("id"), n); err != nil {
			s.fail(c, err)
			return
		}
		c.Status(http.StatusNoContent)
	}
}

// versionAction serves publish, promote and archive, which differ only in
// the use case.
func (s *Server) versionAction(kind quire.Kind, do func(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, n int) (*quire.Asset, *quire.Version, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		n, err := s.bodylessAt(c, versionParam)
		if err != nil {
			s.fail(c, err)
			return
		}
		a, v, err := do(c.Request.Context(), principal(c), kind, c.Param("id"), n)
		if err != nil {
			s.fail(c, err)
			return
		}
		s.writeVersion(c, http.StatusOK, a, v, nil)
	}
}

func (s *Server) publishVersion(kind quire.Kind) gin.HandlerFunc {
	return s.publishReviewed(kind) // its body may override the review policy (reviews.go)
}

func (s *Server) promoteVersion(kind quire.Kind) gin.HandlerFunc {
	return s.versionAction(kind, s.app.PromoteVersion)
}

func (s *Server) archiveVersion(kind quire.Kind) gin.HandlerFunc {
	return s.versionAction(kind, s.app.ArchiveVersion)
}

func (s *Server) diffVersions(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
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
		files, err := s.app.Diff(c.Request.Context(), principal(c), kind, c.Param("id"), from, to)
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
}

func (s *Server) history(kind quire.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		opts, err := listOptions(c)
		if err != nil {
			s.fail(c, err)
			return
		}
		commits, next, err := s.app.History(c.Request.Context(), principal(c), kind, c.Param("id"), opts)
		if err != nil {
			s.fail(c, err)
			return
		}
		c.JSON(http.StatusOK, gin.H{"commits": commits, "next_cursor": next})
	}
}
