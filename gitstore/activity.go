package gitstore

import (
	"context"

	"github.com/quire/quire"
)

// Activity lists the changes to project p, newest first: the history of
// each of its assets, and the commits of the system repository that
// changed the project's record or its assets' metadata (create, rename,
// delete, members).
func (s *Store) Activity(ctx context.Context, p *quire.Project, assets []*quire.Asset, opts quire.ListOptions) (_ []quire.Activity, _ string, err error) {
	defer s.observe(ctx, quire.GitOpRead, "Activity")(&err)
	var all []entry
	for _, a := range assets {
		h, err := s.history(a)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, "", err
		}
		all = append(all, h...)
	}
	meta, err := s.Store.ProjectActivity(p.ID)
	if err != nil {
		return nil, "", err
	}
	for _, e := range meta {
		all = append(all, entry{Commit: e.Commit, rank: metadataRank + e.Depth, source: quire.SourceMetadata})
	}
	sortNewestFirst(all)
	pg, next, err := pageEntries(all, opts)
	if err != nil {
		return nil, "", err
	}
	out := make([]quire.Activity, len(pg))
	for i, e := range pg {
		out[i] = quire.Activity{Commit: e.Commit, Source: e.source}
	}
	return out, next, nil
}

var _ quire.ActivityLog = (*Store)(nil)
