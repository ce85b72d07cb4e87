package cache

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"
)

// TestChangesReachOtherProcesses: a ref move published by one process
// moves the generation of another on the same prefix, and of no process
// on another prefix; a feed vouches for nothing before it is subscribed.
func TestChangesReachOtherProcesses(t *testing.T) {
	m := miniredis.RunT(t)
	open := func(prefix string) *Changes {
		r, err := Open(context.Background(), Options{URL: "redis://" + m.Addr(), Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		c := NewChanges(r, nil)
		t.Cleanup(func() { c.Close(); r.Close() })
		return c
	}
	a, b, other := open("x:"), open("x:"), open("y:")
	for _, c := range []*Changes{a, b, other} {
		if _, ok := c.Generation(); !ok {
			t.Fatal("not subscribed after NewChanges")
		}
	}
	gb, _ := b.Generation()
	gother, _ := other.Generation()
	a.Publish()
	waitFor(t, func() bool { g, _ := b.Generation(); return g > gb })
	a.Publish() // a second message, so the other prefix had time to hear one
	waitFor(t, func() bool { g, _ := b.Generation(); return g > gb+1 })
	if g, _ := other.Generation(); g != gother {
		t.Fatalf("a feed on another prefix moved: %d -> %d", gother, g)
	}
}
