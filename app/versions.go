package app

import (
	"context"

	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// The version life cycle of skills and prompts: open a draft, list and
// read versions, delete a draft, publish, promote, archive, diff and
// history. Each use case resolves the asset and authorizes the caller
// once, then calls the version store, which holds the single write path
// (lock, edit, commit, compare-and-swap; change hooks after the lock).

// CreateVersion opens a draft of the asset ref from base (the live
// version, a version, or empty).
func (a *App) CreateVersion(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, base quire.Base) (*quire.Asset, *quire.Version, error) {
	as, err := a.Asset(ctx, p, kind, ref, quire.AccessWrite)
	if err != nil {
		return nil, nil, err
	}
	v, err := a.versions.CreateVersion(ctx, p.Actor(), as, base, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := a.emit(ctx, a.versionEvent(quire.EventVersionCreated, p.Actor(), as, v)); err != nil {
		return nil, nil, err
	}
	return as, v, nil
}

// Versions lists a page of the asset's versions in state ("" for any).
func (a *App) Versions(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, state quire.VersionState, opts quire.ListOptions) (*quire.Asset, []*quire.Version, string, error) {
	as, err := a.Asset(ctx, p, kind, ref, quire.AccessRead)
	if err != nil {
		return nil, nil, "", err
	}
	switch state {
	case "", quire.StateDraft, quire.StatePublished, quire.StateArchived:
	default:
		return nil, nil, "", quire.Errorf(quire.EINVALID, "state must be draft, published or archived")
	}
	pg, next, err := a.versions.VersionsPage(ctx, as, state, opts)
	if err != nil {
		return nil, nil, "", err
	}
	return as, pg, next, nil
}

// Version returns version n of the asset.
func (a *App) Version(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, n int) (*quire.Asset, *quire.Version, error) {
	as, err := a.Asset(ctx, p, kind, ref, quire.AccessRead)
	if err != nil {
		return nil, nil, err
	}
	v, err := a.versions.Version(ctx, as, n)
	if err != nil {
		return nil, nil, err
	}
	return as, v, nil
}

// DeleteVersion deletes draft n; its number is never reused.
func (a *App) DeleteVersion(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, n int) error {
	as, err := a.Asset(ctx, p, kind, ref, quire.AccessWrite)
	if err != nil {
		return err
	}
	if err := a.versions.DeleteVersion(ctx, p.Actor(), as, n); err != nil {
		return err
	}
	return a.emit(ctx, a.assetEvent(quire.EventVersionDeleted, p.Actor(), as, n, ""))
}

// PublishVersion publishes draft n and makes it live, once it passes its
// kind's publish check.
func (a *App) PublishVersion(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, n int) (*quire.Asset, *quire.Version, error) {
	as, err := a.Asset(ctx, p, kind, ref, quire.AccessWrite)
	if err != nil {
		return nil, nil, err
	}
	v, err := a.versions.PublishVersion(ctx, p.Actor(), as, n, a.publishCheck(ctx, as, n))
	if err != nil {
		return nil, nil, err
	}
	if err := a.emit(ctx, a.versionEvent(quire.EventVersionPublished, p.Actor(), as, v)); err != nil {
		return nil, nil, err
	}
	return as, v, nil
}

// PromoteVersion makes published version n live (a rollback when older).
func (a *App) PromoteVersion(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, n int) (*quire.Asset, *quire.Version, error) {
	as, err := a.Asset(ctx, p, kind, ref, quire.AccessWrite)
	if err != nil {
		return nil, nil, err
	}
	v, err := a.versions.PromoteVersion(ctx, p.Actor(), as, n)
	if err != nil {
		return nil, nil, err
	}
	if err := a.emit(ctx, a.versionEvent(quire.EventVersionPromoted, p.Actor(), as, v)); err != nil {
		return nil, nil, err
	}
	return as, v, nil
}

// ArchiveVersion archives a draft, or a published version that is not live.
func (a *App) ArchiveVersion(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, n int) (*quire.Asset, *quire.Version, error) {
	as, err := a.Asset(ctx, p, kind, ref, quire.AccessWrite)
	if err != nil {
		return nil, nil, err
	}
	v, err := a.versions.ArchiveVersion(ctx, p.Actor(), as, n)
	if err != nil {
		return nil, nil, err
	}
	if err := a.emit(ctx, a.versionEvent(quire.EventVersionArchived, p.Actor(), as, v)); err != nil {
		return nil, nil, err
	}
	return as, v, nil
}

// Diff compares the files of versions from and to.
func (a *App) Diff(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, from, to int) ([]quire.FileDiff, error) {
	if from <= 0 || to <= 0 {
		return nil, quire.Errorf(quire.EINVALID, "from and to must be positive version numbers")
	}
	as, err := a.Asset(ctx, p, kind, ref, quire.AccessRead)
	if err != nil {
		return nil, err
	}
	return a.versions.Diff(ctx, as, from, to)
}

// History is a page of the commits of the asset's repository.
func (a *App) History(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, opts quire.ListOptions) ([]quire.Commit, string, error) {
	as, err := a.Asset(ctx, p, kind, ref, quire.AccessRead)
	if err != nil {
		return nil, "", err
	}
	return a.versions.History(ctx, as, opts)
}

// publishCheck is the rule version n of as must pass to be published; the
// store runs it under the publish lock, so it reads the draft published.
func (a *App) publishCheck(ctx context.Context, as *quire.Asset, n int) func(quire.ReadFunc) error {
	if as.Kind == quire.KindPrompt {
		return a.PromptPublishCheck(ctx, as, n)
	}
	return skillPublishCheck(as)
}

// skillPublishCheck requires a valid SKILL.md whose name is the slug.
func skillPublishCheck(as *quire.Asset) func(quire.ReadFunc) error {
	return func(read quire.ReadFunc) error {
		b, found, err := read(valid.SkillFile)
		if err != nil {
			return err
		}
		return valid.SkillManifest(b, found, as.Slug)
	}
}

// precondition is the commit an If-Match value requires of a draft, ""
// for none: "*" matches any existing version, so it requires nothing more.
func precondition(ifMatch string) string {
	if ifMatch == "*" {
		return ""
	}
	return ifMatch
}
