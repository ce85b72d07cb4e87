package app

import (
	"context"

	"github.com/google/uuid"
	"github.com/quire/quire"
)

// CreateAsset creates a skill or prompt (kind) in the project, with the
// name, slug and description of e.
func (h *ProjectHandle) CreateAsset(ctx context.Context, kind quire.Kind, e MetaEdit) (*quire.Asset, error) {
	a, p, pr := h.app, h.P, h.Project
	if err := h.need(quire.AccessWrite); err != nil {
		return nil, err
	}
	if err := noVisibility(e); err != nil {
		return nil, err
	}
	as := &quire.Asset{ProjectID: pr.ID, Kind: kind, CreatedBy: p.User.ID}
	if err := a.ApplyMeta(e, true, &as.Name, &as.Slug, &as.Description); err != nil {
		return nil, err
	}
	as.ID = uuid.NewString() // here, not in the store: the intent names it
	ev := a.assetEvent(quire.EventAssetCreated, p.Actor(), as, 0, "")
	ev.Data["name"] = as.Name
	if _, err := write(ctx, a, ev,
		func(ctx context.Context) (struct{}, error) { return struct{}{}, a.meta.CreateAsset(ctx, p.Actor(), as) },
		func(context.Context, struct{}) (*quire.Event, error) {
			ev.OccurredAt = a.now().UTC()
			return ev, nil
		}); err != nil {
		return nil, err
	}
	return as, nil
}

// Assets is a page of the skills or prompts (kind) of project ref, and the
// cursor of the next page ("" at the end).
func (a *App) Assets(ctx context.Context, p *quire.Principal, kind quire.Kind, project string, opts quire.ListOptions) ([]*quire.Asset, string, error) {
	pr, err := a.Project(ctx, p, project, quire.AccessRead)
	if err != nil {
		return nil, "", err
	}
	return a.meta.AssetsPage(ctx, kind, pr.ID, opts)
}

// UpdateAsset changes the name, slug or description of the asset.
func (h *Handle) UpdateAsset(ctx context.Context, e MetaEdit) (*quire.Asset, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.need(quire.AccessWrite); err != nil {
		return nil, err
	}
	if err := noVisibility(e); err != nil {
		return nil, err
	}
	oldSlug := as.Slug
	if err := a.ApplyMeta(e, false, &as.Name, &as.Slug, &as.Description); err != nil {
		return nil, err
	}
	if err := a.meta.UpdateAsset(ctx, p.Actor(), as); err != nil {
		return nil, err
	}
	if as.Slug != oldSlug {
		// The view holds the skill under its slug: move it.
		if v, err := a.versions.LiveVersion(ctx, as); err == nil {
			a.projectChange(ctx, p, as, v.Commit, oldSlug, "Rename skill "+oldSlug+" to "+as.Slug)
		}
	}
	return as, nil
}

// DeleteAsset deletes the asset with its repository.
func (h *Handle) DeleteAsset(ctx context.Context) error {
	a, p, as := h.app, h.P, h.Asset
	if err := h.need(quire.AccessWrite); err != nil {
		return err
	}
	deleted := false
	_, err := write(ctx, a, a.assetEvent(quire.EventAssetDeleted, p.Actor(), as, 0, ""),
		func(ctx context.Context) (struct{}, error) { return struct{}{}, a.meta.DeleteAsset(ctx, p.Actor(), as) },
		func(context.Context, struct{}) (*quire.Event, error) {
			deleted = true
			return a.assetEvent(quire.EventAssetDeleted, p.Actor(), as, 0, ""), nil
		})
	if deleted {
		a.projectChange(ctx, p, as, "", "", "Delete skill "+as.Slug) // after the event
	}
	return err
}
