package gitstore

import (
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire/gitstore/odb"
	"github.com/quire/quire/valid"
)

// treeStats is the file count and byte total of a tree.
type treeStats struct {
	files int
	bytes int64
}

// statsCache remembers treeStats by tree id, so checking version limits on
// an upsert does not walk the whole tree each time.
type statsCache struct {
	mu  sync.Mutex
	max int
	m   map[plumbing.Hash]treeStats
}

func newStatsCache(max int) *statsCache {
	return &statsCache{max: max, m: map[plumbing.Hash]treeStats{}}
}

func (c *statsCache) get(h plumbing.Hash) (treeStats, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[h]
	return st, ok
}

func (c *statsCache) put(h plumbing.Hash, st treeStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		for k := range c.m { // drop an arbitrary entry
			delete(c.m, k)
			break
		}
	}
	c.m[h] = st
}

// stats returns the file count and size of the tree at root.
func (s *Store) treeStats(r *repo, root plumbing.Hash) (treeStats, error) {
	if root.IsZero() || root == odb.EmptyTree {
		return treeStats{}, nil
	}
	if st, ok := s.stats.get(root); ok {
		return st, nil
	}
	var st treeStats
	err := r.WalkFiles(root, "", func(_ string, e object.TreeEntry) error {
		size, err := r.Size(e.Hash)
		if err != nil {
			return err
		}
		st.files++
		st.bytes += size
		return nil
	})
	if err != nil {
		return st, err
	}
	s.stats.put(root, st)
	return st, nil
}

func (s *Store) checkVersionLimits(st treeStats) error {
	return valid.Totals(st.files, st.bytes, s.opts.Limits)
}
