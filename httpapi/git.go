package httpapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
)

// Git smart HTTP (DESIGN.md §6):
//
//	GET  /git/{project}/{skills|prompts}/{asset}.git/info/refs?service=git-upload-pack|git-receive-pack
//	POST /git/{project}/{skills|prompts}/{asset}.git/git-upload-pack
//	POST /git/{project}/{skills|prompts}/{asset}.git/git-receive-pack
//	…    /git/{project}.git/…   the project's own repository, read-only
//
// {project} and {asset} are ids or slugs; ".git" may be left out. The
// token is the password of HTTP Basic (any user name) or a Bearer header.
// Reading needs read access to the project; a push with less than write
// access is read and every ref update refused with the reason, so git
// prints it. The protocol itself is gitstore's (quire.GitService).

// gitTarget is a parsed /git/ path.
type gitTarget struct {
	project  string
	kind     quire.Kind
	asset    string
	endpoint string // info/refs, git-upload-pack or git-receive-pack
}

func parseGitPath(p string) (gitTarget, bool) {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(parts) >= 2 && parts[1] != "skills" && parts[1] != "prompts" {
		// /git/{project}.git/…: the project's own repository.
		t := gitTarget{project: strings.TrimSuffix(parts[0], ".git"), kind: quire.KindProject, endpoint: strings.Join(parts[1:], "/")}
		return t, t.project != ""
	}
	if len(parts) < 4 {
		return gitTarget{}, false
	}
	t := gitTarget{project: parts[0], asset: strings.TrimSuffix(parts[2], ".git"), endpoint: strings.Join(parts[3:], "/")}
	switch parts[1] {
	case "skills":
		t.kind = quire.KindSkill
	case "prompts":
		t.kind = quire.KindPrompt
	default:
		return gitTarget{}, false
	}
	if t.project == "" || t.asset == "" {
		return gitTarget{}, false
	}
	return t, true
}

// gitToken finds the credential of a git request: a Bearer header, or the
// Basic password (or user name, for https://TOKEN@host/... URLs).
func gitToken(r *http.Request) string {
	if t := bearer(r); t != "" {
		return t
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return ""
	}
	isToken := func(s string) bool {
		return strings.HasPrefix(s, quire.SessionPrefix) || strings.HasPrefix(s, quire.APIKeyPrefix)
	}
	if pass == "" || !isToken(pass) && isToken(user) {
		return user
	}
	return pass
}

// gitFail answers a git request with an error. A 401 carries the challenge
// that makes git ask for (or fetch from a helper) a user name and token.
func (s *Server) gitFail(c *gin.Context, err error) {
	if quire.ErrorCode(err) == quire.EUNAUTHORIZED {
		c.Header("WWW-Authenticate", `Basic realm="quire"`)
	}
	s.fail(c, err)
}

func (s *Server) serveGit(c *gin.Context) {
	// As git http-backend does: never cache anything of the protocol.
	c.Header("Cache-Control", "no-cache, max-age=0, must-revalidate")
	c.Header("Pragma", "no-cache")
	c.Header("Expires", "Fri, 01 Jan 1980 00:00:00 GMT")

	t, ok := parseGitPath(c.Param("path"))
	if !ok {
		s.fail(c, quire.Errorf(quire.ENOTFOUND, "no such git repository path; use /git/{project}/skills/{skill}.git, /git/{project}/prompts/{prompt}.git or /git/{project}.git"))
		return
	}
	var service, method string
	switch t.endpoint {
	case "info/refs":
		service, method = c.Query("service"), http.MethodGet
	case quire.GitUploadPack, quire.GitReceivePack:
		service, method = t.endpoint, http.MethodPost
	default:
		s.fail(c, quire.Errorf(quire.ENOTFOUND, "%s is not served: quire speaks git's smart HTTP protocol only", t.endpoint))
		return
	}
	if c.Request.Method != method && !(method == http.MethodGet && c.Request.Method == http.MethodHead) {
		c.Header("Allow", method)
		s.fail(c, errMethodNotAllowed)
		return
	}

	if err := oneAuthorization(c.Request); err != nil {
		s.fail(c, err)
		return
	}
	// A clone without a credential is the anonymous caller, who may
	// fetch the published versions of public projects (below).
	token := gitToken(c.Request)
	if token == "" && service != quire.GitUploadPack {
		s.gitFail(c, quire.Errorf(quire.EUNAUTHORIZED, "missing credential: use a token as the password of HTTP Basic, or send Authorization: Bearer <token>"))
		return
	}
	p, err := s.pipe.Admit(c.Request.Context(), token, s.clientIP(c), true) // git use counts like API use
	if err != nil {
		s.gitFail(c, err)
		return
	}
	requestOf(c).principal = p
	a, pr, err := s.gitAsset(c, p, t)
	if err != nil {
		s.gitFail(c, err)
		return
	}
	if service != quire.GitUploadPack && service != quire.GitReceivePack {
		s.fail(c, quire.Errorf(quire.EFORBIDDEN, "the dumb HTTP protocol is not supported; use git 1.6.6 or newer"))
		return
	}

	ctx := c.Request.Context()
	if p.IsAnonymous() {
		ctx = quire.WithPublishedOnly(ctx)
	}
	// Protocol v2 is spoken by upload-pack only; a push stays on v0.
	protocol := 0
	if service == quire.GitUploadPack {
		protocol = quire.GitProtocolVersion(c.GetHeader("Git-Protocol"))
		c.Header("Vary", "Git-Protocol")
	}
	if t.endpoint == "info/refs" {
		var buf bytes.Buffer
		if err := s.git.AdvertiseRefs(ctx, a, service, protocol, &buf); err != nil {
			s.fail(c, err)
			return
		}
		c.Data(http.StatusOK, "application/x-"+service+"-advertisement", buf.Bytes())
		return
	}

	if ct := c.ContentType(); ct != "application/x-"+service+"-request" {
		s.fail(c, quire.Errorf(quire.EINVALID, "Content-Type must be application/x-%s-request", service))
		return
	}
	body := io.Reader(c.Request.Body)
	switch enc := strings.ToLower(c.GetHeader("Content-Encoding")); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(c.Request.Body)
		if err != nil {
			s.fail(c, quire.Errorf(quire.EINVALID, "request body is not valid gzip"))
			return
		}
		defer zr.Close()
		body = zr
	default:
		s.fail(c, quire.Errorf(quire.EINVALID, "unsupported Content-Encoding %q", enc))
		return
	}
	w := &gitResponse{w: c.Writer, contentType: "application/x-" + service + "-result"}
	if service == quire.GitUploadPack {
		err = s.git.UploadPack(ctx, a, protocol, body, w)
	} else {
		err = s.git.ReceivePack(ctx, s.app.Push(p, a, pr, s.reviewLink(c, a)), body, w)
	}
	if err != nil {
		if !w.started {
			s.fail(c, err)
			return
		}
		c.Error(err) // for the request log; the client saw an in-band error
		return
	}
	if !w.started {
		// Nothing to say (a client that wanted nothing): an empty result.
		c.Data(http.StatusOK, w.contentType, nil)
	}
}

// gitAsset resolves the project and the asset of a git path, as the
// principal may see them: anything else is not found. The project's own
// repository is addressed as quire.ProjectRepo.
func (s *Server) gitAsset(c *gin.Context, p *quire.Principal, t gitTarget) (*quire.Asset, *quire.Project, error) {
	var a *quire.Asset
	var pr *quire.Project
	var err error
	if t.kind == quire.KindProject {
		a, pr, err = s.app.ProjectRepo(c.Request.Context(), p, t.project, quire.AccessRead)
	} else {
		a, pr, err = s.app.ProjectAsset(c.Request.Context(), p, t.project, t.kind, t.asset, quire.AccessRead)
	}
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return nil, nil, quire.Errorf(quire.ENOTFOUND, "repository not found")
	}
	return a, pr, err
}

// gitResponse sets the result's content type on the first write, so an
// error before any output can still be an APIError.
type gitResponse struct {
	w           gin.ResponseWriter
	contentType string
	started     bool
}

func (g *gitResponse) Write(p []byte) (int, error) {
	if !g.started {
		g.started = true
		g.w.Header().Set("Content-Type", g.contentType)
		g.w.WriteHeader(http.StatusOK)
	}
	return g.w.Write(p)
}
