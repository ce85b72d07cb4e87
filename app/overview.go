package app

import (
	"context"

	"github.com/quire/quire"
	"golang.org/x/sync/errgroup"
)

// The batch reads behind the browser UI's pages: what a page shows in
// one use case, authorized once, rather than one call per row.

// AssetSummary is one row of a project page: an asset, its live version
// (0: none) and its labels.
type AssetSummary struct {
	Asset  *quire.Asset
	Live   int
	Labels []quire.Label
}

// MemberSummary is a project member as a project page shows it: Name and
// Email are empty when the reader may not see them.
type MemberSummary struct {
	quire.Member
	Name, Email string
}

// ProjectOverview is a project with a page of its skills and of its
// prompts (each with the cursor of the next page, "" on the last), its
// members and its latest activity.
type ProjectOverview struct {
	Project                 *quire.Project
	Skills, Prompts         []AssetSummary
	NextSkills, NextPrompts string
	Members                 []MemberSummary
	Activity                []quire.Activity
	// ActivityAssets are the project's skills and prompts by id, so each
	// activity entry can name the one it changed.
	ActivityAssets map[string]*quire.Asset
}

// OverviewOptions pages the overview's lists; Activity is how many
// activity entries to read (0: none).
type OverviewOptions struct {
	Skills, Prompts quire.ListOptions
	Activity        int
}

// overviewFanout bounds the repositories read at once for one page.
const overviewFanout = 8

// ProjectOverview reads project ref for its page: access is checked once,
// then each listed asset's live version and labels are read from its
// repository, a few at a time. Members' names and emails are shown to
// the project's members and to admins (who see them on reviews anyway),
// not to a reader of a public project.
func (a *App) ProjectOverview(ctx context.Context, p *quire.Principal, ref string, o OverviewOptions) (*ProjectOverview, error) {
	pr, err := a.Project(ctx, p, ref, quire.AccessRead)
	if err != nil {
		return nil, err
	}
	ov := &ProjectOverview{Project: pr}
	skills, next, err := a.meta.AssetsPage(ctx, quire.KindSkill, pr.ID, o.Skills)
	if err != nil {
		return nil, err
	}
	ov.NextSkills = next
	prompts, next, err := a.meta.AssetsPage(ctx, quire.KindPrompt, pr.ID, o.Prompts)
	if err != nil {
		return nil, err
	}
	ov.NextPrompts = next
	ov.Skills, ov.Prompts = summaries(skills), summaries(prompts)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(overviewFanout)
	if o.Activity > 0 && a.activity != nil {
		// The activity walks every asset's history: it starts first and
		// runs beside the rows rather than after them.
		g.Go(func() error {
			var assets []*quire.Asset
			for _, kind := range []quire.Kind{quire.KindSkill, quire.KindPrompt} {
				as, err := a.meta.Assets(gctx, kind, pr.ID)
				if err != nil {
					return err
				}
				assets = append(assets, as...)
			}
			var err error
			ov.Activity, _, err = a.activity.Activity(gctx, pr, assets, quire.ListOptions{Limit: o.Activity})
			ov.ActivityAssets = make(map[string]*quire.Asset, len(assets))
			for _, as := range assets {
				ov.ActivityAssets[as.ID] = as
			}
			return err
		})
	}
	for _, rows := range [][]AssetSummary{ov.Skills, ov.Prompts} {
		for i := range rows {
			row := &rows[i]
			g.Go(func() error { return a.summarize(gctx, row) })
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	member := p.User != nil && (p.IsAdmin() || pr.Role(p.User.ID) != "")
	for _, m := range pr.Members {
		ms := MemberSummary{Member: m}
		if member {
			if u, err := a.meta.User(ctx, m.UserID); err == nil {
				ms.Name, ms.Email = u.Name, u.Email
			}
		}
		ov.Members = append(ov.Members, ms)
	}
	return ov, nil
}

func summaries(as []*quire.Asset) []AssetSummary {
	out := make([]AssetSummary, len(as))
	for i, x := range as {
		out[i].Asset = x
	}
	return out
}

// summarize fills row's live version and labels; an asset with no live
// version, or a server that keeps no labels, leaves them empty.
func (a *App) summarize(ctx context.Context, row *AssetSummary) error {
	v, err := a.versions.LiveVersion(ctx, row.Asset)
	switch {
	case err == nil:
		row.Live = v.Number
	case quire.ErrorCode(err) != quire.ENOTFOUND:
		return err
	}
	if a.labels == nil {
		return nil
	}
	row.Labels, err = a.labels.Labels(ctx, row.Asset)
	return err
}

// Publishable says whether draft n of asset ref could be published now
// under its project's review policy, and why not: the draft's open review
// (returned too, when it has one) is put to the very gate a publish runs
// under its lock (reviewGate, on mergeable), read ahead so a page can
// disable its publish button with the reason.
func (h *Handle) Publishable(ctx context.Context, n int) (Mergeable, *quire.Review, error) {
	a, p, as, pr := h.app, h.P, h.Asset, h.Project
	if err := h.need(quire.AccessRead); err != nil {
		return Mergeable{}, nil, err
	}
	if p.ProjectAccess(pr) < quire.AccessWrite {
		return Mergeable{Reasons: []string{"you may not publish in this project"}}, nil, nil
	}
	if a.reviews == nil {
		return Mergeable{OK: true, Reasons: []string{}}, nil, nil
	}
	open, err := a.reviews.Reviews(ctx, as, quire.ReviewOpen)
	if err != nil {
		return Mergeable{}, nil, err
	}
	var rt *quire.ReviewThread
	var rv *quire.Review
	for _, r := range open {
		if r.Version == n {
			if rt, err = a.reviews.ReviewThread(ctx, as, r.Number); err != nil {
				return Mergeable{}, nil, err
			}
			rv = r
			break
		}
	}
	m, err := a.mergeable(ctx, pr, rt)
	if err != nil {
		return Mergeable{}, nil, err
	}
	if _, err := a.reviewGate(ctx, p, pr, PublishOptions{})(rt); err == nil {
		m.OK, m.Reasons = true, []string{}
	} else if quire.ErrorCode(err) != quire.EREVIEW {
		return Mergeable{}, nil, err
	}
	return m, rv, nil
}
