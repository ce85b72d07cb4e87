package app

import (
	"context"

	"github.com/quire/quire"
)

// Activity lists a page of the changes to project ref and its skills and
// prompts, newest first.
func (h *ProjectHandle) Activity(ctx context.Context, o quire.ListOptions) ([]quire.Activity, string, error) {
	a, pr := h.app, h.Project
	if err := h.need(quire.AccessRead); err != nil {
		return nil, "", err
	}
	if a.activity == nil {
		return nil, "", quire.Errorf(quire.EUNAVAILABLE, "activity is not kept by this server")
	}
	var assets []*quire.Asset
	for _, kind := range []quire.Kind{quire.KindSkill, quire.KindPrompt} {
		as, err := a.meta.Assets(ctx, kind, pr.ID)
		if err != nil {
			return nil, "", err
		}
		assets = append(assets, as...)
	}
	return a.activity.Activity(ctx, pr, assets, o)
}
