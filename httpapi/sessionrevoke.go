package httpapi

import (
	"context"

	"github.com/quire/quire"
)

// revokeSessions ends every session of user id but keep (a session id,
// or "") and returns how many it ended. A session that expired meanwhile
// is not counted.
func (s *Server) revokeSessions(ctx context.Context, id, keep string) (int, error) {
	all, err := s.sessions.Sessions(ctx, id)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ss := range all {
		if ss.ID == keep {
			continue
		}
		err := s.sessions.DeleteSession(ctx, ss.ID)
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
