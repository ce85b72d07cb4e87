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
func (h *Handle) CreateVersion(ctx context.Context, base quire.Base) (*quire.Version, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.need(quire.AccessWrite); err != nil {
		return nil, err
	}
	return write(ctx, a, a.assetEvent(quire.EventVersionCreated, p.Actor(), as, 0, ""),
		func(ctx context.Context) (*quire.Version, error) {
			return a.versions.CreateVersion(ctx, p.Actor(), as, base, nil)
		},
		a.versionMade(quire.EventVersionCreated, p.Actor(), as))
}

// Versions lists a page of the asset's versions in state ("" for any).
func (h *Handle) Versions(ctx context.Context, state quire.VersionState, opts quire.ListOptions) ([]*quire.Version, string, error) {
	if err := h.need(quire.AccessRead); err != nil {
		return nil, "", err
	}
	switch state {
	case "", quire.StateDraft, quire.StatePublished, quire.StateArchived:
	default:
		return nil, "", quire.Errorf(quire.EINVALID, "state must be draft, published or archived")
	}
	if h.P.IsAnonymous() {
		// Anonymous callers see published versions only.
		if state != "" && state != quire.StatePublished {
			return []*quire.Version{}, "", nil
		}
		state = quire.StatePublished
	}
	return h.app.versions.VersionsPage(ctx, h.Asset, state, opts)
}

// Version returns version n of the asset.
func (h *Handle) Version(ctx context.Context, n int) (*quire.Version, error) {
	if err := h.need(quire.AccessRead); err != nil {
		return nil, err
	}
	v, err := h.app.versions.Version(ctx, h.Asset, n)
	if err != nil {
		return nil, err
	}
	if err := checkReadable(h.P, v.State, n); err != nil {
		return nil, err
	}
	return v, nil
}

// DeleteVersion deletes draft n; its number is never reused.
func (h *Handle) DeleteVersion(ctx context.Context, n int) error {
	a, p, as := h.app, h.P, h.Asset
	if err := h.need(quire.AccessWrite); err != nil {
		return err
	}
	_, err := write(ctx, a, a.assetEvent(quire.EventVersionDeleted, p.Actor(), as, n, ""),
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
// The project's review policy gates the publish, under the same lock, and
// the draft's open review is merged by it (reviews.go); o overrides the
// policy (an owner's, with a reason).
func (h *Handle) PublishVersion(ctx context.Context, n int, o PublishOptions) (*quire.Version, error) {
	a, p, as, pr := h.app, h.P, h.Asset, h.Project
	if err := h.need(quire.AccessWrite); err != nil {
		return nil, err
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
	return v, err
}

// PromoteVersion makes published version n live (a rollback when older).
func (h *Handle) PromoteVersion(ctx context.Context, n int) (*quire.Version, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.need(quire.AccessWrite); err != nil {
		return nil, err
	}
	v, err := write(ctx, a, a.assetEvent(quire.EventVersionPromoted, p.Actor(), as, n, ""),
		func(ctx context.Context) (*quire.Version, error) {
			return a.versions.PromoteVersion(ctx, p.Actor(), as, n)
		},
		a.versionMade(quire.EventVersionPromoted, p.Actor(), as))
	if v != nil {
		a.projectChange(ctx, p, as, v.Commit, "", fmt.Sprintf("Make %s v%d live", as.Slug, v.Number)) // after the events
	}
	return v, err
}

// ArchiveVersion archives a draft, or a published version that is not live.
func (h *Handle) ArchiveVersion(ctx context.Context, n int) (*quire.Version, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.need(quire.AccessWrite); err != nil {
		return nil, err
	}
	return write(ctx, a, a.assetEvent(quire.EventVersionArchived, p.Actor(), as, n, ""),
		func(ctx context.Context) (*quire.Version, error) {
			return a.versions.ArchiveVersion(ctx, p.Actor(), as, n)
		},
		func(ctx context.Context, v *quire.Version) (*quire.Event, error) {
			return a.versionEvent(quire.EventVersionArchived, p.Actor(), as, v), a.draftGone(ctx, p, as, n)
		})
}

// Diff compares the files of versions from and to.
func (h *Handle) Diff(ctx context.Context, from, to int) ([]quire.FileDiff, error) {
	if err := h.need(quire.AccessRead); err != nil {
		return nil, err
	}
	if from <= 0 || to <= 0 {
		return nil, quire.Errorf(quire.EINVALID, "from and to must be positive version numbers")
	}
	for _, n := range []int{from, to} {
		if err := h.app.readableVersion(ctx, h.P, h.Asset, n); err != nil {
			return nil, err
		}
	}
	return h.app.versions.Diff(ctx, h.Asset, from, to)
}

// History is a page of the commits of the asset's repository.
func (h *Handle) History(ctx context.Context, opts quire.ListOptions) ([]quire.Commit, string, error) {
	if err := requireCredential(h.P); err != nil {
		return nil, "", err // history shows drafts' commits
	}
	if err := h.need(quire.AccessRead); err != nil {
		return nil, "", err
	}
	return h.app.versions.History(ctx, h.Asset, opts)
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
