package app

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// KeyEdit is what a new API key is made of.
type KeyEdit struct {
	Name       string
	Scope      quire.Scope
	ProjectIDs []string
	ExpiresAt  *time.Time
}

// NewKey is an API key just made or rotated, with the token to show once.
type NewKey struct {
	Key   *quire.APIKey
	Token string
}

// newKeySecret gives k a fresh secret and returns the token to show once.
func newKeySecret(k *quire.APIKey) string {
	secret := quire.NewSecret()
	k.SecretHash = quire.HashSecret(secret)
	tok := quire.Token(quire.APIKeyPrefix, k.ID, secret)
	k.Prefix = tok[:len(quire.APIKeyPrefix)+8]
	return tok
}

// CreateAPIKey makes an API key of p's user. Its scope is read unless
// given; it may expire, at a time still to come; project_ids, when given,
// must name projects (by id) the user can see, and confine the key to
// them. A key cannot make keys.
func (a *App) CreateAPIKey(ctx context.Context, p *quire.Principal, e KeyEdit) (*NewKey, error) {
	if err := p.CheckAccount(); err != nil {
		return nil, err
	}
	if err := valid.IdentName("name", e.Name, a.limits.MaxName); err != nil {
		return nil, err
	}
	if e.Scope == "" {
		e.Scope = quire.ScopeRead
	}
	if e.Scope.Level() == quire.AccessNone {
		return nil, quire.Errorf(quire.EINVALID, "scope must be read, write or admin")
	}
	if e.ExpiresAt != nil && !e.ExpiresAt.After(a.now()) {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "expires_at %s is not in the future", e.ExpiresAt.UTC().Format(time.RFC3339)).WithDetail("field", "expires_at")
	}
	for _, id := range e.ProjectIDs {
		pr, err := a.meta.Project(ctx, id)
		if err != nil || pr.ID != id || p.ProjectAccess(pr) == quire.AccessNone {
			return nil, quire.Errorf(quire.EINVALID, "project_ids: unknown project %q", id)
		}
	}
	k := &quire.APIKey{ID: uuid.NewString(), UserID: p.User.ID, Name: e.Name, Scope: e.Scope, ProjectIDs: e.ProjectIDs, ExpiresAt: e.ExpiresAt}
	if k.ProjectIDs == nil {
		k.ProjectIDs = []string{}
	}
	tok := newKeySecret(k)
	if err := a.meta.CreateAPIKey(ctx, p.Actor(), k); err != nil {
		return nil, err
	}
	return &NewKey{Key: k, Token: tok}, nil
}

// APIKeys lists the API keys of p's user, or, with all, every user's
// when p is an admin.
func (a *App) APIKeys(ctx context.Context, p *quire.Principal, all bool) ([]*quire.APIKey, error) {
	userID := p.User.ID
	if all && p.IsAdmin() {
		userID = ""
	}
	return a.meta.APIKeys(ctx, userID)
}

// APIKey returns API key id if p's user owns it or p is an admin; any
// other key is ENOTFOUND, as if it did not exist.
func (a *App) APIKey(ctx context.Context, p *quire.Principal, id string) (*quire.APIKey, error) {
	k, err := a.meta.APIKey(ctx, id)
	if err != nil {
		return nil, err
	}
	if k.UserID != p.User.ID && !p.IsAdmin() {
		return nil, quire.Errorf(quire.ENOTFOUND, "API key not found")
	}
	return k, nil
}

// DeleteAPIKey deletes API key id (see APIKey for whose).
func (a *App) DeleteAPIKey(ctx context.Context, p *quire.Principal, id string) error {
	if err := p.CheckAccount(); err != nil {
		return err
	}
	k, err := a.APIKey(ctx, p, id)
	if err != nil {
		return err
	}
	return a.meta.DeleteAPIKey(ctx, p.Actor(), k.ID)
}

// RotateAPIKey gives API key id (see APIKey for whose) a new secret; the
// old token stops working.
func (a *App) RotateAPIKey(ctx context.Context, p *quire.Principal, id string) (*NewKey, error) {
	if err := p.CheckAccount(); err != nil {
		return nil, err
	}
	k, err := a.APIKey(ctx, p, id)
	if err != nil {
		return nil, err
	}
	tok := newKeySecret(k)
	if err := a.meta.UpdateAPIKey(ctx, p.Actor(), k); err != nil {
		return nil, err
	}
	return &NewKey{Key: k, Token: tok}, nil
}
