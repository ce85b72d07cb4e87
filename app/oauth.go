package app

import (
	"context"
	"slices"

	"github.com/quire/quire"
)

// OAuth grants as principals and as the "applications" of an account.
// The protocol itself is package oauth's; these are the use cases the
// transports call around it.

// oauthStore is the store of OAuth grants: the metadata store, when it
// keeps them.
func (a *App) oauthStore() (quire.OAuthStore, error) {
	m := a.meta
	if w, ok := m.(accessSignals); ok {
		m = w.MetaStore
	}
	st, ok := m.(quire.OAuthStore)
	if !ok {
		return nil, quire.Errorf(quire.ENOTFOUND, "this server keeps no OAuth applications")
	}
	return st, nil
}

// GrantPrincipal is the principal an access token of grant g acts as:
// g's user, within g's scope, exactly as an API key of that scope would
// (quire.Principal's checks cap the user's access by p.Key). A grant of a
// disabled or deleted user is EUNAUTHORIZED.
func (a *App) GrantPrincipal(ctx context.Context, g *quire.OAuthGrant) (*quire.Principal, error) {
	u, err := a.meta.User(ctx, g.UserID)
	if quire.ErrorCode(err) == quire.ENOTFOUND || err == nil && u.Disabled {
		return nil, quire.Errorf(quire.EUNAUTHORIZED, "missing or invalid credential")
	}
	if err != nil {
		return nil, err
	}
	k := &quire.APIKey{
		ID: g.ID, UserID: g.UserID, Name: "OAuth: " + g.ClientName, Scope: g.Scope,
		ProjectIDs: []string{}, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt,
	}
	return &quire.Principal{User: u, Key: k}, nil
}

// Applications lists the OAuth grants of p's user that still hold a
// usable token, oldest first.
func (a *App) Applications(ctx context.Context, p *quire.Principal) ([]*quire.OAuthGrant, error) {
	if err := p.CheckAccount(); err != nil {
		return nil, err
	}
	st, err := a.oauthStore()
	if err != nil {
		return nil, nil
	}
	all, err := st.OAuthGrants(ctx, p.User.ID)
	if err != nil {
		return nil, err
	}
	now := a.now()
	return slices.DeleteFunc(all, func(g *quire.OAuthGrant) bool { return !g.Active(now) }), nil
}

// RevokeApplication deletes grant id of p's user (or any user's, for an
// admin): its tokens stop working at once.
func (a *App) RevokeApplication(ctx context.Context, p *quire.Principal, id string) error {
	if err := p.CheckAccount(); err != nil {
		return err
	}
	st, err := a.oauthStore()
	if err != nil {
		return err
	}
	g, err := st.OAuthGrant(ctx, id)
	if err == nil && g.UserID != p.User.ID && !p.IsAdmin() {
		err = quire.Errorf(quire.ENOTFOUND, "application not found")
	}
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return quire.Errorf(quire.ENOTFOUND, "application not found")
	}
	if err != nil {
		return err
	}
	return st.DeleteOAuthGrant(ctx, p.Actor(), id)
}
