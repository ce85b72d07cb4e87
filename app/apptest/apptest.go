// Package apptest holds in-memory stores for testing app's use cases
// without git, Redis or HTTP, as WTF Dial's mock package does: each keeps
// its records in maps (under a mutex, when it changes them), returns
// copies, and implements the root package's interface it is named for:
// Meta, Versions (and labels), Reviews, Events (the event log), and
// DraftRefs (a push's view of a repository). A method a test does not
// need is left to the embedded interface, nil, so calling it panics: a
// test that reaches it says at once which store it must fill in.
package apptest

import (
	"context"
	"sync"

	"github.com/google/uuid"
	"github.com/quire/quire"
)

// Meta is a quire.MetaStore of projects and assets.
type Meta struct {
	quire.MetaStore

	mu       sync.Mutex
	projects map[string]*quire.Project
	assets   []*quire.Asset
	users    map[string]*quire.User
}

// NewMeta returns an empty Meta.
func NewMeta() *Meta {
	return &Meta{projects: map[string]*quire.Project{}, users: map[string]*quire.User{}}
}

// AddUser stores u, giving it an id when it has none: the review policy
// judges a verdict by its user's access as it is now.
func (m *Meta) AddUser(u *quire.User) *quire.User {
	m.mu.Lock()
	defer m.mu.Unlock()
	if u.ID == "" {
		u.ID = uuid.NewString()
	}
	m.users[u.ID] = u
	return u
}

// User returns a copy of user id.
func (m *Meta) User(_ context.Context, id string) (*quire.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.users[id]
	if !ok {
		return nil, quire.Errorf(quire.ENOTFOUND, "user not found")
	}
	c := *u
	return &c, nil
}

// AddProject stores pr, giving it an id when it has none.
func (m *Meta) AddProject(pr *quire.Project) *quire.Project {
	m.mu.Lock()
	defer m.mu.Unlock()
	if pr.ID == "" {
		pr.ID = uuid.NewString()
	}
	m.projects[pr.ID] = pr
	return pr
}

// AddAsset stores as, giving it an id when it has none.
func (m *Meta) AddAsset(as *quire.Asset) *quire.Asset {
	m.mu.Lock()
	defer m.mu.Unlock()
	if as.ID == "" {
		as.ID = uuid.NewString()
	}
	m.assets = append(m.assets, as)
	return as
}

// Project returns a copy of the project ref names (id or slug), as the
// real store does, so a use case's changes reach it only through a write.
func (m *Meta) Project(_ context.Context, ref string) (*quire.Project, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, pr := range m.projects {
		if pr.ID == ref || pr.Slug == ref {
			c := *pr
			c.Members = append([]quire.Member(nil), pr.Members...)
			return &c, nil
		}
	}
	return nil, quire.Errorf(quire.ENOTFOUND, "project not found")
}

// UpdateProject stores a copy of pr in place of the project of its id.
func (m *Meta) UpdateProject(_ context.Context, _ quire.Actor, pr *quire.Project) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.projects[pr.ID]; !ok {
		return quire.Errorf(quire.ENOTFOUND, "project not found")
	}
	c := *pr
	c.Members = append([]quire.Member(nil), pr.Members...)
	m.projects[pr.ID] = &c
	return nil
}

// FindAssets lists the assets of kind whose id or slug is ref.
func (m *Meta) FindAssets(_ context.Context, kind quire.Kind, ref string) ([]*quire.Asset, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*quire.Asset
	for _, as := range m.assets {
		if as.Kind == kind && (as.ID == ref || as.Slug == ref) {
			c := *as
			out = append(out, &c)
		}
	}
	return out, nil
}

// Asset returns a copy of the asset of kind with id: the event log's
// intents read it to tell whether a write landed.
func (m *Meta) Asset(_ context.Context, kind quire.Kind, id string) (*quire.Asset, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, as := range m.assets {
		if as.Kind == kind && as.ID == id {
			c := *as
			return &c, nil
		}
	}
	return nil, quire.Errorf(quire.ENOTFOUND, "asset not found")
}
