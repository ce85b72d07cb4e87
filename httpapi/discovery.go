package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire/app"
	"github.com/quire/quire/skillpack"
)

// Archives and Agent Skills discovery (docs/clients.md): deterministic
// archives of a skill version, and the discovery index with its files,
// server-wide under /.well-known/agent-skills/ and per project under
// /v1/projects/{p}/agent-skills/. These and the other read routes of
// anonymousRoutes answer requests without a credential as the anonymous
// principal, which app lets read the published versions of public
// projects only.

// discoverySchema is the index's version field: the Agent Skills
// Discovery RFC v0.2.0 draft whose index carries files and package.
const discoveryVersion = "0.2.0"

// discoveryRoutes registers the archives and discovery routes; auth is
// the /v1 group's chain (authenticate, request limit, key use), which the
// well-known routes outside /v1 take too.
func (s *Server) discoveryRoutes(r *gin.Engine, v1 *gin.RouterGroup, auth []gin.HandlerFunc) {
	wk := r.Group("/.well-known/agent-skills", auth...)
	// The RFC asks GET and HEAD of everything an index names, the
	// package too.
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		wk.Handle(m, "/index.json", s.discoveryIndex)
		wk.Handle(m, "/:name/*path", s.discoveryFile)
		v1.Handle(m, "/projects/:projectID/agent-skills/index.json", s.discoveryIndex)
		v1.Handle(m, "/projects/:projectID/agent-skills/:name/*path", s.discoveryFile)
	}
}

// archiveRoutes registers a skill version's archives under the skill's
// tree (Server.assetTree), so the project-scoped address serves them too.
func (s *Server) archiveRoutes(t *gin.RouterGroup) {
	// The RFC asks GET and HEAD of everything an index names, the
	// package too.
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		t.Handle(m, "/versions/:version/archive.zip", s.skillArchive(skillpack.Zip))
		t.Handle(m, "/versions/:version/archive.tar.gz", s.skillArchive(skillpack.TarGz))
	}
}

// anonymousRoutes are the routes a request without a credential may
// take (GET and HEAD only), as the anonymous principal: reads of
// published versions, which app limits to public projects.
var anonymousRoutes = map[string]bool{
	"/v1/projects/:projectID/skills":                    true,
	"/v1/projects/:projectID/prompts":                   true,
	"/v1/skills/:id":                                    true,
	"/v1/prompts/:id":                                   true,
	"/v1/skills/:id/versions":                           true,
	"/v1/prompts/:id/versions":                          true,
	"/v1/skills/:id/versions/:version":                  true,
	"/v1/prompts/:id/versions/:version":                 true,
	"/v1/skills/:id/versions/:version/files":            true,
	"/v1/skills/:id/versions/:version/files/*file_path": true,
	"/v1/skills/:id/versions/:version/download":         true,
	"/v1/skills/:id/versions/:version/archive.zip":      true,
	"/v1/skills/:id/versions/:version/archive.tar.gz":   true,
	"/v1/prompts/:id/live":                              true,
	"/v1/projects/:projectID/agent-skills/index.json":   true,
	"/v1/projects/:projectID/agent-skills/:name/*path":  true,
	"/.well-known/agent-skills/index.json":              true,
	"/.well-known/agent-skills/:name/*path":             true,
}

// anonymousPosts are the POST routes a request without a credential may
// take: a render is a read (app.publicRender keeps it to published
// versions).
var anonymousPosts = map[string]bool{
	"/v1/prompts/:id/render": true,
}

// anonymousAllowed reports whether a request without a credential may go
// on as the anonymous principal.
func anonymousAllowed(c *gin.Context) bool {
	if c.GetHeader("Authorization") != "" {
		return false
	}
	path := globalPath(c.FullPath())
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead:
		return anonymousRoutes[path]
	case http.MethodPost:
		return anonymousPosts[path]
	}
	return false
}

// globalPath is the global route (/v1/skills/:id/…) whose handlers a
// project-scoped route (Server.mountAsset) runs, or path itself.
func globalPath(path string) string {
	for _, kind := range []string{"skills", "prompts"} {
		if rest, ok := strings.CutPrefix(path, "/v1/projects/:projectID/"+kind+"/:slug"); ok {
			return "/v1/" + kind + "/:id" + rest
		}
	}
	return path
}

// skillArchive answers version {version} (a number, "live" or a label)
// of a skill as a deterministic archive, with its sha256 as ETag and
// Repr-Digest.
func (s *Server) skillArchive(f skillpack.Format) gin.HandlerFunc {
	return func(c *gin.Context) {
		ref, err := app.ParseVersionRef(c.Param("version"))
		if err != nil {
			s.fail(c, err)
			return
		}
		ar, err := s.app.SkillArchive(c.Request.Context(), principal(c), c.Param("id"), ref, f)
		if err != nil {
			s.fail(c, err)
			return
		}
		rawHeaders(c)
		etag := skillpack.Digest(ar.Bytes)
		c.Header("Repr-Digest", skillpack.ReprDigest(ar.Bytes))
		c.Header("X-Quire-Version", strconv.Itoa(ar.Version))
		c.Header("X-Quire-Commit", ar.Commit)
		if notModified(c, etag) {
			return
		}
		c.Header("Content-Disposition", `attachment; filename="`+ar.Asset.Slug+"-v"+strconv.Itoa(ar.Version)+"."+string(f)+`"`)
		c.Data(http.StatusOK, f.ContentType(), ar.Bytes)
	}
}

// discoveryIndexView is the index document (RFC v0.2.0 draft).
type discoveryIndexView struct {
	Version string               `json:"version"`
	Skills  []discoverySkillView `json:"skills"`
}

type discoverySkillView struct {
	Name        string           `json:"name"`
	Description string           `json:"description"`
	Digest      string           `json:"digest"`
	Files       []skillpack.File `json:"files"`
	Package     discoveryPackage `json:"package"`
}

type discoveryPackage struct {
	URL    string `json:"url"`
	Digest string `json:"digest"`
}

func (s *Server) discoveryIndex(c *gin.Context) {
	skills, err := s.app.DiscoveryIndex(c.Request.Context(), principal(c), c.Param("projectID"))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := discoveryIndexView{Version: discoveryVersion, Skills: make([]discoverySkillView, len(skills))}
	for i, sk := range skills {
		out.Skills[i] = discoverySkillView{
			Name: sk.Name, Description: sk.Description, Digest: sk.Digest, Files: sk.Files,
			Package: discoveryPackage{
				// Path-absolute, resolved against the index's origin; the
				// version is pinned, so the package cannot move under a
				// client between the index and the download.
				URL:    "/v1/skills/" + sk.Asset.ID + "/versions/" + strconv.Itoa(sk.Version) + "/archive.tar.gz",
				Digest: sk.PackageDigest,
			},
		}
	}
	// Private indexes must not sit in shared caches.
	c.Header("Cache-Control", "private, no-cache")
	c.Header("Vary", "Authorization")
	c.JSON(http.StatusOK, out)
}

func (s *Server) discoveryFile(c *gin.Context) {
	path := strings.TrimPrefix(c.Param("path"), "/")
	b, f, err := s.app.DiscoveryFile(c.Request.Context(), principal(c), c.Param("projectID"), c.Param("name"), path)
	if err != nil {
		s.fail(c, err)
		return
	}
	rawHeaders(c)
	c.Header("Cache-Control", "private, no-cache")
	c.Header("Vary", "Authorization")
	if notModified(c, f.SHA) {
		return
	}
	c.Data(http.StatusOK, rawContentType(f.Path, b), b)
}

// clientRoutes documents the routes of this file (openapi.go).
var clientRoutes = []apiRoute{
	route("GET", "/v1/skills/{id}/versions/{version}/archive.zip", "skill files", "A deterministic zip of the version ({version}: a number, \"live\" or a label name): files at the root sorted by path, each with the commit's time and mode 0644 or 0755; ETag \"sha256:<hex>\" of the bytes and Repr-Digest. Anonymous callers: published versions of public projects", text(200, "application/zip"), etag(), conditional()),
	route("GET", "/v1/skills/{id}/versions/{version}/archive.tar.gz", "skill files", "The same as a deterministic tar.gz (the discovery index's package)", text(200, "application/gzip"), etag(), conditional()),
	route("HEAD", "/v1/skills/{id}/versions/{version}/archive.zip", "skill files", "Headers of the zip archive (ETag, Repr-Digest)", head()),
	route("HEAD", "/v1/skills/{id}/versions/{version}/archive.tar.gz", "skill files", "Headers of the tar.gz archive (ETag, Repr-Digest)", head()),
	route("GET", "/.well-known/agent-skills/index.json", "discovery", "Agent Skills discovery index (RFC v0.2.0): the live version of every skill the caller can read whose slug is an Agent Skills name; where two projects share a slug the older project's skill is listed", public(), ok(200, "DiscoveryIndex"), fails(401)),
	route("HEAD", "/.well-known/agent-skills/index.json", "discovery", "Headers of the discovery index", public(), head()),
	route("GET", "/.well-known/agent-skills/{name}/{path}", "discovery", "A file of a skill listed in the discovery index", public(), text(200, "*/*"), fails(401), fails(404)),
	route("HEAD", "/.well-known/agent-skills/{name}/{path}", "discovery", "Headers of a file of the discovery index", public(), head()),
	route("GET", "/v1/projects/{projectID}/agent-skills/index.json", "discovery", "One project's discovery index", public(), ok(200, "DiscoveryIndex"), fails(401)),
	route("HEAD", "/v1/projects/{projectID}/agent-skills/index.json", "discovery", "Headers of one project's discovery index", public(), head()),
	route("GET", "/v1/projects/{projectID}/agent-skills/{name}/{path}", "discovery", "A file of a skill of one project's discovery index", public(), text(200, "*/*"), fails(401), fails(404)),
	route("HEAD", "/v1/projects/{projectID}/agent-skills/{name}/{path}", "discovery", "Headers of a file of one project's discovery index", public(), head()),
}
