package cache

import (
	"context"
	"strconv"
	"time"

	"github.com/quire/quire"
	"github.com/redis/go-redis/v9"
)

// Live sessions are also kept in one sorted set scored by expiry, so the
// active-session gauge costs two cheap commands per scrape instead of a
// scan of every key. Sessions created before the set existed are not
// counted until they are next written.

func (r *Redis) activeKey() string { return r.key(sessionsTag, "active") }

// trackSession adds s to the active set within pipe.
func (r *Redis) trackSession(ctx context.Context, pipe redis.Pipeliner, s *quire.Session) {
	pipe.ZAdd(ctx, r.activeKey(), redis.Z{Score: float64(s.ExpiresAt.Unix()), Member: s.ID})
}

// untrackSession removes session id from the active set within pipe.
func (r *Redis) untrackSession(ctx context.Context, pipe redis.Pipeliner, id string) {
	pipe.ZRem(ctx, r.activeKey(), id)
}

// ActiveSessions counts the sessions that have neither expired nor been
// revoked, dropping expired ones from the set as it goes.
func (r *Redis) ActiveSessions(ctx context.Context) (int64, error) {
	pipe := r.client.TxPipeline()
	pipe.ZRemRangeByScore(ctx, r.activeKey(), "-inf", strconv.FormatInt(time.Now().Unix(), 10))
	n := pipe.ZCard(ctx, r.activeKey())
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, unavailable(err)
	}
	return n.Val(), nil
}
