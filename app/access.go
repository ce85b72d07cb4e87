package app

import (
	"context"

	"github.com/quire/quire"
)

// Project resolves a project by id or slug and checks that p has want on
// it. A project p may not see is ENOTFOUND, as if it did not exist.
func (a *App) Project(ctx context.Context, p *quire.Principal, ref string, want quire.Access) (*quire.Project, error) {
	pr, err := a.meta.Project(ctx, ref)
	if err != nil {
		return nil, err
	}
	if err := p.CheckProject(pr, want); err != nil {
		return nil, err
	}
	return pr, nil
}

// Asset resolves an asset of kind by id or slug among the projects p can
// see, and checks p has want on its project. A slug naming assets in
// several visible projects is ECONFLICT, with their ids in the details.
func (a *App) Asset(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, want quire.Access) (*quire.Asset, error) {
	as, _, err := a.AssetIn(ctx, p, kind, ref, want)
	return as, err
}

// AssetIn is Asset that also returns the asset's project.
func (a *App) AssetIn(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, want quire.Access) (*quire.Asset, *quire.Project, error) {
	found, err := a.meta.FindAssets(ctx, kind, ref)
	if err != nil {
		return nil, nil, err
	}
	var match *quire.Asset
	var proj *quire.Project
	for _, as := range found {
		pr, err := a.meta.Project(ctx, as.ProjectID)
		if err != nil || p.ProjectAccess(pr) == quire.AccessNone {
			continue
		}
		if match != nil {
			return nil, nil, quire.Errorf(quire.ECONFLICT, "slug %q names a %s in several projects; use its id, or address it within its project (/v1/projects/{project}/%s/%s)", ref, kind, kind.Plural(), ref).
				WithDetail("ids", []string{match.ID, as.ID})
		}
		match, proj = as, pr
	}
	if match == nil {
		return nil, nil, quire.Errorf(quire.ENOTFOUND, "%s not found", kind)
	}
	if err := p.CheckProject(proj, want); err != nil {
		return nil, nil, err
	}
	return match, proj, nil
}

// ProjectAsset resolves an asset of kind by id or slug within one project
// (itself by id or slug), checking p has want on the project.
func (a *App) ProjectAsset(ctx context.Context, p *quire.Principal, project string, kind quire.Kind, ref string, want quire.Access) (*quire.Asset, *quire.Project, error) {
	pr, err := a.Project(ctx, p, project, want)
	if err != nil {
		return nil, nil, err
	}
	found, err := a.meta.FindAssets(ctx, kind, ref)
	if err != nil {
		return nil, nil, err
	}
	for _, as := range found {
		if as.ProjectID == pr.ID {
			return as, pr, nil
		}
	}
	return nil, nil, quire.Errorf(quire.ENOTFOUND, "%s not found", kind)
}
