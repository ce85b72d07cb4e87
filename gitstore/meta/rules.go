package meta

import (
	"sort"
	"strings"

	"github.com/quire/quire"
)

// Rules that keep every project and the server manageable, checked in the
// metadata write's check (under the system repository's lock, against the
// fresh index) so two concurrent changes cannot each leave the other to be
// the last one: a project with an owner keeps one, and the server keeps an
// enabled admin. Callers hold m.mu.

// owners counts the owners of p who are users (a deleted user's
// membership does not count), leaving out the user skip.
func (m *index) owners(p *quire.Project, skip string) int {
	n := 0
	for _, mb := range p.Members {
		if mb.Role == quire.ProjectOwner && mb.UserID != skip && m.users[mb.UserID] != nil {
			n++
		}
	}
	return n
}

// keepsOwner refuses to store next over the project's current record when
// that would take away its last owner.
func (m *index) keepsOwner(next *quire.Project) error {
	old := m.projects[next.ID]
	if old == nil || m.owners(old, "") == 0 || m.owners(next, "") > 0 {
		return nil
	}
	return quire.Errorf(quire.ECONFLICT, "project %s would have no owner: make another member owner first", old.Slug).
		WithDetail("project_id", old.ID).WithDetail("project", old.Slug)
}

// lastOwnerOf lists, sorted, the slugs of the projects whose only owner
// is the user id.
func (m *index) lastOwnerOf(id string) []string {
	var slugs []string
	for _, p := range m.projects {
		if m.owners(p, "") > 0 && m.owners(p, id) == 0 {
			slugs = append(slugs, p.Slug)
		}
	}
	sort.Strings(slugs)
	return slugs
}

// enabledAdmin reports whether u is an admin who can log in.
func enabledAdmin(u *quire.User) bool {
	return u != nil && u.Role == quire.RoleAdmin && !u.Disabled
}

// keepsAdmin refuses to replace user id's record with next (nil: delete
// it) when that leaves no enabled admin.
func (m *index) keepsAdmin(id string, next *quire.User) error {
	if !enabledAdmin(m.users[id]) || enabledAdmin(next) {
		return nil
	}
	for uid, u := range m.users {
		if uid != id && enabledAdmin(u) {
			return nil
		}
	}
	return quire.Errorf(quire.ECONFLICT, "this is the last admin: make another user admin first")
}

// deletable refuses to delete user id while it is the last admin or the
// last owner of a project.
func (m *index) deletable(id string) error {
	if err := m.keepsAdmin(id, nil); err != nil {
		return err
	}
	if slugs := m.lastOwnerOf(id); len(slugs) > 0 {
		return quire.Errorf(quire.ECONFLICT, "the user is the last owner of project %s: make another member owner first", strings.Join(slugs, ", ")).
			WithDetail("projects", slugs)
	}
	return nil
}
