package quire_test

import (
	"context"
	"testing"

	"github.com/quire/quire"
)

type otherKey struct{}

// TestRequestContext: a RequestContext answers its own read scope (one
// per request, and the same on every look), the InRequest mark when
// Answered or when its parent has it, and anything else from its parent.
func TestRequestContext(t *testing.T) {
	parent := context.WithValue(context.Background(), otherKey{}, "v")
	for _, tc := range []struct {
		name     string
		parent   context.Context
		answered bool
		want     bool
	}{
		{"read", parent, false, false},
		{"write", parent, true, true},
		{"read under a marked parent", quire.InRequest(parent), false, true},
	} {
		r := &quire.RequestContext{Context: tc.parent, Answered: tc.answered}
		if got := quire.IsInRequest(r); got != tc.want {
			t.Errorf("%s: IsInRequest %v, want %v", tc.name, got, tc.want)
		}
		s := quire.ReadScopeFrom(r)
		if s == nil || s != quire.ReadScopeFrom(r) || s == quire.ReadScopeFrom(&quire.RequestContext{Context: tc.parent}) {
			t.Errorf("%s: read scope %p, want one of its own", tc.name, s)
		}
		if !s.First("a") || s.First("a") || !s.First("b") {
			t.Errorf("%s: the scope does not remember what it has seen", tc.name)
		}
		for i := range 10 { // past the keys it holds without an allocation
			if !s.First(i) {
				t.Errorf("%s: key %d seen before it was", tc.name, i)
			}
		}
		for i := range 10 {
			if s.First(i) || s.First("a") {
				t.Errorf("%s: key %d forgotten", tc.name, i)
			}
		}
		if r.Value(otherKey{}) != "v" {
			t.Errorf("%s: a parent's value is lost", tc.name)
		}
		ctx, cancel := context.WithCancel(r)
		cancel()
		if ctx.Err() == nil || r.Err() != nil {
			t.Errorf("%s: cancelling a child reached the request's context", tc.name)
		}
	}
	if quire.IsInRequest(context.Background()) || !quire.IsInRequest(quire.InRequest(context.Background())) {
		t.Error("InRequest does not mark")
	}
}
