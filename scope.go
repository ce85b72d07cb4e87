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
	// first holds the first keys, without an allocation: a request
	// reads from two or three stores.
	first [4]any
}

type readScopeKey struct{}

// InRequest marks ctx as a request's that a door answers: background
// work a use case starts on its behalf waits for the answer to be
// written before it takes the cores (app's queue of project repository
// changes; issue 31).
func InRequest(ctx context.Context) context.Context {
	return context.WithValue(ctx, inRequestKey{}, true)
}

// IsInRequest reports whether ctx is a request's a door answers
// (InRequest, or a RequestContext marked so).
func IsInRequest(ctx context.Context) bool { return ctx.Value(inRequestKey{}) != nil }

type inRequestKey struct{}

// RequestContext is the context of one request a door answers, holding
// in one value what use cases read of it: the read scope they share
// (ReadScopeFrom) and whether it is a request that background work waits
// for (IsInRequest). A door makes one per request, where a
// context.WithValue per mark was an allocation each on the hot path.
type RequestContext struct {
	context.Context
	Scope ReadScope
	// Answered marks the request as InRequest does.
	Answered bool
}

// Value answers the read scope and the InRequest mark, and asks the
// parent context for anything else.
func (r *RequestContext) Value(key any) any {
	switch key.(type) {
	case readScopeKey:
		return &r.Scope
	case inRequestKey:
		if r.Answered {
			return true
		}
	}
	return r.Context.Value(key)
}

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
	if s.seen == nil {
		s.seen = s.first[:0]
	}
	s.seen = append(s.seen, key)
	return true
}
