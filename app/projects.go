package app

import (
	"context"

	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// Projects and their members. The rule that a project with an owner keeps
// one stays with the metadata store (gitstore/metarules.go): it is checked
// under the store's lock against its fresh index, so two concurrent
// changes cannot each leave the other to remove the last owner, which a
// check here, before the write, could not promise.

// MetaEdit is a change to the name, slug or description of a project,
// skill or prompt; nil fields are left as they are.
type MetaEdit struct {
	Name        *string
	Slug        *string
	Description *string
	// Visibility ("private" or "public") is a project's only; a skill or
	// prompt refuses it.
	Visibility *string
}

// applyVisibility sets pr's visibility from e, when given.
func applyVisibility(e MetaEdit, pr *quire.Project) error {
	if e.Visibility == nil {
		return nil
	}
	v := quire.Visibility(*e.Visibility)
	if v == "" || !v.Valid() {
		return quire.Errorf(quire.EINVALID, "visibility must be \"private\" or \"public\"")
	}
	pr.Visibility = v
	return nil
}

// noVisibility refuses a visibility on a skill or prompt.
func noVisibility(e MetaEdit) error {
	if e.Visibility != nil {
		return quire.Errorf(quire.EINVALID, "visibility is set on the project, not on a skill or prompt")
	}
	return nil
}

// ApplyMeta validates e and copies it into name, slug and desc. On create,
// the name is required and the slug is derived from it when not given.
func (a *App) ApplyMeta(e MetaEdit, create bool, name, slug, desc *string) error {
	if e.Name != nil || create {
		if e.Name == nil {
			return quire.Errorf(quire.EINVALID, "name is required")
		}
		if err := valid.Name("name", *e.Name, a.limits.MaxName); err != nil {
			return err
		}
		*name = *e.Name
	}
	switch {
	case e.Slug != nil && (*e.Slug != "" || !create):
		if err := valid.Slug(*e.Slug); err != nil {
			return err
		}
		*slug = *e.Slug
	case create:
		*slug = valid.SlugFrom(*name)
		if *slug == "" {
			return quire.Errorf(quire.EINVALID, "cannot derive a slug from the name; give one matching ^[a-z0-9][a-z0-9-]{0,62}$")
		}
	}
	if e.Description != nil {
		if err := valid.Text("description", *e.Description, valid.MaxDescription(a.limits)); err != nil {
			return err
		}
		*desc = *e.Description
	}
	return nil
}

// CreateProject creates a project owned by p's user. A key cannot.
func (a *App) CreateProject(ctx context.Context, p *quire.Principal, e MetaEdit) (*quire.Project, error) {
	if err := p.CheckAccount(); err != nil {
		return nil, err
	}
	pr := &quire.Project{CreatedBy: p.User.ID, Members: []quire.Member{{UserID: p.User.ID, Role: quire.ProjectOwner}}, Visibility: quire.Private}
	if err := a.ApplyMeta(e, true, &pr.Name, &pr.Slug, &pr.Description); err != nil {
		return nil, err
	}
	if err := applyVisibility(e, pr); err != nil {
		return nil, err
	}
	if err := a.meta.CreateProject(ctx, p.Actor(), pr); err != nil {
		return nil, err
	}
	return pr, nil
}

// Projects lists the projects p can see.
func (a *App) Projects(ctx context.Context, p *quire.Principal) ([]*quire.Project, error) {
	all, err := a.meta.Projects(ctx)
	if err != nil {
		return nil, err
	}
	visible := all[:0]
	for _, pr := range all {
		if p.ProjectAccess(pr) > quire.AccessNone {
			visible = append(visible, pr)
		}
	}
	return visible, nil
}

// ProjectEdit is a change to a project: its metadata and its review
// policy (nil: unchanged).
type ProjectEdit struct {
	MetaEdit
	ReviewPolicy *quire.ReviewPolicy
}

// UpdateProject changes project ref's name, slug, description or review
// policy.
func (h *ProjectHandle) Update(ctx context.Context, e ProjectEdit) (*quire.Project, error) {
	a, p, pr := h.app, h.P, h.Project
	if err := h.need(quire.AccessAdmin); err != nil {
		return nil, err
	}
	if err := a.ApplyMeta(e.MetaEdit, false, &pr.Name, &pr.Slug, &pr.Description); err != nil {
		return nil, err
	}
	if e.ReviewPolicy != nil {
		if err := checkPolicy(e.ReviewPolicy); err != nil {
			return nil, err
		}
		pr.ReviewPolicy = e.ReviewPolicy
	}
	// Owners (and admins) only, as every project change: AccessAdmin.
	if err := applyVisibility(e.MetaEdit, pr); err != nil {
		return nil, err
	}
	if err := a.meta.UpdateProject(ctx, p.Actor(), pr); err != nil {
		return nil, err
	}
	return pr, nil
}

// DeleteProject deletes project ref.
func (a *App) DeleteProject(ctx context.Context, p *quire.Principal, ref string) error {
	pr, err := a.Project(ctx, p, ref, quire.AccessAdmin)
	if err != nil {
		return err
	}
	if err := a.meta.DeleteProject(ctx, p.Actor(), pr.ID); err != nil {
		return err
	}
	// Its events and webhooks go too: nothing delivers a deleted
	// project's events (docs/events.md). Left behind, the delivery
	// worker removes them later.
	if a.events != nil {
		if err := a.events.RemoveProject(context.WithoutCancel(ctx), pr.ID, 0); err != nil {
			a.logError("remove a deleted project's events", err)
		}
	}
	return nil
}

// MemberEdit names a user, by id or else by email, and the role to give
// them in a project.
type MemberEdit struct {
	UserID string
	Email  string
	Role   quire.ProjectRole
}

// PutMember adds a member to project ref or changes a member's role, and
// returns the member and the project.
func (h *ProjectHandle) PutMember(ctx context.Context, e MemberEdit) (quire.Member, *quire.Project, error) {
	a, p, pr := h.app, h.P, h.Project
	if err := h.need(quire.AccessAdmin); err != nil {
		return quire.Member{}, nil, err
	}
	if !e.Role.Valid() {
		return quire.Member{}, nil, quire.Errorf(quire.EINVALID, "role must be viewer, editor or owner")
	}
	var (
		u   *quire.User
		err error
	)
	switch {
	case e.UserID != "":
		u, err = a.meta.User(ctx, e.UserID)
	case e.Email != "":
		u, err = a.meta.UserByEmail(ctx, e.Email)
	default:
		err = quire.Errorf(quire.EINVALID, "user_id or email is required")
	}
	if err != nil {
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			err = quire.Errorf(quire.EUNPROCESSABLE, "no such user")
		}
		return quire.Member{}, nil, err
	}
	found := false
	for i := range pr.Members {
		if pr.Members[i].UserID == u.ID {
			pr.Members[i].Role, found = e.Role, true
		}
	}
	if !found {
		pr.Members = append(pr.Members, quire.Member{UserID: u.ID, Role: e.Role})
	}
	if err := a.meta.UpdateProject(ctx, p.Actor(), pr); err != nil {
		return quire.Member{}, nil, err
	}
	return quire.Member{UserID: u.ID, Role: e.Role}, pr, nil
}

// DeleteMember removes user id from project ref's members.
func (a *App) DeleteMember(ctx context.Context, p *quire.Principal, ref, id string) error {
	pr, err := a.Project(ctx, p, ref, quire.AccessAdmin)
	if err != nil {
		return err
	}
	kept := pr.Members[:0]
	for _, m := range pr.Members {
		if m.UserID != id {
			kept = append(kept, m)
		}
	}
	if len(kept) == len(pr.Members) {
		return quire.Errorf(quire.ENOTFOUND, "member not found")
	}
	pr.Members = kept
	return a.meta.UpdateProject(ctx, p.Actor(), pr)
}
