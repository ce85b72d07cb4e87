package app

import (
	"context"
	"slices"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// Labels name published versions besides live (environments: staging,
// production). Moving a label listed in the project's protected labels
// needs the version to have been published through a review that met the
// policy, or an owner's override. Each move is a write (write.go), which
// records its label event.

// LabelEdit moves a label: the version, and an owner's override of the
// protected-label rule with its reason.
type LabelEdit struct {
	Version  *int
	Override bool
	Reason   string
}

// LabelEvent names a label change.
type LabelEvent string

const (
	LabelMoved   LabelEvent = "label.moved"
	LabelDeleted LabelEvent = "label.deleted"
)

// labelEvent is the event of a label change.
func (a *App) labelEvent(p *quire.Principal, as *quire.Asset, ev LabelEvent, name string, version int) *quire.Event {
	e := a.assetEvent(quire.EventType(ev), p.Actor(), as, version, "")
	e.Label = name
	return e
}

func (a *App) labelStore() (quire.LabelStore, error) {
	if a.labels == nil {
		return nil, quire.Errorf(quire.EUNAVAILABLE, "labels are not kept by this server")
	}
	return a.labels, nil
}

// labelStore is the label store when the caller has want on the asset.
func (h *Handle) labelStore(want quire.Access) (quire.LabelStore, error) {
	if err := h.need(want); err != nil {
		return nil, err
	}
	return h.app.labelStore()
}

// SetLabel points label name of the asset at a published version.
func (h *Handle) SetLabel(ctx context.Context, name string, e LabelEdit) (*quire.Label, error) {
	a, p, as, pr := h.app, h.P, h.Asset, h.Project
	ls, err := h.labelStore(quire.AccessWrite)
	if err != nil {
		return nil, err
	}
	if err := valid.LabelName(name); err != nil {
		return nil, err
	}
	if e.Version == nil {
		return nil, quire.Errorf(quire.EINVALID, "version is required")
	}
	if *e.Version <= 0 {
		return nil, quire.Errorf(quire.EINVALID, "version must be a positive integer")
	}
	if err := checkOverride(p, pr, e.Override, e.Reason); err != nil {
		return nil, err
	}
	if slices.Contains(pr.Policy().ProtectedLabels, name) && !e.Override {
		ok, err := a.reviewedVersion(ctx, as, *e.Version)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, (&quire.Error{Code: quire.EREVIEW, Message: "label " + name + " is protected: version needs to have been published through a review that met the policy, or an owner's override"}).
				WithDetail("label", name).WithDetail("version", *e.Version)
		}
	}
	override := ""
	if e.Override {
		override = e.Reason
	}
	return write(ctx, a, a.labelEvent(p, as, LabelMoved, name, *e.Version),
		func(ctx context.Context) (*quire.Label, error) {
			return ls.SetLabel(ctx, p.Actor(), as, name, *e.Version, override)
		},
		func(_ context.Context, l *quire.Label) (*quire.Event, error) {
			return a.labelEvent(p, as, LabelMoved, name, l.Version), nil
		})
}

// reviewedVersion reports whether version n was published by merging a
// review that met the policy or was overridden by an owner.
func (a *App) reviewedVersion(ctx context.Context, as *quire.Asset, n int) (bool, error) {
	if a.reviews == nil {
		return false, nil
	}
	merged, err := a.reviews.Reviews(ctx, as, quire.ReviewMerged)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(merged, func(r *quire.Review) bool {
		return r.Version == n && (r.PolicyMet || r.Override != nil)
	}), nil
}

// LabelDelete is a label removal's options: an owner's override of the
// protected-label rule, with its reason.
type LabelDelete struct {
	Override bool
	Reason   string
}

// DeleteLabel removes label name of the asset. A protected label is
// removed only by an owner's override (with a reason, kept in the label's
// history): removing it is as much a release decision as moving it.
func (h *Handle) DeleteLabel(ctx context.Context, name string, e LabelDelete) error {
	a, p, as, pr := h.app, h.P, h.Asset, h.Project
	ls, err := h.labelStore(quire.AccessWrite)
	if err != nil {
		return err
	}
	if err := valid.LabelName(name); err != nil {
		return err
	}
	if err := checkOverride(p, pr, e.Override, e.Reason); err != nil {
		return err
	}
	if slices.Contains(pr.Policy().ProtectedLabels, name) && !e.Override {
		return (&quire.Error{Code: quire.ELABELPROTECT, Message: "label " + name + " is protected: only a project owner can remove it, with an override and a reason"}).
			WithDetail("label", name)
	}
	override := ""
	if e.Override {
		override = e.Reason
	}
	_, err = write(ctx, a, a.labelEvent(p, as, LabelDeleted, name, 0),
		func(ctx context.Context) (struct{}, error) {
			return struct{}{}, ls.DeleteLabel(ctx, p.Actor(), as, name, override)
		},
		func(context.Context, struct{}) (*quire.Event, error) {
			return a.labelEvent(p, as, LabelDeleted, name, 0), nil
		})
	return err
}

// checkOverride checks an override of the review policy or of the
// protected-label rule: only a project owner's, and only with a reason.
func checkOverride(p *quire.Principal, pr *quire.Project, override bool, reason string) error {
	if !override {
		return nil
	}
	if p.ProjectAccess(pr) < quire.AccessAdmin {
		return quire.Errorf(quire.EFORBIDDEN, "only a project owner can override the review policy")
	}
	if strings.TrimSpace(reason) == "" {
		return quire.Errorf(quire.EUNPROCESSABLE, "an override needs a reason")
	}
	return nil
}

// Labels lists the asset's labels.
func (h *Handle) Labels(ctx context.Context) ([]quire.Label, error) {
	ls, err := h.labelStore(quire.AccessRead)
	if err != nil {
		return nil, err
	}
	return ls.Labels(ctx, h.Asset)
}

// LabelHistory lists every move of label name, newest first; a label
// that never existed is ENOTFOUND.
func (h *Handle) LabelHistory(ctx context.Context, name string) ([]quire.LabelMove, error) {
	ls, err := h.labelStore(quire.AccessRead)
	if err != nil {
		return nil, err
	}
	as := h.Asset
	if err := valid.LabelName(name); err != nil {
		return nil, err
	}
	moves, err := ls.LabelHistory(ctx, as, name)
	if err != nil {
		return nil, err
	}
	if len(moves) == 0 {
		return nil, quire.Errorf(quire.ENOTFOUND, "label %s not found", name)
	}
	return moves, nil
}

// labelPrompts is a prompt store that reads by label: the prompt cache,
// whose label tier is checked against the label log's commit as the live
// tier is against the live commit (cache/labels.go), or the git store.
type labelPrompts interface {
	LabelPrompt(ctx context.Context, a *quire.Asset, name string) (*quire.PromptVersion, error)
}

// labelPrompt is the version label name of as names, with its content.
// A move is seen by the next read on every node: the cache checks each
// entry against the label log's commit on the shared data root.
func (a *App) labelPrompt(ctx context.Context, as *quire.Asset, name string) (*quire.Version, *quire.PromptContent, error) {
	if err := valid.LabelName(name); err != nil {
		return nil, nil, err
	}
	if _, err := a.labelStore(); err != nil {
		return nil, nil, err
	}
	lp, ok := a.prompts.(labelPrompts)
	if !ok {
		return nil, nil, quire.Errorf(quire.EUNAVAILABLE, "labels are not kept by this server")
	}
	pv, err := lp.LabelPrompt(ctx, as, name)
	if err != nil {
		return nil, nil, err
	}
	return pv.Version, pv.Content, nil
}

// labelVersion is the version label name of as points at, read from the
// label record (an archive by label; renders by label go through
// labelPrompt and the cache).
func (a *App) labelVersion(ctx context.Context, as *quire.Asset, name string) (int, error) {
	if err := valid.LabelName(name); err != nil {
		return 0, err
	}
	v, ok, err := a.labelAt(ctx, as, name)
	if err == nil && !ok {
		err = quire.Errorf(quire.ENOTFOUND, "label %s not found", name)
	}
	return v, err
}

// labelAt is the version label name of as points at, if it is set.
func (a *App) labelAt(ctx context.Context, as *quire.Asset, name string) (int, bool, error) {
	ls, err := a.labelStore()
	if err != nil {
		return 0, false, err
	}
	labels, err := ls.Labels(ctx, as)
	if err != nil {
		return 0, false, err
	}
	for _, l := range labels {
		if l.Name == name {
			return l.Version, true, nil
		}
	}
	return 0, false, nil
}
