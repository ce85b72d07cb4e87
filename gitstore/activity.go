package gitstore

import (
	"container/heap"
	"context"
	"sort"

	"github.com/quire/quire"
)

// Activity lists the changes to project p, newest first: the history of
// each of its assets, and the commits of the system repository that
// changed the project's record or its assets' metadata (create, rename,
// delete, members).
//
// Each source is already sorted newest first (an asset's history comes
// from its repository's memo, histcache.go), so a page is a merge of their
// heads: the cost is the page, not the project's whole history.
func (s *Store) Activity(ctx context.Context, p *quire.Project, assets []*quire.Asset, opts quire.ListOptions) (_ []quire.Activity, _ string, err error) {
	defer s.observe(ctx, quire.GitOpRead, "Activity")(&err)
	var after *entry
	if opts.Cursor != "" {
		if after, err = parseCursor(opts.Cursor); err != nil {
			return nil, "", err
		}
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = 50
	}
	var m merge
	for _, a := range assets {
		h, err := s.history(a)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, "", err
		}
		m.add(h, after)
	}
	meta, err := s.Store.ProjectActivity(p.ID)
	if err != nil {
		return nil, "", err
	}
	me := make([]entry, len(meta))
	for i, e := range meta { // oldest first: reversed, it is newest first
		me[len(meta)-1-i] = entry{Commit: e.Commit, rank: metadataRank + e.Depth, source: quire.SourceMetadata}
	}
	// Depths are distinct and grow with the commit, but git times need not:
	// sort, as the full walk did, rather than trust the reversal.
	sortNewestFirst(me)
	m.add(me, after)
	heap.Init(&m)
	out := []quire.Activity{}
	var last *entry
	for len(out) < limit && m.Len() > 0 {
		e := m.pop()
		out = append(out, quire.Activity{Commit: e.Commit, Source: e.source})
		last = e
	}
	next := ""
	if m.Len() > 0 && last != nil {
		next = cursor(last)
	}
	return out, next, nil
}

// merge is a heap of sorted entry lists keyed by each one's head.
type merge [][]entry

// add queues the part of sorted that comes after the cursor entry.
func (m *merge) add(sorted []entry, after *entry) {
	if after != nil {
		sorted = sorted[sort.Search(len(sorted), func(i int) bool { return before(after, &sorted[i]) }):]
	}
	if len(sorted) > 0 {
		*m = append(*m, sorted)
	}
}

// pop takes the newest head.
func (m *merge) pop() *entry {
	e := &(*m)[0][0]
	if (*m)[0] = (*m)[0][1:]; len((*m)[0]) == 0 {
		heap.Pop(m)
	} else {
		heap.Fix(m, 0)
	}
	return e
}

func (m merge) Len() int           { return len(m) }
func (m merge) Less(i, j int) bool { return ordered(&m[i][0], &m[j][0]) }
func (m merge) Swap(i, j int)      { m[i], m[j] = m[j], m[i] }
func (m *merge) Push(x any)        { *m = append(*m, x.([]entry)) }
func (m *merge) Pop() any {
	old := *m
	x := old[len(old)-1]
	*m = old[:len(old)-1]
	return x
}

var _ quire.ActivityLog = (*Store)(nil)
