package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

func newUUID() string { return uuid.NewString() }

func (s *Server) projectRoutes(g *gin.RouterGroup) {
	g.POST("/projects", s.createProject)
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
}

// apply validates req and copies it into name, slug and description. On
// create, name is required and the slug is derived from it when omitted.
func (s *Server) applyMeta(req *metaRequest, create bool, name, slug, desc *string) error {
	if req.Name != nil || create {
		if err := requireString("name", req.Name); err != nil {
			return err
		}
		if err := valid.Name("name", *req.Name, s.limits.MaxName); err != nil {
			return err
		}
		*name = *req.Name
	}
	switch {
	case req.Slug != nil && (*req.Slug != "" || !create):
		if err := valid.Slug(*req.Slug); err != nil {
			return err
		}
		*slug = *req.Slug
	case create:
		*slug = valid.SlugFrom(*name)
		if *slug == "" {
			return quire.Errorf(quire.EINVALID, "cannot derive a slug from the name; give one matching ^[a-z0-9][a-z0-9-]{0,62}$")
		}
	}
	if req.Description != nil {
		if err := valid.Text("description", *req.Description, 10*s.limits.MaxName); err != nil {
			return err
		}
		*desc = *req.Description
	}
	return nil
}

// project loads the project in the path and checks the caller's access.
func (s *Server) project(c *gin.Context, want quire.Access) (*quire.Project, error) {
	return s.app.Project(c.Request.Context(), principal(c), c.Param("projectID"), want)
}

func (s *Server) createProject(c *gin.Context) {
	p := principal(c)
	if err := p.CheckAccount(); err != nil {
		s.fail(c, err)
		return
	}
	var req metaRequest
	if err := s.decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	pr := &quire.Project{CreatedBy: p.User.ID, Members: []quire.Member{{UserID: p.User.ID, Role: quire.ProjectOwner}}}
	if err := s.applyMeta(&req, true, &pr.Name, &pr.Slug, &pr.Description); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.meta.CreateProject(c.Request.Context(), p.Actor(), pr); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, gin.H{"project": pr})
}

func (s *Server) listProjects(c *gin.Context) {
	p := principal(c)
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	all, err := s.meta.Projects(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	visible := all[:0]
	for _, pr := range all {
		if p.ProjectAccess(pr) > quire.AccessNone {
			visible = append(visible, pr)
		}
	}
	pg, next, err := paginate(visible, opts)
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
	pr, err := s.project(c, quire.AccessAdmin)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req metaRequest
	if err := s.decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.applyMeta(&req, false, &pr.Name, &pr.Slug, &pr.Description); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.meta.UpdateProject(c.Request.Context(), principal(c).Actor(), pr); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"project": pr})
}

func (s *Server) deleteProject(c *gin.Context) {
	pr, err := s.project(c, quire.AccessAdmin)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.meta.DeleteProject(c.Request.Context(), principal(c).Actor(), pr.ID); err != nil {
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
	Role   quire.ProjectRole `json:"role"`
}

// putMember adds a member or changes a member's role.
func (s *Server) putMember(c *gin.Context) {
	pr, err := s.project(c, quire.AccessAdmin)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req memberRequest
	if err := s.decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if id := c.Param("userID"); id != "" {
		req.UserID = id
	}
	if !req.Role.Valid() {
		s.fail(c, quire.Errorf(quire.EINVALID, "role must be viewer, editor or owner"))
		return
	}
	ctx := c.Request.Context()
	var u *quire.User
	switch {
	case req.UserID != "":
		u, err = s.meta.User(ctx, req.UserID)
	case req.Email != "":
		u, err = s.meta.UserByEmail(ctx, req.Email)
	default:
		err = quire.Errorf(quire.EINVALID, "user_id or email is required")
	}
	if err != nil {
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			err = quire.Errorf(quire.EUNPROCESSABLE, "no such user")
		}
		s.fail(c, err)
		return
	}
	found := false
	for i := range pr.Members {
		if pr.Members[i].UserID == u.ID {
			pr.Members[i].Role, found = req.Role, true
		}
	}
	if !found {
		pr.Members = append(pr.Members, quire.Member{UserID: u.ID, Role: req.Role})
	}
	if err := s.meta.UpdateProject(ctx, principal(c).Actor(), pr); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"member": quire.Member{UserID: u.ID, Role: req.Role}, "members": pr.Members})
}

func (s *Server) deleteMember(c *gin.Context) {
	pr, err := s.project(c, quire.AccessAdmin)
	if err != nil {
		s.fail(c, err)
		return
	}
	id := c.Param("userID")
	kept := pr.Members[:0]
	for _, m := range pr.Members {
		if m.UserID != id {
			kept = append(kept, m)
		}
	}
	if len(kept) == len(pr.Members) {
		s.fail(c, quire.Errorf(quire.ENOTFOUND, "member not found"))
		return
	}
	pr.Members = kept
	if err := s.meta.UpdateProject(c.Request.Context(), principal(c).Actor(), pr); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
