package quire

import (
	"context"
	"sync"
)

// ReadScope is one request's view of stored state. A store that must look
// for changes other processes made (gitstore reads a ref on the shared
// data root) may do so once per scope instead of before every read: the
// request still sees every change committed before it began, at a
// fraction of the cost when it reads several records (an API key, its
// user, an asset and its project).
type ReadScope struct {
	mu   sync.Mutex
	seen []any
}

type readScopeKey struct{}

// WithReadScope returns ctx carrying a new ReadScope.
func WithReadScope(ctx context.Context) context.Context {
	return context.WithValue(ctx, readScopeKey{}, &ReadScope{})
}

// ReadScopeFrom returns the scope of ctx, or nil.
func ReadScopeFrom(ctx context.Context) *ReadScope {
	s, _ := ctx.Value(readScopeKey{}).(*ReadScope)
	return s
}

// First reports whether key is new to the scope, and records it. A nil
// scope reports true every time.
func (s *ReadScope) First(key any) bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.seen {
		if k == key {
			return false
		}
	}
	s.seen = append(s.seen, key)
	return true
}
