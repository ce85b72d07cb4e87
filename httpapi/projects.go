package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

func (s *Server) projectRoutes(g *gin.RouterGroup) {
	g.POST("/projects", s.idempotent, s.createProject)
	g.GET("/projects", s.listProjects)
	g.GET("/projects/:projectID", s.getProject)
	g.PATCH("/projects/:projectID", s.updateProject)
	g.DELETE("/projects/:projectID", s.deleteProject)
	g.GET("/projects/:projectID/members", s.listMembers)
	g.POST("/projects/:projectID/members", s.putMember)
	g.PUT("/projects/:projectID/members/:userID", s.putMember)
	g.DELETE("/projects/:projectID/members/:userID", s.deleteMember)
}

// metaRequest is the body that creates or updates a project, skill or prompt.
type metaRequest struct {
	Name        *string `json:"name"`
	Slug        *string `json:"slug"`
	Description *string `json:"description"`
	// Visibility is a project's: "private" (the default) or "public".
	Visibility *string `json:"visibility,omitempty" enum:"private,public"`
}

// metaCreateRequest is metaRequest as a create reads it: the name is
// required (app.ApplyMeta). A type of its own so the document says so.
type metaCreateRequest struct {
	Name        *string `json:"name" openapi:"required"`
	Slug        *string `json:"slug"`
	Description *string `json:"description"`
	Visibility  *string `json:"visibility,omitempty" enum:"private,public"`
}

// decodeMeta decodes the request body (a metaRequest, or a
// metaCreateRequest on create) into a name, slug and description edit.
func decodeMeta[R metaRequest | metaCreateRequest](s *Server, c *gin.Context) (app.MetaEdit, error) {
	var req R
	err := s.decode(c, &req)
	return app.MetaEdit(req), err
}

// projectRequest is the body that updates a project: its metadata and
// its review policy.
type projectRequest struct {
	metaRequest
	ReviewPolicy *quire.ReviewPolicy `json:"review_policy"`
}

// project loads the project in the path and checks the caller's access.
func (s *Server) project(c *gin.Context, want quire.Access) (*quire.Project, error) {
	return s.app.Project(c.Request.Context(), principal(c), c.Param("projectID"), want)
}

// openProject opens the project in the path for the caller with want,
// the access its route needs before its request is read (the use case
// checks again); a failure has been answered when it reports false.
func (s *Server) openProject(c *gin.Context, want quire.Access) (*app.ProjectHandle, bool) {
	h, err := s.app.OpenProject(c.Request.Context(), principal(c), c.Param("projectID"), want)
	if err != nil {
		s.fail(c, err)
		return nil, false
	}
	return h, true
}

func (s *Server) createProject(c *gin.Context) {
	if err := principal(c).CheckAccount(); err != nil {
		s.fail(c, err) // before the body is read
		return
	}
	e, err := decodeMeta[metaCreateRequest](s, c)
	if err != nil {
		s.fail(c, err)
		return
	}
	pr, err := s.app.CreateProject(c.Request.Context(), principal(c), e)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Location", "/v1/projects/"+pr.ID)
	c.JSON(http.StatusCreated, gin.H{"project": pr})
}

func (s *Server) listProjects(c *gin.Context) {
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	visible, err := s.app.Projects(c.Request.Context(), principal(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	pg, next, err := app.Page(visible, opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"projects": pg, "next_cursor": next})
}

func (s *Server) getProject(c *gin.Context) {
	pr, err := s.project(c, quire.AccessRead)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"project": pr})
}

func (s *Server) updateProject(c *gin.Context) {
	h, ok := s.openProject(c, quire.AccessAdmin)
	if !ok {
		return
	}
	var req projectRequest
	if !s.bind(c, &req) {
		return
	}
	pr, err := h.Update(c.Request.Context(), app.ProjectEdit{MetaEdit: app.MetaEdit(req.metaRequest), ReviewPolicy: req.ReviewPolicy})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"project": pr})
}

func (s *Server) deleteProject(c *gin.Context) {
	if err := s.app.DeleteProject(c.Request.Context(), principal(c), c.Param("projectID")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (s *Server) listMembers(c *gin.Context) {
	pr, err := s.project(c, quire.AccessRead)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"members": pr.Members})
}

type memberRequest struct {
	UserID string            `json:"user_id"`
	Email  string            `json:"email"`
	Role   quire.ProjectRole `json:"role" openapi:"required"`
}

// putMember adds a member or changes a member's role; a user id in the
// path names the member over the body's.
func (s *Server) putMember(c *gin.Context) {
	h, ok := s.openProject(c, quire.AccessAdmin)
	if !ok {
		return
	}
	var req memberRequest
	if !s.bind(c, &req) {
		return
	}
	if id := c.Param("userID"); id != "" {
		req.UserID = id
	}
	m, pr, err := h.PutMember(c.Request.Context(), app.MemberEdit(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"member": m, "members": pr.Members})
}

func (s *Server) deleteMember(c *gin.Context) {
	if err := s.app.DeleteMember(c.Request.Context(), principal(c), c.Param("projectID"), c.Param("userID")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
