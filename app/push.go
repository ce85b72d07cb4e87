package app

import (
	"context"

	"github.com/quire/quire"
	"github.com/quire/quire/valid"
	"github.com/quire/quire/zipfile"
)

// TreeWrite sets a draft's whole content (quire push): Zip holds the
// files.
type TreeWrite struct {
	Zip []byte
	// Message is the commit message; the store writes one when empty.
	Message string
	// IfMatch, when set, is the commit the draft must be at ("*" for any).
	IfMatch string
}

// ReplaceFiles makes draft n of skill ref hold exactly the zip's files
// as one commit: adds, changes and deletions together, through the
// store's write path; n 0 opens a new draft from the live version whose
// one commit holds them. The zip is read and checked whole before
// anything is written. It returns the version after the write and the
// number of files it holds.
func (h *Handle) ReplaceFiles(ctx context.Context, n int, w TreeWrite) (*quire.Version, int, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.needSkill(quire.AccessWrite); err != nil {
		return nil, 0, err
	}
	store, ok := a.versions.(quire.TreeStore)
	if !ok {
		return nil, 0, quire.Errorf(quire.EINTERNAL, "the version store cannot replace a draft's files")
	}
	if err := valid.Text("message", w.Message, 10*a.limits.MaxName); err != nil {
		return nil, 0, err
	}
	files, err := zipfile.Read(w.Zip, a.limits)
	if err != nil {
		return nil, 0, err
	}
	t := quire.EventVersionUpdated
	if n == 0 {
		t = quire.EventVersionCreated
	}
	v, err := write(ctx, a, a.assetEvent(t, p.Actor(), as, n, ""),
		func(ctx context.Context) (*quire.Version, error) {
			return store.ReplaceFiles(ctx, p.Actor(), as, n, files, precondition(w.IfMatch), w.Message)
		},
		a.versionMade(t, p.Actor(), as))
	if err != nil {
		return nil, 0, err
	}
	return v, len(files), nil
}
