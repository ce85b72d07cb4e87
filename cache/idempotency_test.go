package cache

import (
	"context"
	"testing"
	"time"

	"github.com/quire/quire"
)

// TestIdempotencyClaims checks one claim per key: a second Begin sees the
// first pending (with its fingerprint), then its answer; Release frees
// the key; the answer lives IdempotencyTTL.
func TestIdempotencyClaims(t *testing.T) {
	for name, tr := range redisURLs(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			rs := openShared(t, tr.url, 2)
			a, b := NewIdempotency(rs[0]), NewIdempotency(rs[1])
			if _, _, claimed, err := a.Begin(ctx, "k", "fp"); err != nil || !claimed {
				t.Fatalf("first claim: %v %v", claimed, err)
			}
			prior, pending, claimed, err := b.Begin(ctx, "k", "fp2")
			if err != nil || claimed || prior != nil || pending != "fp" {
				t.Fatalf("second claim: %v %q %v %v", prior, pending, claimed, err)
			}
			want := &quire.IdempotentResponse{Fingerprint: "fp", Status: 201, Header: map[string]string{"ETag": `"x"`}, Body: []byte("sealed")}
			if err := a.Finish(ctx, "k", want); err != nil {
				t.Fatal(err)
			}
			prior, _, claimed, err = b.Begin(ctx, "k", "fp")
			if err != nil || claimed || prior == nil || prior.Status != 201 || string(prior.Body) != "sealed" || prior.Header["ETag"] != `"x"` {
				t.Fatalf("after finish: %+v %v %v", prior, claimed, err)
			}
			if tr.clock != nil {
				tr.clock.Advance(quire.IdempotencyTTL - time.Second)
				if _, _, claimed, _ := b.Begin(ctx, "k", "fp"); claimed {
					t.Fatal("answer forgotten before its time")
				}
				tr.clock.Advance(2 * time.Second)
				if _, _, claimed, _ := b.Begin(ctx, "k", "fp"); !claimed {
					t.Fatal("answer kept past its time")
				}
			}
			if _, _, claimed, _ := a.Begin(ctx, "r", "fp"); !claimed {
				t.Fatal("claim r")
			}
			if err := a.Release(ctx, "r"); err != nil {
				t.Fatal(err)
			}
			if _, _, claimed, _ := b.Begin(ctx, "r", "fp"); !claimed {
				t.Fatal("released key not claimable")
			}
		})
	}
}
