package app

import (
	"context"

	"github.com/quire/quire"
)

// Activity lists a page of the changes to project ref and its skills and
// prompts, newest first.
func (a *App) Activity(ctx context.Context, p *quire.Principal, ref string, opts Input[quire.ListOptions]) ([]quire.Activity, string, error) {
	pr, err := a.Project(ctx, p, ref, quire.AccessRead)
	if err != nil {
		return nil, "", err
	}
	o, err := opts()
	if err != nil {
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
