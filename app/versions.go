package app

import (
	"context"
	"fmt"

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
	v, err := write(ctx, a, a.assetEvent(quire.EventVersionCreated, p.Actor(), as, 0, ""),
		func(ctx context.Context) (*quire.Version, error) {
			return a.versions.CreateVersion(ctx, p.Actor(), as, base, nil)
		},
		a.versionMade(quire.EventVersionCreated, p.Actor(), as))
	if err != nil {
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
	if p.IsAnonymous() {
		// Anonymous callers see published versions only.
		if state != "" && state != quire.StatePublished {
			return as, []*quire.Version{}, "", nil
		}
		state = quire.StatePublished
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
	if err := checkReadable(p, v.State, n); err != nil {
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
	_, err = write(ctx, a, a.assetEvent(quire.EventVersionDeleted, p.Actor(), as, n, ""),
		func(ctx context.Context) (struct{}, error) {
			return struct{}{}, a.versions.DeleteVersion(ctx, p.Actor(), as, n)
		},
		func(ctx context.Context, _ struct{}) (*quire.Event, error) {
			return a.assetEvent(quire.EventVersionDeleted, p.Actor(), as, n, ""), a.draftGone(ctx, p, as, n)
		})
	return err
}

// draftGone records the close of the open review of draft n, now deleted
// or archived, and its review.closed event (reviewDone). The draft is gone
// either way, so the review reads as closed even when the record fails:
// that failure is not the caller's. The event's is, as every event's.
func (a *App) draftGone(ctx context.Context, p *quire.Principal, as *quire.Asset, n int) error {
	if a.reviews == nil {
		return nil
	}
	closed, _ := a.reviews.CloseDraftReview(ctx, p.Actor(), as, n)
	for _, rv := range closed {
		if err := a.reviewDone(ctx, p, as, ReviewClosedEvent, rv); err != nil {
			return err
		}
	}
	return nil
}

// PublishVersion publishes draft n and makes it live, once it passes its
// kind's publish check.
func (a *App) PublishVersion(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, n int) (*quire.Asset, *quire.Version, error) {
	return a.PublishVersionWith(ctx, p, kind, ref, n, func() (PublishOptions, error) { return PublishOptions{}, nil })
}

// PublishVersionWith is PublishVersion with review options: the project's
// review policy gates the publish, under the same lock, and the draft's
// open review is merged by it (reviews.go).
func (a *App) PublishVersionWith(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, n int, in Input[PublishOptions]) (*quire.Asset, *quire.Version, error) {
	as, pr, err := a.AssetIn(ctx, p, kind, ref, quire.AccessWrite)
	if err != nil {
		return nil, nil, err
	}
	o, err := in()
	if err != nil {
		return nil, nil, err
	}
	var merged *quire.Review // the draft's review, which the store merges
	v, err := write(ctx, a, a.assetEvent(quire.EventVersionPublished, p.Actor(), as, n, ""),
		func(ctx context.Context) (*quire.Version, error) {
			if a.reviews == nil {
				if o.Override {
					return nil, quire.Errorf(quire.EINVALID, "this server keeps no reviews to override")
				}
				return a.versions.PublishVersion(ctx, p.Actor(), as, n, a.publishCheck(ctx, as, n))
			}
			gate := a.evaluationGate(ctx, as, pr, n, o, a.reviewGate(ctx, p, pr, o))
			return a.reviews.PublishReviewed(ctx, p.Actor(), as, n, a.publishCheck(ctx, as, n), func(rt *quire.ReviewThread) (*quire.ReviewMerge, error) {
				if rt != nil {
					merged = rt.Review
				}
				return gate(rt)
			})
		},
		func(ctx context.Context, v *quire.Version) (*quire.Event, error) {
			if merged != nil {
				if err := a.reviewDone(ctx, p, as, ReviewMergedEvent, merged); err != nil {
					return nil, err
				}
			}
			return a.versionEvent(quire.EventVersionPublished, p.Actor(), as, v), nil
		})
	if v != nil {
		// After the events: the view's change starts once this publish
		// has done its own work, so the two do not contend.
		a.projectChange(ctx, p, as, v.Commit, "", fmt.Sprintf("Publish %s v%d", as.Slug, v.Number))
	}
	if err != nil {
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
	v, err := write(ctx, a, a.assetEvent(quire.EventVersionPromoted, p.Actor(), as, n, ""),
		func(ctx context.Context) (*quire.Version, error) {
			return a.versions.PromoteVersion(ctx, p.Actor(), as, n)
		},
		a.versionMade(quire.EventVersionPromoted, p.Actor(), as))
	if v != nil {
		a.projectChange(ctx, p, as, v.Commit, "", fmt.Sprintf("Make %s v%d live", as.Slug, v.Number)) // after the events
	}
	if err != nil {
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
	v, err := write(ctx, a, a.assetEvent(quire.EventVersionArchived, p.Actor(), as, n, ""),
		func(ctx context.Context) (*quire.Version, error) {
			return a.versions.ArchiveVersion(ctx, p.Actor(), as, n)
		},
		func(ctx context.Context, v *quire.Version) (*quire.Event, error) {
			return a.versionEvent(quire.EventVersionArchived, p.Actor(), as, v), a.draftGone(ctx, p, as, n)
		})
	if err != nil {
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
	for _, n := range []int{from, to} {
		if err := a.readableVersion(ctx, p, as, n); err != nil {
			return nil, err
		}
	}
	return a.versions.Diff(ctx, as, from, to)
}

// History is a page of the commits of the asset's repository.
func (a *App) History(ctx context.Context, p *quire.Principal, kind quire.Kind, ref string, opts quire.ListOptions) ([]quire.Commit, string, error) {
	if err := requireCredential(p); err != nil {
		return nil, "", err // history shows drafts' commits
	}
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
