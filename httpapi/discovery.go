package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/skillpack"
	"github.com/quire/quire/valid"
)

// Archives and Agent Skills discovery (docs/clients.md): deterministic
// archives of a skill version, and the discovery index with its files,
// server-wide under /.well-known/agent-skills/ and per project under
// /v1/projects/{p}/agent-skills/. These and the other read routes of
// anonymousRoutes answer requests without a credential as the anonymous
// principal, which app lets read the published versions of public
// projects only.

// discoverySchema identifies the index form of the Agent Skills
// Discovery RFC v0.2.0 as published (its $schema, an opaque URI clients
// match); the v0.1 form has none.
const discoverySchema = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

// discoveryRoutes registers the discovery routes; auth is the /v1
// group's chain (authenticate, request limit, key use), which the
// well-known routes outside /v1 take too. /.well-known/agent-skills is
// the RFC as published (v0.2.0), /.well-known/skills the v0.1 path and
// form that older installers ask. Installers look for them under the URL
// they are given too (the skills CLI asks {url}/.well-known/…), so a
// project answers both under /v1/projects/{p}, and one skill's address
// (/.well-known/agent-skills/{name}) under itself: see discoveryFile.
func (s *Server) discoveryRoutes(r *gin.Engine, v1 *gin.RouterGroup, auth []gin.HandlerFunc) {
	wk := r.Group("/.well-known", auth...)
	// The RFC asks GET and HEAD of everything an index names.
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		for _, g := range []struct {
			r    *gin.RouterGroup
			base string
		}{{wk, ""}, {v1, "/projects/:projectID/.well-known"}} {
			g.r.Handle(m, g.base+"/agent-skills/index.json", s.discoveryIndex)
			g.r.Handle(m, g.base+"/agent-skills/:name/*path", s.discoveryFile)
			g.r.Handle(m, g.base+"/skills/index.json", s.discoveryIndexV1)
			g.r.Handle(m, g.base+"/skills/:name/*path", s.discoveryFile)
		}
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
	"/v1/projects/:projectID/skills":                               true,
	"/v1/projects/:projectID/prompts":                              true,
	"/v1/skills/:id":                                               true,
	"/v1/prompts/:id":                                              true,
	"/v1/skills/:id/versions":                                      true,
	"/v1/prompts/:id/versions":                                     true,
	"/v1/skills/:id/versions/:version":                             true,
	"/v1/prompts/:id/versions/:version":                            true,
	"/v1/skills/:id/versions/:version/files":                       true,
	"/v1/skills/:id/versions/:version/files/*file_path":            true,
	"/v1/skills/:id/versions/:version/download":                    true,
	"/v1/skills/:id/versions/:version/archive.zip":                 true,
	"/v1/skills/:id/versions/:version/archive.tar.gz":              true,
	"/v1/prompts/:id/live":                                         true,
	"/v1/projects/:projectID/agent-skills/index.json":              true,
	"/v1/projects/:projectID/agent-skills/:name/*path":             true,
	"/.well-known/agent-skills/index.json":                         true,
	"/.well-known/agent-skills/:name/*path":                        true,
	"/.well-known/skills/index.json":                               true,
	"/.well-known/skills/:name/*path":                              true,
	"/v1/projects/:projectID/.well-known/agent-skills/index.json":  true,
	"/v1/projects/:projectID/.well-known/agent-skills/:name/*path": true,
	"/v1/projects/:projectID/.well-known/skills/index.json":        true,
	"/v1/projects/:projectID/.well-known/skills/:name/*path":       true,
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
	if headerValue(c.Request.Header, "Authorization") != "" {
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
		ar, err := handle(c).SkillArchive(c.Request.Context(), ref, f)
		if err != nil {
			s.fail(c, err)
			return
		}
		rawHeaders(c)
		discoveryCaching(c)
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

// discoveryCaching sets the caching headers of what discovery serves
// (indexes, their files, archives). What an answer holds depends on the
// credential, so it varies by Authorization. An anonymous answer -- the
// published skills of public projects, the same for every anonymous
// caller -- may be kept by any cache for a minute and read from any
// origin (CORS), so browser-based clients can install from it; an
// authenticated one is private and revalidated each time (its ETag makes
// that a 304). Credentialed answers get no CORS header: a page of
// another origin must not read them with the user's cookies or token.
func discoveryCaching(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Vary", "Authorization")
	if principal(c).IsAnonymous() {
		h.Set("Cache-Control", "public, max-age=60")
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "ETag, Repr-Digest, X-Quire-Version, X-Quire-Commit")
		return
	}
	h.Set("Cache-Control", "private, no-cache")
}

// discoveryIndexView is the index as the RFC v0.2.0 publishes it.
type discoveryIndexView struct {
	Schema string               `json:"$schema"`
	Skills []discoverySkillView `json:"skills"`
}

// discoverySkillView is one skill of the index: a skill that is its
// SKILL.md alone is that file ("skill-md"); any other is its
// deterministic .tar.gz ("archive"). The digest is over the artifact's
// bytes.
type discoverySkillView struct {
	Name        string       `json:"name"`
	Type        artifactType `json:"type"`
	Description string       `json:"description"`
	URL         string       `json:"url"`
	Digest      string       `json:"digest"`
}

// artifactType is how the index distributes a skill.
type artifactType string

const (
	artifactSkillMD artifactType = "skill-md"
	artifactArchive artifactType = "archive"
)

// discoveryIndexV1 is the v0.1 form: file paths, no digests.
type discoveryIndexV1 struct {
	Skills []discoverySkillV1 `json:"skills"`
}

type discoverySkillV1 struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Files       []string `json:"files"`
}

func (s *Server) discoveryIndex(c *gin.Context) {
	skills, ok := s.discoverySkills(c)
	if !ok {
		return
	}
	out := discoveryIndexView{Schema: discoverySchema, Skills: make([]discoverySkillView, len(skills))}
	for i, sk := range skills {
		e := discoverySkillView{Name: sk.Name, Type: artifactArchive, Description: sk.Description, Digest: sk.PackageDigest,
			// Path-absolute, resolved against the index's origin; the
			// version is pinned, so the archive cannot move under a
			// client between the index and the download.
			URL: "/v1/skills/" + sk.Asset.ID + "/versions/" + strconv.Itoa(sk.Version) + "/archive.tar.gz",
		}
		if len(sk.Files) == 1 && sk.Files[0].Path == valid.SkillFile {
			e.Type, e.Digest, e.URL = artifactSkillMD, sk.Files[0].Digest, discoveryBase(c, sk)+"/"+valid.SkillFile
		}
		out.Skills[i] = e
	}
	s.discoveryJSON(c, out)
}

// discoveryIndexV1 answers /.well-known/skills/index.json, the v0.1
// form older installers read: each skill's files by path, served under
// /.well-known/skills/{name}/.
func (s *Server) discoveryIndexV1(c *gin.Context) {
	skills, ok := s.discoverySkills(c)
	if !ok {
		return
	}
	out := discoveryIndexV1{Skills: make([]discoverySkillV1, len(skills))}
	for i, sk := range skills {
		files := make([]string, len(sk.Files))
		for j, f := range sk.Files {
			files[j] = f.Path
		}
		out.Skills[i] = discoverySkillV1{Name: sk.Name, Description: sk.Description, Files: files}
	}
	s.discoveryJSON(c, out)
}

// discoverySkills are the skills of the index c asks: the server's or
// a project's, or one skill's alone when asked under that skill's own
// address (discoveryFile). ok is false once c has failed.
func (s *Server) discoverySkills(c *gin.Context) (_ []app.DiscoverySkill, ok bool) {
	skills, err := s.app.DiscoveryIndex(c.Request.Context(), principal(c), c.Param("projectID"))
	if err != nil {
		s.fail(c, err)
		return nil, false
	}
	if name := c.Param("name"); name != "" {
		skills = slices.DeleteFunc(skills, func(sk app.DiscoverySkill) bool { return sk.Name != name })
		if len(skills) == 0 {
			s.fail(c, quire.Errorf(quire.ENOTFOUND, "skill not found"))
			return nil, false
		}
	}
	return skills, true
}

// discoveryBase is where the index c answers serves skill sk's files.
func discoveryBase(c *gin.Context, sk app.DiscoverySkill) string {
	if c.Param("projectID") != "" {
		return "/v1/projects/" + sk.Project.ID + "/agent-skills/" + sk.Name
	}
	return "/.well-known/agent-skills/" + sk.Name
}

// discoveryJSON answers an index with its caching headers and an ETag
// over its bytes, so a client revalidates it with a 304.
func (s *Server) discoveryJSON(c *gin.Context, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.fail(c, err)
		return
	}
	discoveryCaching(c)
	if notModified(c, skillpack.Digest(b)) {
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", b)
}

// discoveryFile answers a file of a listed skill. Asked for an index
// under the skill's own address ({name}/.well-known/agent-skills/
// index.json, or …/skills/…), it answers the index of that skill alone:
// that is where the skills CLI looks when given
// /.well-known/agent-skills/{name}. A skill's own file at that path is
// shadowed (valid skill content has no reason to hold one).
func (s *Server) discoveryFile(c *gin.Context) {
	path := strings.TrimPrefix(c.Param("path"), "/")
	switch path {
	case ".well-known/agent-skills/index.json":
		s.discoveryIndex(c)
		return
	case ".well-known/skills/index.json":
		s.discoveryIndexV1(c)
		return
	}
	b, f, err := s.app.DiscoveryFile(c.Request.Context(), principal(c), c.Param("projectID"), c.Param("name"), path)
	if err != nil {
		s.fail(c, err)
		return
	}
	rawHeaders(c)
	discoveryCaching(c)
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
	route("GET", "/.well-known/agent-skills/index.json", "discovery", "Agent Skills discovery index (RFC v0.2.0 as published: $schema, and per skill name, type skill-md or archive, description, url, digest of the artifact): the live version of every skill the caller can read whose slug is an Agent Skills name; where two projects share a slug the older project's skill is listed. ETag; anonymous answers are public for 60 s with Access-Control-Allow-Origin: *", public(), ok(200, "DiscoveryIndex"), etag(), conditional(), fails(401)),
	route("HEAD", "/.well-known/agent-skills/index.json", "discovery", "Headers of the discovery index", public(), head()),
	route("GET", "/.well-known/agent-skills/{name}/{path}", "discovery", "A file of a skill listed in the discovery index", public(), text(200, "*/*"), etag(), conditional(), fails(401), fails(404)),
	route("HEAD", "/.well-known/agent-skills/{name}/{path}", "discovery", "Headers of a file of the discovery index", public(), head()),
	route("GET", "/.well-known/skills/index.json", "discovery", "The same skills in the RFC's v0.1 form, for installers that ask this path: per skill name, description and files (paths); files are served under /.well-known/skills/{name}/", public(), ok(200, "DiscoveryIndexV1"), etag(), conditional(), fails(401)),
	route("HEAD", "/.well-known/skills/index.json", "discovery", "Headers of the v0.1 discovery index", public(), head()),
	route("GET", "/.well-known/skills/{name}/{path}", "discovery", "A file of a skill listed in the v0.1 discovery index", public(), text(200, "*/*"), etag(), conditional(), fails(401), fails(404)),
	route("HEAD", "/.well-known/skills/{name}/{path}", "discovery", "Headers of a file of the v0.1 discovery index", public(), head()),
	route("GET", "/v1/projects/{projectID}/.well-known/agent-skills/index.json", "discovery", "One project's discovery index where installers given the project's URL (/v1/projects/{p}) look for it", public(), ok(200, "DiscoveryIndex"), etag(), conditional(), fails(401)),
	route("HEAD", "/v1/projects/{projectID}/.well-known/agent-skills/index.json", "discovery", "Headers of it", public(), head()),
	route("GET", "/v1/projects/{projectID}/.well-known/agent-skills/{name}/{path}", "discovery", "A file of a skill of that index", public(), text(200, "*/*"), etag(), conditional(), fails(401), fails(404)),
	route("HEAD", "/v1/projects/{projectID}/.well-known/agent-skills/{name}/{path}", "discovery", "Headers of it", public(), head()),
	route("GET", "/v1/projects/{projectID}/.well-known/skills/index.json", "discovery", "One project's skills in the v0.1 form, where v0.1 installers given the project's URL look", public(), ok(200, "DiscoveryIndexV1"), etag(), conditional(), fails(401)),
	route("HEAD", "/v1/projects/{projectID}/.well-known/skills/index.json", "discovery", "Headers of it", public(), head()),
	route("GET", "/v1/projects/{projectID}/.well-known/skills/{name}/{path}", "discovery", "A file of a skill of that v0.1 index", public(), text(200, "*/*"), etag(), conditional(), fails(401), fails(404)),
	route("HEAD", "/v1/projects/{projectID}/.well-known/skills/{name}/{path}", "discovery", "Headers of it", public(), head()),
	route("GET", "/v1/projects/{projectID}/agent-skills/index.json", "discovery", "One project's discovery index", public(), ok(200, "DiscoveryIndex"), etag(), conditional(), fails(401)),
	route("HEAD", "/v1/projects/{projectID}/agent-skills/index.json", "discovery", "Headers of one project's discovery index", public(), head()),
	route("GET", "/v1/projects/{projectID}/agent-skills/{name}/{path}", "discovery", "A file of a skill of one project's discovery index", public(), text(200, "*/*"), etag(), conditional(), fails(401), fails(404)),
	route("HEAD", "/v1/projects/{projectID}/agent-skills/{name}/{path}", "discovery", "Headers of a file of one project's discovery index", public(), head()),
}
