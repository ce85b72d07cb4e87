package app

import (
	"context"

	"github.com/google/uuid"
	"github.com/quire/quire"
)

// Logout ends the session p authenticated with. An API key has none.
func (a *App) Logout(ctx context.Context, p *quire.Principal) error {
	if p.Key != nil {
		return quire.Errorf(quire.EINVALID, "an API key has no session to end; delete the key instead")
	}
	if err := a.endSession(ctx, p.SessionID); err != nil && quire.ErrorCode(err) != quire.ENOTFOUND {
		return err
	}
	return nil
}

// Sessions lists the sessions of user userID: p's own when userID is ""
// or p's id; anyone's for an admin.
func (a *App) Sessions(ctx context.Context, p *quire.Principal, userID string) ([]*quire.Session, error) {
	if userID == "" || userID == p.User.ID {
		userID = p.User.ID
	} else if err := p.CheckAdmin(); err != nil {
		return nil, err
	}
	return a.sessions.Sessions(ctx, userID)
}

// RevokeSession ends session id. Another user's session is ENOTFOUND,
// as if it did not exist, unless p is an admin.
func (a *App) RevokeSession(ctx context.Context, p *quire.Principal, id string) error {
	notFound := quire.Errorf(quire.ENOTFOUND, "session not found")
	if uuid.Validate(id) != nil {
		return notFound
	}
	sess, err := a.sessions.Session(ctx, id)
	if err != nil {
		return err
	}
	if sess.UserID != p.User.ID && !p.IsAdmin() {
		return notFound
	}
	if err := p.CheckAccount(); err != nil {
		return err
	}
	return a.endSession(ctx, id)
}

// endSession deletes session id and wakes the open event streams to
// check their credentials again: one of them may have used it.
func (a *App) endSession(ctx context.Context, id string) error {
	defer a.accessChanged()
	return a.sessions.DeleteSession(ctx, id)
}

// revokeSessions ends every session of user id but keep (a session id,
// or "") and returns how many it ended. A session that expired meanwhile
// is not counted.
func (a *App) revokeSessions(ctx context.Context, id, keep string) (int, error) {
	all, err := a.sessions.Sessions(ctx, id)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ss := range all {
		if ss.ID == keep {
			continue
		}
		err := a.endSession(ctx, ss.ID)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			continue
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
