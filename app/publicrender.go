package app

import (
	"github.com/quire/quire"
)

// publicRender lets the anonymous caller render what it may read, the
// published versions of a public project's prompt (the project's
// visibility was checked when the prompt was resolved): a render is a
// read. Its request may name the live version, a published version, or a
// label naming one; render answers a draft or an archived version 404, as
// other reads do, once it has resolved the version. A payload (which
// only members read) asks it to sign in. Other callers' requests pass as
// they are.
func publicRender(p *quire.Principal, req RenderRequest) (RenderRequest, error) {
	if !p.IsAnonymous() {
		return req, nil
	}
	if req.PayloadID != "" {
		return req, quire.ErrSignIn()
	}
	req.publishedOnly = true
	return req, nil
}
