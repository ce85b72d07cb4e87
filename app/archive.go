package app

import (
	"context"
	"strconv"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/skillpack"
	"github.com/quire/quire/valid"
)

// Deterministic skill archives: one version of a skill as zip or tar.gz
// bytes (skillpack), addressed by number, "live" or a label.

// VersionRef names a version in a path: a number, "live", or a label.
type VersionRef struct {
	Number int
	Live   bool
	Label  string
}

// ParseVersionRef reads a {version} path segment: "live", a positive
// number, or else a label name.
func ParseVersionRef(s string) (VersionRef, error) {
	if s == "live" {
		return VersionRef{Live: true}, nil
	}
	if n, err := valid.VersionNumber(s); err == nil {
		return VersionRef{Number: n}, nil
	}
	if valid.Slug(s) != nil || strings.Trim(s, "0123456789") == "" {
		return VersionRef{}, quire.Errorf(quire.EINVALID, "version must be a positive number, \"live\" or a label name, got %q", s)
	}
	return VersionRef{Label: s}, nil
}

func (r VersionRef) String() string {
	switch {
	case r.Live:
		return "live"
	case r.Label != "":
		return r.Label
	}
	return strconv.Itoa(r.Number)
}

// resolveVersion turns r into a version number of as.
func (a *App) resolveVersion(ctx context.Context, as *quire.Asset, r VersionRef) (int, error) {
	switch {
	case r.Live:
		v, err := a.versions.LiveVersion(ctx, as)
		if err != nil {
			return 0, err
		}
		if v == nil || v.Number == 0 {
			return 0, quire.Errorf(quire.ENOTFOUND, "no live version: publish one first")
		}
		return v.Number, nil
	case r.Label != "":
		return a.labelVersion(ctx, as, r.Label)
	}
	return r.Number, nil
}

// checkReadable refuses an anonymous caller any version of as but a
// published one: drafts and archived versions are for members. Others
// pass: their project access was checked when as was resolved.
func checkReadable(p *quire.Principal, state quire.VersionState, n int) error {
	if p.IsAnonymous() && state != quire.StatePublished {
		return quire.Errorf(quire.ENOTFOUND, "version %d not found", n)
	}
	return nil
}

// readableVersion is checkReadable for a version not yet read.
func (a *App) readableVersion(ctx context.Context, p *quire.Principal, as *quire.Asset, n int) error {
	if !p.IsAnonymous() {
		return nil
	}
	v, err := a.versions.Version(ctx, as, n)
	if err != nil {
		return err
	}
	return checkReadable(p, v.State, n)
}

// Archive is one version of a skill as archive bytes.
type Archive struct {
	Asset  *quire.Asset
	Format skillpack.Format
	// Version and Commit are the version archived (Commit its commit).
	Version int
	Commit  string
	Bytes   []byte
}

// SkillArchive returns the version r of skill ref as an archive of
// format f, the same bytes every time for the same version.
func (h *Handle) SkillArchive(ctx context.Context, r VersionRef, f skillpack.Format) (*Archive, error) {
	if err := h.needSkill(quire.AccessRead); err != nil {
		return nil, err
	}
	if f != skillpack.Zip && f != skillpack.TarGz {
		return nil, quire.Errorf(quire.EINVALID, "archive format must be zip or tar.gz")
	}
	a, p, as := h.app, h.P, h.Asset
	n, err := a.resolveVersion(ctx, as, r)
	if err != nil {
		return nil, err
	}
	snap, err := a.versions.Snapshot(ctx, as, n)
	if err != nil {
		return nil, err
	}
	if err := checkReadable(p, snap.State, n); err != nil {
		return nil, err
	}
	b, err := skillpack.Bytes(f, snap)
	if err != nil {
		return nil, err
	}
	return &Archive{Asset: as, Format: f, Version: n, Commit: snap.Commit, Bytes: b}, nil
}
