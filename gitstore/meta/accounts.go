package meta

import (
	"context"
	"sort"
	"strings"

	"github.com/quire/quire"
)

// Users.

func (s *Store) CreateUser(ctx context.Context, by quire.Actor, u *quire.User) error {
	if u.ID == "" {
		u.ID = newID()
	}
	now := s.now().UTC()
	u.CreatedAt, u.UpdatedAt = now, now
	return s.idx.write(by, "Create user "+u.Email, map[string]any{metaPath("users", u.ID): u}, nil, func() error {
		if _, ok := s.idx.emails[strings.ToLower(u.Email)]; ok {
			return quire.Errorf(quire.ECONFLICT, "a user with email %s exists", u.Email)
		}
		return nil
	})
}

func (s *Store) User(ctx context.Context, id string) (*quire.User, error) {
	var out quire.User
	err := s.idx.read(ctx, func() error {
		u := s.idx.users[id]
		if u == nil {
			return quire.Errorf(quire.ENOTFOUND, "user not found")
		}
		out = *u
		return nil
	})
	return &out, err
}

func (s *Store) UserByEmail(ctx context.Context, email string) (*quire.User, error) {
	var out quire.User
	err := s.idx.read(ctx, func() error {
		u := s.idx.users[s.idx.emails[strings.ToLower(email)]]
		if u == nil {
			return quire.Errorf(quire.ENOTFOUND, "user not found")
		}
		out = *u
		return nil
	})
	return &out, err
}

func (s *Store) Users(ctx context.Context) ([]*quire.User, error) {
	var out []*quire.User
	err := s.idx.read(ctx, func() error {
		for _, u := range s.idx.users {
			c := *u
			out = append(out, &c)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, err
}

func (s *Store) UpdateUser(ctx context.Context, by quire.Actor, u *quire.User) error {
	u.UpdatedAt = s.now().UTC()
	return s.idx.write(by, "Update user "+u.Email, map[string]any{metaPath("users", u.ID): u}, nil, func() error {
		old := s.idx.users[u.ID]
		if old == nil {
			return quire.Errorf(quire.ENOTFOUND, "user not found")
		}
		if id, ok := s.idx.emails[strings.ToLower(u.Email)]; ok && id != u.ID {
			return quire.Errorf(quire.ECONFLICT, "a user with email %s exists", u.Email)
		}
		return s.idx.keepsAdmin(u.ID, u)
	})
}

// DeleteUser deletes a user and the user's API keys.
func (s *Store) DeleteUser(ctx context.Context, by quire.Actor, id string) error {
	var dels []string
	err := s.idx.read(ctx, func() error {
		if s.idx.users[id] == nil {
			return quire.Errorf(quire.ENOTFOUND, "user not found")
		}
		dels = append(dels, metaPath("users", id))
		for _, k := range s.idx.keys {
			if k.UserID == id {
				dels = append(dels, metaPath("apikeys", k.ID))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.idx.write(by, "Delete user "+id, nil, dels, func() error {
		if s.idx.users[id] == nil {
			return quire.Errorf(quire.ENOTFOUND, "user not found")
		}
		return s.idx.deletable(id)
	})
}

// API keys.

func (s *Store) CreateAPIKey(ctx context.Context, by quire.Actor, k *quire.APIKey) error {
	if k.ID == "" {
		k.ID = newID()
	}
	now := s.now().UTC()
	k.CreatedAt, k.UpdatedAt = now, now
	return s.idx.write(by, "Create API key "+k.Name, map[string]any{metaPath("apikeys", k.ID): k}, nil, nil)
}

func (s *Store) APIKey(ctx context.Context, id string) (*quire.APIKey, error) {
	var out quire.APIKey
	err := s.idx.read(ctx, func() error {
		k := s.idx.keys[id]
		if k == nil {
			return quire.Errorf(quire.ENOTFOUND, "API key not found")
		}
		out = *k
		out.ProjectIDs = append([]string(nil), k.ProjectIDs...)
		return nil
	})
	return &out, err
}

// APIKeys lists the keys of userID, or every key when userID is "".
func (s *Store) APIKeys(ctx context.Context, userID string) ([]*quire.APIKey, error) {
	var out []*quire.APIKey
	err := s.idx.read(ctx, func() error {
		for _, k := range s.idx.keys {
			if userID == "" || k.UserID == userID {
				c := *k
				c.ProjectIDs = append([]string(nil), k.ProjectIDs...)
				out = append(out, &c)
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, err
}

func (s *Store) UpdateAPIKey(ctx context.Context, by quire.Actor, k *quire.APIKey) error {
	k.UpdatedAt = s.now().UTC()
	return s.idx.write(by, "Update API key "+k.Name, map[string]any{metaPath("apikeys", k.ID): k}, nil, func() error {
		if s.idx.keys[k.ID] == nil {
			return quire.Errorf(quire.ENOTFOUND, "API key not found")
		}
		return nil
	})
}

func (s *Store) DeleteAPIKey(ctx context.Context, by quire.Actor, id string) error {
	return s.idx.write(by, "Delete API key "+id, nil, []string{metaPath("apikeys", id)}, func() error {
		if s.idx.keys[id] == nil {
			return quire.Errorf(quire.ENOTFOUND, "API key not found")
		}
		return nil
	})
}

// Projects.

func cloneProject(p *quire.Project) *quire.Project {
	c := *p
	c.Members = append([]quire.Member{}, p.Members...)
	return &c
}

func (s *Store) CreateProject(ctx context.Context, by quire.Actor, p *quire.Project) error {
	if p.ID == "" {
		p.ID = newID()
	}
	now := s.now().UTC()
	p.CreatedAt, p.UpdatedAt = now, now
	if p.Members == nil {
		p.Members = []quire.Member{}
	}
	return s.idx.write(by, "Create project "+p.Slug, map[string]any{metaPath("projects", p.ID): p}, nil, func() error {
		if _, ok := s.idx.pslugs[p.Slug]; ok {
			return quire.Errorf(quire.ECONFLICT, "a project with slug %q exists", p.Slug)
		}
		return nil
	})
}

// Project finds a project by id or slug.
func (s *Store) Project(ctx context.Context, idOrSlug string) (*quire.Project, error) {
	var out *quire.Project
	err := s.idx.read(ctx, func() error {
		p := s.idx.projects[idOrSlug]
		if p == nil {
			p = s.idx.projects[s.idx.pslugs[idOrSlug]]
		}
		if p == nil {
			return quire.Errorf(quire.ENOTFOUND, "project not found")
		}
		out = cloneProject(p)
		return nil
	})
	return out, err
}

func (s *Store) Projects(ctx context.Context) ([]*quire.Project, error) {
	var out []*quire.Project
	err := s.idx.read(ctx, func() error {
		for _, p := range s.idx.projects {
			out = append(out, cloneProject(p))
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Slug < out[j].Slug })
	return out, err
}

func (s *Store) UpdateProject(ctx context.Context, by quire.Actor, p *quire.Project) error {
	p.UpdatedAt = s.now().UTC()
	return s.idx.write(by, "Update project "+p.Slug, map[string]any{metaPath("projects", p.ID): p}, nil, func() error {
		if s.idx.projects[p.ID] == nil {
			return quire.Errorf(quire.ENOTFOUND, "project not found")
		}
		if id, ok := s.idx.pslugs[p.Slug]; ok && id != p.ID {
			return quire.Errorf(quire.ECONFLICT, "a project with slug %q exists", p.Slug)
		}
		return s.idx.keepsOwner(p)
	})
}

// DeleteProject deletes a project, its assets' metadata and repositories.
func (s *Store) DeleteProject(ctx context.Context, by quire.Actor, id string) error {
	var dels []string
	err := s.idx.read(ctx, func() error {
		if s.idx.projects[id] == nil {
			return quire.Errorf(quire.ENOTFOUND, "project not found")
		}
		dels = append(dels, metaPath("projects", id))
		for _, kind := range []quire.Kind{quire.KindSkill, quire.KindPrompt} {
			for _, a := range s.idx.lists[assetList{id, kind}] {
				dels = append(dels, metaPath(a.Kind.Plural(), a.ID))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.idx.write(by, "Delete project "+id, nil, dels, nil); err != nil {
		return err
	}
	return s.cfg.Repos.RemoveProject(id)
}
