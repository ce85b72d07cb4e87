package quire

import (
	"context"
	"time"
)

// IdempotencyTTL is how long a request's Idempotency-Key is remembered.
const IdempotencyTTL = 24 * time.Hour

// IdempotentResponse is the first answer to a request made with an
// Idempotency-Key, replayed to its retries.
type IdempotentResponse struct {
	// Fingerprint identifies the request (its body), so a retry that
	// differs can be refused.
	Fingerprint string            `json:"fingerprint"`
	Status      int               `json:"status"`
	Header      map[string]string `json:"header,omitempty"`
	Body        []byte            `json:"body"`
}

// IdempotencyStore remembers answers by key (cache.Idempotency, in Redis).
type IdempotencyStore interface {
	// Begin claims key for a request with fingerprint. When another
	// request claimed it first it returns that request's answer, or nil
	// with claimed false while that request is still running (pending
	// then holds its fingerprint).
	Begin(ctx context.Context, key, fingerprint string) (prior *IdempotentResponse, pending string, claimed bool, err error)
	// Finish stores the answer of the request that claimed key.
	Finish(ctx context.Context, key string, r *IdempotentResponse) error
	// Release forgets key, so a retry runs again (the request failed in
	// a way worth retrying).
	Release(ctx context.Context, key string) error
}
