package quire

import (
	"context"
)

// ObserveFunc is told when an operation on a dependency starts. It returns
// the context to run the operation in (carrying a trace span, say) and a
// function to call with the operation's error when it ends. Stores take one
// so they can be timed and traced without importing a metrics library.
type ObserveFunc func(ctx context.Context, op, name string) (context.Context, func(err error))

// Git operations an ObserveFunc is told about, as the op argument.
const (
	GitOpCommit = "commit" // a write: a commit, tag or ref change
	GitOpRead   = "read"   // a read of versions, files, diffs or history
	GitOpClone  = "clone"  // serving a clone or fetch (upload-pack)
	GitOpPush   = "push"   // receiving a push (receive-pack)
)

// Observe calls fn, or does nothing when fn is nil.
func (fn ObserveFunc) Observe(ctx context.Context, op, name string) (context.Context, func(err error)) {
	if fn == nil {
		return ctx, func(error) {}
	}
	return fn(ctx, op, name)
}

// CacheStats is implemented by a cache that counts its hits and misses.
// /metrics reports them by tier.
type CacheStats interface {
	CacheStats() []CacheTierStats
}

// CacheTierStats are the counts of one cache tier ("memory", "redis", …)
// since the process started.
type CacheTierStats struct {
	Tier   string
	Hits   uint64
	Misses uint64
}
