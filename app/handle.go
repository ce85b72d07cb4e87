package app

import (
	"context"

	"github.com/quire/quire"
)

// Handle is one request's authorized hold on one asset: the asset and its
// project, resolved once, and the caller. Its methods are the per-asset
// use cases. A door opens it with the access its route needs, then decodes
// its request, then calls one method: so a caller who may not act learns
// nothing from how its request is formed (a malformed body of a forbidden
// request is still forbidden), and nothing is resolved twice.
//
// Each method checks the access it needs itself (need, which looks
// nothing up): what a door opened with is its precondition, never the
// rule.
type Handle struct {
	app     *App
	P       *quire.Principal
	Asset   *quire.Asset
	Project *quire.Project
}

// Open resolves asset ref of kind (id or slug) among the projects p can
// see and checks p has want on its project; see AssetIn.
func (a *App) Open(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, want quire.Access) (*Handle, error) {
	as, pr, err := a.AssetIn(ctx, p, kind, ref, want)
	if err != nil {
		return nil, err
	}
	return &Handle{app: a, P: p, Asset: as, Project: pr}, nil
}

// OpenIn is Open with the asset named within project (id or slug).
func (a *App) OpenIn(ctx context.Context, p *quire.Principal, project string, kind quire.Kind, ref string, want quire.Access) (*Handle, error) {
	as, pr, err := a.ProjectAsset(ctx, p, project, kind, ref, want)
	if err != nil {
		return nil, err
	}
	return &Handle{app: a, P: p, Asset: as, Project: pr}, nil
}

// handle is a Handle on as in pr for p, for use cases that resolved the
// asset another way (the git door, a background job).
func (a *App) handle(p *quire.Principal, as *quire.Asset, pr *quire.Project) *Handle {
	return &Handle{app: a, P: p, Asset: as, Project: pr}
}

// need checks the caller has want on the asset's project.
func (h *Handle) need(want quire.Access) error { return h.P.CheckProject(h.Project, want) }

// Need is need for a door's precondition: a route that reads a body
// checks the access it needs before reading it. The use case checks again.
func (h *Handle) Need(want quire.Access) error { return h.need(want) }

// needPrompt is need for a use case only prompts have: any other asset
// is not found, as a prompt of its id would not be.
func (h *Handle) needPrompt(want quire.Access) error {
	if h.Asset.Kind != quire.KindPrompt {
		return quire.Errorf(quire.ENOTFOUND, "prompt not found")
	}
	return h.need(want)
}

// needSkill is needPrompt for skills.
func (h *Handle) needSkill(want quire.Access) error {
	if h.Asset.Kind != quire.KindSkill {
		return quire.Errorf(quire.ENOTFOUND, "skill not found")
	}
	return h.need(want)
}

// ProjectHandle is Handle for one project: the project resolved once, and
// the caller. Its methods are the project's use cases, each checking the
// access it needs itself.
type ProjectHandle struct {
	app     *App
	P       *quire.Principal
	Project *quire.Project
}

// OpenProject resolves project ref (id or slug) for p and checks p has
// want on it; see App.Project.
func (a *App) OpenProject(ctx context.Context, p *quire.Principal, ref string, want quire.Access) (*ProjectHandle, error) {
	pr, err := a.Project(ctx, p, ref, want)
	if err != nil {
		return nil, err
	}
	return &ProjectHandle{app: a, P: p, Project: pr}, nil
}

// need checks the caller has want on the project.
func (h *ProjectHandle) need(want quire.Access) error { return h.P.CheckProject(h.Project, want) }
