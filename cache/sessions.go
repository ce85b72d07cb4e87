package cache

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/quire/quire"
	"github.com/redis/go-redis/v9"
)

// sessionsTag is the hash tag of every session key: a session's record,
// its user's set and the active set are written in one MULTI, which a
// Redis Cluster runs only on keys of one slot. Sessions are few and small,
// so one slot holds them all.
const sessionsTag = "{sessions}"

// CreateSession stores s until it expires.
func (r *Redis) CreateSession(ctx context.Context, s *quire.Session) error {
	ttl := time.Until(s.ExpiresAt)
	if ttl <= 0 {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	pipe := r.client.TxPipeline()
	pipe.Set(ctx, r.key(sessionsTag, "sess", s.ID), b, ttl)
	pipe.SAdd(ctx, r.key(sessionsTag, "usess", s.UserID), s.ID)
	r.trackSession(ctx, pipe, s)
	if _, err := pipe.Exec(ctx); err != nil {
		return unavailable(err)
	}
	return nil
}

// Session returns the session with id, or ENOTFOUND when it does not
// exist, has expired or was revoked.
func (r *Redis) Session(ctx context.Context, id string) (*quire.Session, error) {
	b, err := r.client.Get(ctx, r.key(sessionsTag, "sess", id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, quire.Errorf(quire.ENOTFOUND, "session not found")
	}
	if err != nil {
		return nil, unavailable(err)
	}
	s := &quire.Session{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Sessions lists the live sessions of a user, newest first.
func (r *Redis) Sessions(ctx context.Context, userID string) ([]*quire.Session, error) {
	ids, err := r.client.SMembers(ctx, r.key(sessionsTag, "usess", userID)).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	out := []*quire.Session{}
	for _, id := range ids {
		s, err := r.Session(ctx, id)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			r.client.SRem(ctx, r.key(sessionsTag, "usess", userID), id)
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	return out, nil
}

// DeleteSession revokes a session; the next request with it fails.
func (r *Redis) DeleteSession(ctx context.Context, id string) error {
	s, err := r.Session(ctx, id)
	if err != nil {
		return err
	}
	pipe := r.client.TxPipeline()
	pipe.Del(ctx, r.key(sessionsTag, "sess", id))
	pipe.SRem(ctx, r.key(sessionsTag, "usess", s.UserID), id)
	r.untrackSession(ctx, pipe, id)
	if _, err := pipe.Exec(ctx); err != nil {
		return unavailable(err)
	}
	return nil
}

var _ quire.SessionStore = (*Redis)(nil)
