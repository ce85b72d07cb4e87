package gitstore

import (
	"container/list"
	"sync"
)

// packCache keeps packs built for clones (a set of wanted tips, no haves)
// so repeated clones of the same state are a memory copy. An entry is keyed
// by the repository's advertised refs, so it can never be served once a
// ref has moved; store changes also drop the asset's entries at once so
// they do not hold memory. Bounded in total bytes, least recently used
// first out.
type packCache struct {
	mu       sync.Mutex
	max      int64 // total bytes
	maxEntry int64
	size     int64
	lru      *list.List // of *packEntry, most recent first
	m        map[string]*list.Element
}

type packEntry struct {
	key     string
	assetID string
	pack    []byte
	objects int
}

func newPackCache(max, maxEntry int64) *packCache {
	return &packCache{max: max, maxEntry: maxEntry, lru: list.New(), m: map[string]*list.Element{}}
}

func (c *packCache) get(key string) (*packEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[key]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*packEntry), true
}

func (c *packCache) put(e *packEntry) {
	n := int64(len(e.pack))
	if n > c.maxEntry || n > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[e.key]; ok {
		c.remove(el)
	}
	c.m[e.key] = c.lru.PushFront(e)
	c.size += n
	for c.size > c.max {
		c.remove(c.lru.Back())
	}
}

func (c *packCache) remove(el *list.Element) {
	e := el.Value.(*packEntry)
	c.lru.Remove(el)
	delete(c.m, e.key)
	c.size -= int64(len(e.pack))
}

// dropAsset forgets every pack of one asset.
func (c *packCache) dropAsset(assetID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*packEntry).assetID == assetID {
			c.remove(el)
		}
		el = next
	}
}

func (c *packCache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Init()
	c.m = map[string]*list.Element{}
	c.size = 0
}
