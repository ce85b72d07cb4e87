package app

import (
	"context"

	"github.com/quire/quire"
)

// Input reads a use case's input from the request. A use case that
// authorizes the caller calls it only once the caller is authorized, so a
// caller who may not act learns nothing from how its request is formed
// (a malformed body of a forbidden request is still forbidden). A door
// decodes its request in it.
type Input[T any] func() (T, error)

// assetWrite resolves asset ref of kind for p with write access, with its
// project, then reads in: only once the caller is authorized.
func assetWrite[T any](ctx context.Context, a *App, p *quire.Principal, kind quire.Kind, ref string, in Input[T]) (*quire.Asset, *quire.Project, T, error) {
	var zero T
	as, pr, err := a.AssetIn(ctx, p, kind, ref, quire.AccessWrite)
	if err != nil {
		return nil, nil, zero, err
	}
	e, err := in()
	if err != nil {
		return nil, nil, zero, err
	}
	return as, pr, e, nil
}
