package app

import (
	"context"

	"github.com/quire/quire"
)

// publicRender lets the anonymous caller render what it may read, the
// published versions of a public project's prompt (the project's
// visibility was checked when as was resolved): a render is a read. Its
// request may name the live version, a published version, or a label
// naming one; a draft or an archived version is 404 as for its other
// reads, and a payload (which only members read) asks it to sign in.
// Other callers' requests pass as they are.
func (a *App) publicRender(ctx context.Context, p *quire.Principal, as *quire.Asset, in Input[RenderRequest]) Input[RenderRequest] {
	if !p.IsAnonymous() {
		return in
	}
	return func() (RenderRequest, error) {
		req, err := in()
		if err != nil {
			return req, err
		}
		if req.PayloadID != "" {
			return req, quire.ErrSignIn()
		}
		if req.Label != "" && req.Label != "live" {
			if req.Version != nil {
				return req, quire.Errorf(quire.EINVALID, "give version or label, not both")
			}
			n, err := a.labelVersion(ctx, as, req.Label)
			if err != nil {
				return req, err
			}
			req.Version, req.Label = &n, ""
		}
		if req.Version != nil && *req.Version > 0 {
			v, err := a.versions.Version(ctx, as, *req.Version)
			if err != nil {
				return req, err
			}
			if err := checkReadable(p, v.State, v.Number); err != nil {
				return req, err
			}
		}
		return req, nil
	}
}
