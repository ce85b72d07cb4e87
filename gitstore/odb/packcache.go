package odb

import (
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
)

// PackCache keeps packs built for clones (a set of wanted tips, no haves)
// so repeated clones of the same state are a memory copy. An entry is keyed
// by the repository's advertised refs, so it can never be served once a
// ref has moved; store changes also drop the asset's entries at once so
// they do not hold memory. Bounded in total bytes, least recently used
// first out.
//
// golang-lru counts entries, not bytes: the LRU is made large enough
// never to evict by count, and Put keeps the byte total beside it and
// evicts with RemoveOldest while over the budget.
type PackCache struct {
	lru      *lru.Cache[string, *PackEntry]
	max      int64 // total bytes
	maxEntry int64

	mu   sync.Mutex // serializes changes; guards size
	size int64
}

// PackEntry is one cached clone pack.
type PackEntry struct {
	Key     string
	AssetID string
	Pack    []byte
	Objects int
}

// maxPackEntries bounds the entries by count, far above what the byte
// budget lets in.
const maxPackEntries = 1 << 16

// NewPackCache returns a cache of at most max bytes of packs, none larger
// than maxEntry.
func NewPackCache(max, maxEntry int64) *PackCache {
	c := &PackCache{max: max, maxEntry: maxEntry}
	// The callback runs inside the cache's calls below, under c.mu.
	c.lru, _ = lru.NewWithEvict(maxPackEntries, func(_ string, e *PackEntry) {
		c.size -= int64(len(e.Pack))
	})
	return c
}

// Get returns the pack cached under key.
func (c *PackCache) Get(key string) (*PackEntry, bool) {
	return c.lru.Get(key)
}

// Put caches e, unless it is larger than an entry may be.
func (c *PackCache) Put(e *PackEntry) {
	n := int64(len(e.Pack))
	if n > c.maxEntry || n > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(e.Key)
	c.lru.Add(e.Key, e)
	c.size += n
	for c.size > c.max {
		c.lru.RemoveOldest()
	}
}

// DropAsset forgets every pack of one asset.
func (c *PackCache) DropAsset(assetID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.lru.Keys() {
		if e, ok := c.lru.Peek(k); ok && e.AssetID == assetID {
			c.lru.Remove(k)
		}
	}
}

// Drop forgets every pack.
func (c *PackCache) Drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Purge()
}
