package app

import (
	"context"
	"net/mail"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/valid"
	"golang.org/x/crypto/bcrypt"
)

// UserEdit is a change to a user; nil fields are left as they are.
type UserEdit struct {
	Email    *string
	Name     *string
	Password *string
	Role     *quire.UserRole
	Disabled *bool
}

// apply validates e and copies its fields into u, hashing a new password.
func (a *App) applyUser(e *UserEdit, u *quire.User) error {
	if e.Email != nil {
		s := strings.TrimSpace(*e.Email)
		if m, err := mail.ParseAddress(s); err != nil || m.Address != s || len(s) > valid.MaxEmail {
			return quire.Errorf(quire.EINVALID, "email is not a valid address")
		}
		u.Email = s
	}
	if e.Name != nil {
		if err := valid.IdentName("name", *e.Name, a.limits.MaxName); err != nil {
			return err
		}
		u.Name = *e.Name
	}
	if e.Role != nil {
		if *e.Role != quire.RoleAdmin && *e.Role != quire.RoleMember {
			return quire.Errorf(quire.EINVALID, "role must be admin or member")
		}
		u.Role = *e.Role
	}
	if e.Password != nil {
		if n := len(*e.Password); n < valid.MinPassword || n > valid.MaxPassword {
			return quire.Errorf(quire.EINVALID, "password must be %d to %d bytes long", valid.MinPassword, valid.MaxPassword)
		}
		h, err := bcrypt.GenerateFromPassword([]byte(*e.Password), a.bcryptCost)
		if err != nil {
			return err
		}
		u.PasswordHash = string(h)
	}
	if e.Disabled != nil {
		u.Disabled = *e.Disabled
	}
	return nil
}

// CreateUser creates a user (admins only): a member unless told
// otherwise, named by the email when no name is given.
func (a *App) CreateUser(ctx context.Context, p *quire.Principal, e UserEdit) (*quire.User, error) {
	if err := p.CheckAdmin(); err != nil {
		return nil, err
	}
	if e.Email == nil || e.Password == nil {
		return nil, quire.Errorf(quire.EINVALID, "email and password are required")
	}
	u := &quire.User{Role: quire.RoleMember}
	if e.Name == nil {
		e.Name = e.Email
	}
	if err := a.applyUser(&e, u); err != nil {
		return nil, err
	}
	if err := a.meta.CreateUser(ctx, p.Actor(), u); err != nil {
		return nil, err
	}
	return u, nil
}

// Users lists every user (admins only).
func (a *App) Users(ctx context.Context, p *quire.Principal) ([]*quire.User, error) {
	if err := p.CheckAdmin(); err != nil {
		return nil, err
	}
	return a.meta.Users(ctx)
}

// User returns user id ("me" for p's own): admins see anyone, others
// themselves; anyone else is ENOTFOUND.
func (a *App) User(ctx context.Context, p *quire.Principal, id string) (*quire.User, error) {
	if id == "me" {
		id = p.User.ID
	}
	if id != p.User.ID && !p.IsAdmin() {
		return nil, quire.Errorf(quire.ENOTFOUND, "user not found")
	}
	return a.meta.User(ctx, id)
}

// UserUpdate is an updated user and, when the password changed, how many
// of the user's other sessions that ended.
type UserUpdate struct {
	User            *quire.User
	PasswordChanged bool
	// Disabled says the update disabled the user: all their sessions
	// ended, counted in SessionsRevoked.
	Disabled        bool
	SessionsRevoked int
}

// UpdateUser changes user id ("me" for p's own). Only an admin changes a
// role or disables a user. A new password ends the user's other sessions;
// disabling a user ends all of them, so re-enabling revives none (their
// API keys are refused while disabled, by Authenticate, and work again
// after: a key is a listed, revocable grant the user chose to make).
func (a *App) UpdateUser(ctx context.Context, p *quire.Principal, id string, e UserEdit) (*UserUpdate, error) {
	u, err := a.User(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if err := p.CheckAccount(); err != nil {
		return nil, err
	}
	if (e.Role != nil || e.Disabled != nil) && !p.IsAdmin() {
		return nil, quire.Errorf(quire.EFORBIDDEN, "only an admin may change role or disabled")
	}
	if err := a.applyUser(&e, u); err != nil {
		return nil, err
	}
	if err := a.meta.UpdateUser(ctx, p.Actor(), u); err != nil {
		return nil, err
	}
	out := &UserUpdate{User: u}
	if u.Disabled && e.Disabled != nil {
		n, err := a.revokeSessions(ctx, u.ID, "")
		if err != nil {
			return nil, &quire.Error{Code: quire.EUNAVAILABLE, Err: err,
				Message: "the user was disabled, but their sessions could not be ended; disable them again to retry"}
		}
		out.Disabled, out.SessionsRevoked = true, n
		return out, nil
	}
	if e.Password != nil {
		// A new password ends the user's other sessions: whoever knew
		// the old one may hold one. A user changing their own keeps the
		// session they did it with.
		keep := ""
		if p.Key == nil && p.User.ID == u.ID {
			keep = p.SessionID
		}
		n, err := a.revokeSessions(ctx, u.ID, keep)
		if err != nil {
			return nil, &quire.Error{Code: quire.EUNAVAILABLE, Err: err,
				Message: "the password was changed, but the user's other sessions could not be ended; set it again to retry"}
		}
		out.PasswordChanged, out.SessionsRevoked = true, n
	}
	return out, nil
}

// DeleteUser deletes user id (admins only; not themselves) and, best
// effort, their sessions: a deleted user's sessions no longer
// authenticate anyway. The last admin cannot be deleted (the store's
// rule, kept under its lock).
func (a *App) DeleteUser(ctx context.Context, p *quire.Principal, id string) error {
	if err := p.CheckAdmin(); err != nil {
		return err
	}
	if id == p.User.ID {
		return quire.Errorf(quire.ECONFLICT, "you cannot delete yourself")
	}
	if err := a.meta.DeleteUser(ctx, p.Actor(), id); err != nil {
		return err
	}
	a.revokeSessions(ctx, id, "")
	return nil
}
