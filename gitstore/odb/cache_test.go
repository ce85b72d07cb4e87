package odb

import (
	"bytes"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestTreeCacheWeight: the tree cache is bounded by entries held (plus one
// per tree), not by trees, and drops the least recently used first.
func TestTreeCacheWeight(t *testing.T) {
	c := NewTreeCache(10)
	h := func(i byte) plumbing.Hash { return plumbing.Hash{i} }
	four := make([]object.TreeEntry, 4)
	c.put(h(1), four) // weight 5
	c.put(h(2), four) // 10
	if _, ok := c.get(h(1)); !ok {
		t.Fatal("tree 1 dropped under the bound")
	}
	c.put(h(3), four) // 15: drops tree 2, the least recently used
	if _, ok := c.get(h(2)); ok {
		t.Fatal("tree 2 kept over the bound")
	}
	if _, ok := c.get(h(1)); !ok {
		t.Fatal("tree 1 dropped, though used more recently than tree 2")
	}
	c.put(h(1), four) // already there: no double count
	if c.n != 10 {
		t.Fatalf("weight %d, want 10", c.n)
	}
	c.put(h(4), make([]object.TreeEntry, 11)) // larger than the cache
	if _, ok := c.get(h(4)); ok || c.n != 10 {
		t.Fatalf("an oversized tree was cached (weight %d)", c.n)
	}
}

// TestPackCacheBytes: the clone pack cache is bounded in bytes, refuses
// entries over its per-entry bound, and drops an asset's packs at once.
func TestPackCacheBytes(t *testing.T) {
	c := NewPackCache(100, 60)
	pack := func(key, asset string, n int) *PackEntry {
		return &PackEntry{Key: key, AssetID: asset, Pack: bytes.Repeat([]byte{1}, n)}
	}
	c.Put(pack("a", "x", 40))
	c.Put(pack("b", "y", 40))
	c.Put(pack("big", "y", 61))
	if _, ok := c.Get("big"); ok {
		t.Fatal("a pack over the entry bound was cached")
	}
	c.Get("a")
	c.Put(pack("c", "x", 40)) // 120 bytes: drops b
	if _, ok := c.Get("b"); ok {
		t.Fatal("the least recently used pack was kept over the byte bound")
	}
	c.Put(pack("a", "x", 50)) // replaces a: 90 bytes
	if c.size != 90 {
		t.Fatalf("size %d, want 90", c.size)
	}
	c.DropAsset("x")
	if c.size != 0 || c.lru.Len() != 0 {
		t.Fatalf("after DropAsset: %d bytes in %d packs", c.size, c.lru.Len())
	}
	c.Put(pack("d", "y", 10))
	c.Drop()
	if c.size != 0 || c.lru.Len() != 0 {
		t.Fatalf("after Drop: %d bytes in %d packs", c.size, c.lru.Len())
	}
}
