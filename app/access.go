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
		return nil, anonymousMiss(p, err)
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
		return nil, nil, anonymousMiss(p, quire.Errorf(quire.ENOTFOUND, "%s not found", kind))
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
	return nil, nil, anonymousMiss(p, quire.Errorf(quire.ENOTFOUND, "%s not found", kind))
}

// anonymousMiss turns a failed lookup of an anonymous caller into "sign
// in": what it asked for may exist in a private project, and a missing
// thing must answer as a private one does.
func anonymousMiss(p *quire.Principal, err error) error {
	if p.IsAnonymous() && quire.ErrorCode(err) == quire.ENOTFOUND {
		return quire.ErrSignIn()
	}
	return err
}

// requireCredential refuses an anonymous caller a read that would show
// more than published versions (history, payloads, usage, members).
func requireCredential(p *quire.Principal) error {
	if p.IsAnonymous() {
		return quire.ErrSignIn()
	}
	return nil
}

// accessSignals is the metadata store as app uses it: every write that
// may take access away (a user, an API key, a project's members or
// visibility) wakes the open event streams of this process to check
// their callers again, so they need not wait for the periodic re-check.
type accessSignals struct {
	quire.MetaStore
	changed func()
}

func (m accessSignals) UpdateUser(ctx context.Context, by quire.Actor, u *quire.User) error {
	defer m.changed()
	return m.MetaStore.UpdateUser(ctx, by, u)
}

func (m accessSignals) DeleteUser(ctx context.Context, by quire.Actor, id string) error {
	defer m.changed()
	return m.MetaStore.DeleteUser(ctx, by, id)
}

func (m accessSignals) UpdateAPIKey(ctx context.Context, by quire.Actor, k *quire.APIKey) error {
	defer m.changed()
	return m.MetaStore.UpdateAPIKey(ctx, by, k)
}

func (m accessSignals) DeleteAPIKey(ctx context.Context, by quire.Actor, id string) error {
	defer m.changed()
	return m.MetaStore.DeleteAPIKey(ctx, by, id)
}

func (m accessSignals) UpdateProject(ctx context.Context, by quire.Actor, p *quire.Project) error {
	defer m.changed()
	return m.MetaStore.UpdateProject(ctx, by, p)
}

func (m accessSignals) DeleteProject(ctx context.Context, by quire.Actor, id string) error {
	defer m.changed()
	return m.MetaStore.DeleteProject(ctx, by, id)
}
