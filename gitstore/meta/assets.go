package meta

import (
	"context"
	"fmt"
	"strconv"

	"github.com/quire/quire"
)

// Assets.

func (s *Store) CreateAsset(ctx context.Context, by quire.Actor, a *quire.Asset) error {
	if a.ID == "" {
		a.ID = newID()
	}
	now := s.now().UTC()
	a.CreatedAt, a.UpdatedAt = now, now
	check := func() error {
		if s.idx.projects[a.ProjectID] == nil {
			return quire.Errorf(quire.ENOTFOUND, "project not found")
		}
		if s.idx.slugTaken(a) {
			return quire.Errorf(quire.ECONFLICT, "a %s with slug %q exists in this project", a.Kind, a.Slug)
		}
		return nil
	}
	if err := s.idx.read(ctx, check); err != nil {
		return err
	}
	if err := s.cfg.Repos.InitAsset(ctx, a); err != nil {
		return err
	}
	err := s.idx.write(by, fmt.Sprintf("Create %s %s", a.Kind, a.Slug), map[string]any{metaPath(a.Kind.Plural(), a.ID): assetRecord{*a}}, nil, check)
	if err != nil {
		s.cfg.Repos.RemoveAsset(a)
	}
	return err
}

func (s *Store) Asset(ctx context.Context, kind quire.Kind, id string) (*quire.Asset, error) {
	var out quire.Asset
	err := s.idx.read(ctx, func() error {
		a := s.idx.assets[id]
		if a == nil || a.Kind != kind {
			return quire.Errorf(quire.ENOTFOUND, "%s not found", kind)
		}
		out = *a
		return nil
	})
	return &out, err
}

// FindAssets returns the assets of kind whose id or slug is idOrSlug.
func (s *Store) FindAssets(ctx context.Context, kind quire.Kind, idOrSlug string) ([]*quire.Asset, error) {
	var out []*quire.Asset
	err := s.idx.read(ctx, func() error {
		if a := s.idx.assets[idOrSlug]; a != nil && a.Kind == kind {
			c := *a
			out = append(out, &c)
			return nil
		}
		for _, a := range s.idx.slugs[assetSlug{kind, idOrSlug}] {
			s.idx.seen(a)
			c := *a
			out = append(out, &c)
		}
		return nil
	})
	return out, err
}

// Assets lists the assets of kind in a project, ordered by slug.
func (s *Store) Assets(ctx context.Context, kind quire.Kind, projectID string) ([]*quire.Asset, error) {
	out, _, err := s.AssetsPage(ctx, kind, projectID, quire.ListOptions{})
	return out, err
}

// AssetsPage lists a page of the assets of kind in a project, ordered by
// slug. The cursor is the offset of the page's first asset; a zero Limit
// means no limit.
func (s *Store) AssetsPage(ctx context.Context, kind quire.Kind, projectID string, opts quire.ListOptions) ([]*quire.Asset, string, error) {
	off := 0
	if opts.Cursor != "" {
		n, err := strconv.Atoi(opts.Cursor)
		if err != nil || n < 0 {
			return nil, "", quire.Errorf(quire.EINVALID, "invalid cursor")
		}
		off = n
	}
	out := []*quire.Asset{}
	next := ""
	err := s.idx.read(ctx, func() error {
		l := s.idx.lists[assetList{projectID, kind}]
		if off >= len(l) {
			return nil
		}
		end := len(l)
		if opts.Limit > 0 && off+opts.Limit < end {
			end = off + opts.Limit
			next = strconv.Itoa(end)
		}
		for _, a := range l[off:end] {
			s.idx.seen(a)
			c := *a
			out = append(out, &c)
		}
		return nil
	})
	return out, next, err
}

func (s *Store) UpdateAsset(ctx context.Context, by quire.Actor, a *quire.Asset) error {
	a.UpdatedAt = s.now().UTC()
	err := s.idx.write(by, fmt.Sprintf("Update %s %s", a.Kind, a.Slug), map[string]any{metaPath(a.Kind.Plural(), a.ID): assetRecord{*a}}, nil, func() error {
		if o := s.idx.assets[a.ID]; o == nil || o.Kind != a.Kind {
			return quire.Errorf(quire.ENOTFOUND, "%s not found", a.Kind)
		}
		if s.idx.slugTaken(a) {
			return quire.Errorf(quire.ECONFLICT, "a %s with slug %q exists in this project", a.Kind, a.Slug)
		}
		return nil
	})
	if err == nil {
		s.cfg.Repos.Changed(a)
	}
	return err
}

// DeleteAsset deletes an asset's metadata, then its repository.
func (s *Store) DeleteAsset(ctx context.Context, by quire.Actor, a *quire.Asset) error {
	err := s.idx.write(by, fmt.Sprintf("Delete %s %s", a.Kind, a.Slug), nil, []string{metaPath(a.Kind.Plural(), a.ID)}, func() error {
		if o := s.idx.assets[a.ID]; o == nil || o.Kind != a.Kind {
			return quire.Errorf(quire.ENOTFOUND, "%s not found", a.Kind)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.cfg.Repos.Changed(a)
	return s.cfg.Repos.RemoveAsset(a)
}
