package cache

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/quire/quire"
	"github.com/redis/go-redis/v9"
)

// Idempotency keeps Idempotency-Key answers in Redis for
// quire.IdempotencyTTL: a claim is "pending:<fingerprint>", set with NX so
// exactly one of concurrent requests runs; the answer replaces it.
type Idempotency struct{ r *Redis }

// NewIdempotency keeps answers in r.
func NewIdempotency(r *Redis) *Idempotency { return &Idempotency{r: r} }

var _ quire.IdempotencyStore = (*Idempotency)(nil)

const pendingPrefix = "pending:"

func (i *Idempotency) key(k string) string { return i.r.key("idem", k) }

// Begin claims key, or returns what holds it.
func (i *Idempotency) Begin(ctx context.Context, key, fingerprint string) (*quire.IdempotentResponse, string, bool, error) {
	k := i.key(key)
	ok, err := i.r.client.SetNX(ctx, k, pendingPrefix+fingerprint, quire.IdempotencyTTL).Result()
	if err != nil {
		return nil, "", false, idemUnavailable(err)
	}
	if ok {
		return nil, "", true, nil
	}
	v, err := i.r.client.Get(ctx, k).Result()
	if errors.Is(err, redis.Nil) {
		// Released between the two commands: claim again.
		return i.Begin(ctx, key, fingerprint)
	}
	if err != nil {
		return nil, "", false, idemUnavailable(err)
	}
	if fp, pending := strings.CutPrefix(v, pendingPrefix); pending {
		return nil, fp, false, nil
	}
	var resp quire.IdempotentResponse
	if err := json.Unmarshal([]byte(v), &resp); err != nil {
		return nil, "", false, err
	}
	return &resp, "", false, nil
}

// Finish stores the answer, for the rest of the key's time.
func (i *Idempotency) Finish(ctx context.Context, key string, resp *quire.IdempotentResponse) error {
	b, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	if err := i.r.client.Set(ctx, i.key(key), b, redis.KeepTTL).Err(); err != nil {
		return idemUnavailable(err)
	}
	return nil
}

// Release forgets key.
func (i *Idempotency) Release(ctx context.Context, key string) error {
	if err := i.r.client.Del(ctx, i.key(key)).Err(); err != nil {
		return idemUnavailable(err)
	}
	return nil
}

func idemUnavailable(err error) error {
	return &quire.Error{Code: quire.EUNAVAILABLE, Message: "idempotency store unavailable; retry later", Err: err}
}
