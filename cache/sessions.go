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
	return r.replicated(ctx, func(pipe redis.Pipeliner) error {
		pipe.Set(ctx, r.key(sessionsTag, "sess", s.ID), b, ttl)
		pipe.SAdd(ctx, r.key(sessionsTag, "usess", s.UserID), s.ID)
		r.trackSession(ctx, pipe, s)
		return nil
	})
}

// replicaWait bounds how long a session write waits for a replica.
const replicaWait = 200 * time.Millisecond

// replicated runs a session write in one MULTI and, with Sentinel, waits
// (WAIT 1, at most replicaWait) for a replica to have it before the login
// or revocation is acknowledged: Redis replicates asynchronously, and a
// failover to a replica that never saw a revocation would bring the
// revoked session back. WAIT counts the writes of its own connection, so
// both go over one. No replica in time is not a failure: the write
// stands on the primary, as it would without the wait.
func (r *Redis) replicated(ctx context.Context, fn func(redis.Pipeliner) error) error {
	c, ok := r.client.(*redis.Client)
	if r.mode != ModeSentinel || !ok {
		if _, err := r.client.TxPipelined(ctx, fn); err != nil {
			return unavailable(err)
		}
		return nil
	}
	conn := c.Conn()
	defer conn.Close()
	if _, err := conn.TxPipelined(ctx, fn); err != nil {
		return unavailable(err)
	}
	conn.Wait(ctx, 1, replicaWait)
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
	return r.replicated(ctx, func(pipe redis.Pipeliner) error {
		pipe.Del(ctx, r.key(sessionsTag, "sess", id))
		pipe.SRem(ctx, r.key(sessionsTag, "usess", s.UserID), id)
		r.untrackSession(ctx, pipe, id)
		return nil
	})
}

var _ quire.SessionStore = (*Redis)(nil)
