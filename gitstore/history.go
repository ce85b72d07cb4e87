package gitstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
)

// An asset's history is every change a user made to it, newest first:
//
//   - the commits of each version (file upserts and deletes), credited to
//     the first version whose first-parent chain reaches them;
//   - the tags that publish (vN) and archive (archive/vN) a version, which
//     git records as tag objects with their own tagger and time;
//   - the versions-log commits that delete a draft, promote a version or
//     record a git push (the ones that allocate a number are left out:
//     "Open draft N", the draft's first commit, says the same);
//   - the events of its reviews (refs/reviews/N) and its label moves
//     (refs/meta/labels), each a commit by the acting user.
//
// Commits that came by git push, and the push's record, carry PushedBy:
// the credential that pushed them (pushlog.go).
//
// Git keeps times to the second, so entries of the same second are ordered
// by rank: a commit's depth in its chain, its tags just above it, log
// entries above both. Pages are cut by a cursor naming the last entry's
// sort key, so entries added meanwhile do not shift later pages.

// entry is one history or activity entry and its sort key.
type entry struct {
	quire.Commit
	rank   int64 // orders entries of the same second: higher is newer
	source string
}

// logRank puts versions-log entries above content entries of the same
// second; metadataRank puts system repository entries below them.
const (
	logRank      = 1 << 40
	metadataRank = -(1 << 50)
)

// History lists the changes to an asset, newest first.
func (s *Store) History(ctx context.Context, a *quire.Asset, opts quire.ListOptions) (_ []quire.Commit, _ string, err error) {
	defer s.observe(ctx, quire.GitOpRead, "History")(&err)
	all, err := s.history(a)
	if err != nil {
		return nil, "", err
	}
	pg, next, err := pageEntries(all, opts)
	if err != nil {
		return nil, "", err
	}
	out := make([]quire.Commit, len(pg))
	for i, e := range pg {
		out[i] = e.Commit
	}
	return out, next, nil
}

// history gathers an asset's entries, sorted newest first. The answer
// is shared with the repository's memo: callers must not change it.
func (s *Store) history(a *quire.Asset) ([]entry, error) {
	r, err := s.assetRepo(a)
	if err != nil {
		return nil, err
	}
	return r.hist.get(r, func() ([]entry, error) { return walkHistory(r, a) })
}

// walkHistory reads an asset's entries from its repository, sorted newest
// first.
func walkHistory(r *repo, a *quire.Asset) ([]entry, error) {
	log, logTip, err := r.readLog()
	if err != nil {
		return nil, err
	}
	// The versions log, newest first; its depth counts down from the tip.
	var logEntries []entry
	var pushes []*pushRecord
	for h := logTip; !h.IsZero(); {
		c, err := r.Commit(h)
		if err != nil {
			return nil, err
		}
		msg := strings.TrimRight(c.Message, "\n")
		if !strings.HasPrefix(msg, "Allocate version") {
			msg, push := parsePush(msg)
			e := entry{Commit: quire.Commit{
				ID: h.String(), Author: c.Author.Name, Email: c.Author.Email,
				Message: msg, Time: c.Author.When.UTC(), Version: trailingNumber(msg), Ref: versionsRef.String(),
			}}
			if push != nil {
				e.PushedBy = &push.by
				pushes = append(pushes, push)
			}
			logEntries = append(logEntries, e)
		}
		h = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			h = c.ParentHashes[0]
		}
	}

	depth := map[plumbing.Hash]int64{}
	// firstParent and index follow the version commits listed, so pushes
	// can be credited after the walk without reading a commit again.
	firstParent := map[plumbing.Hash]plumbing.Hash{}
	index := map[plumbing.Hash]int{}
	var all []entry
	add := func(e entry) {
		e.AssetID, e.AssetKind, e.source = a.ID, a.Kind, string(a.Kind)
		all = append(all, e)
	}
	for n := 1; n < log.Next; n++ {
		v, err := r.state(n)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, err
		}
		ref := DraftRef(n)
		switch v.state {
		case quire.StatePublished:
			ref = TagRef(n)
		case quire.StateArchived:
			ref = ArchiveRef(n)
		}
		// Walk the first-parent chain down to a commit already credited
		// (or the root), then number the new ones upwards from there.
		var chain []*object.Commit
		var hashes []plumbing.Hash
		var base int64 = -1
		for h := v.commit; !h.IsZero(); {
			if d, ok := depth[h]; ok {
				base = d
				break
			}
			c, err := r.Commit(h)
			if err != nil {
				return nil, err
			}
			chain, hashes = append(chain, c), append(hashes, h)
			h = plumbing.ZeroHash
			if len(c.ParentHashes) > 0 {
				h = c.ParentHashes[0]
			}
		}
		for i := len(chain) - 1; i >= 0; i-- {
			base++
			depth[hashes[i]] = base
			c := chain[i]
			index[hashes[i]] = len(all)
			if len(c.ParentHashes) > 0 {
				firstParent[hashes[i]] = c.ParentHashes[0]
			}
			add(entry{Commit: quire.Commit{
				ID: hashes[i].String(), Author: c.Author.Name, Email: c.Author.Email,
				Message: strings.TrimRight(c.Message, "\n"), Time: c.Author.When.UTC(),
				Version: n, Ref: ref.String(),
			}, rank: 4 * base})
		}
		for _, t := range []struct {
			tag *object.Tag
			ref plumbing.ReferenceName
			up  int64
		}{{v.tag, TagRef(n), 1}, {v.archived, ArchiveRef(n), 2}} {
			if t.tag == nil {
				continue
			}
			add(entry{Commit: quire.Commit{
				ID: t.tag.Hash.String(), Author: t.tag.Tagger.Name, Email: t.tag.Tagger.Email,
				Message: strings.TrimRight(t.tag.Message, "\n"), Time: t.tag.Tagger.When.UTC(),
				Version: n, Ref: t.ref.String(),
			}, rank: 4*depth[v.commit] + t.up})
		}
	}
	for _, p := range pushes {
		h := p.new
		for range p.commits {
			i, ok := index[h]
			if !ok {
				break // on no version's chain any more (a deleted draft)
			}
			all[i].PushedBy = &p.by
			h = firstParent[h]
		}
	}
	for i := range logEntries {
		logEntries[i].rank = logRank + int64(len(logEntries)-i)
		add(logEntries[i])
	}
	reviews, err := r.reviewHistory() // reviews.go
	if err != nil {
		return nil, err
	}
	for _, e := range reviews {
		add(e)
	}
	sortNewestFirst(all)
	return all, nil
}

// trailingNumber is the number that ends a message's first line
// ("Promote version 3" → 3), or 0.
func trailingNumber(msg string) int {
	line, _, _ := strings.Cut(msg, "\n")
	f := strings.Fields(line)
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[len(f)-1])
	return n
}

// before reports whether a sorts before b: newer first, then higher rank,
// then by id so the order is total.
func before(a, b *entry) bool {
	if !a.Time.Equal(b.Time) {
		return a.Time.After(b.Time)
	}
	if a.rank != b.rank {
		return a.rank > b.rank
	}
	return a.ID < b.ID
}

// ordered is before, with entries of the same sort key (the same commit
// in two repositories: same content, author and second) put in asset
// order, so a list is sorted the same way every time.
func ordered(a, b *entry) bool {
	if before(a, b) || before(b, a) {
		return before(a, b)
	}
	if a.AssetID != b.AssetID {
		return a.AssetID < b.AssetID
	}
	return a.source < b.source
}

func sortNewestFirst(all []entry) {
	sort.Slice(all, func(i, j int) bool { return ordered(&all[i], &all[j]) })
}

// cursor encodes an entry's sort key.
func cursor(e *entry) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d.%d.%d.%s", e.Time.Unix(), e.Time.Nanosecond(), e.rank, e.ID))
}

func parseCursor(c string) (*entry, error) {
	bad := quire.Errorf(quire.EINVALID, "invalid cursor")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, bad
	}
	f := strings.SplitN(string(b), ".", 4)
	if len(f) != 4 {
		return nil, bad
	}
	sec, err1 := strconv.ParseInt(f[0], 10, 64)
	nsec, err2 := strconv.ParseInt(f[1], 10, 64)
	rank, err3 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, bad
	}
	e := &entry{rank: rank}
	e.ID = f[3]
	e.Time = time.Unix(sec, nsec).UTC()
	return e, nil
}

// pageEntries cuts the page after opts.Cursor from sorted entries.
func pageEntries(all []entry, opts quire.ListOptions) ([]entry, string, error) {
	start := 0
	if opts.Cursor != "" {
		after, err := parseCursor(opts.Cursor)
		if err != nil {
			return nil, "", err
		}
		start = sort.Search(len(all), func(i int) bool { return before(after, &all[i]) })
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = 50
	}
	end := min(start+limit, len(all))
	if start >= end {
		return []entry{}, "", nil
	}
	next := ""
	if end < len(all) {
		next = cursor(&all[end-1])
	}
	return all[start:end], next, nil
}

// reviewRank puts review and label entries of the same second between the
// version commits and the versions log.
const reviewRank = 1 << 39

// reviewHistory lists the commits of a's reviews and of its label log as
// history entries: each is an event by the acting user.
func (r *repo) reviewHistory() ([]entry, error) {
	_, tips, err := r.reviewNumbers()
	if err != nil {
		return nil, err
	}
	chains := map[plumbing.ReferenceName]plumbing.Hash{}
	for n, tip := range tips {
		chains[ReviewRef(n)] = tip
	}
	if tip, err := r.ref(labelLogRef); err != nil {
		return nil, err
	} else if !tip.IsZero() {
		chains[labelLogRef] = tip
	}
	var out []entry
	for ref, tip := range chains {
		var chain []entry
		for h := tip; !h.IsZero(); {
			c, err := r.Commit(h)
			if err != nil {
				return nil, err
			}
			msg := historyMessage(c.Message)
			chain = append(chain, entry{Commit: quire.Commit{
				ID: h.String(), Author: c.Author.Name, Email: c.Author.Email,
				Message: msg, Time: c.Author.When.UTC(), Ref: ref.String(),
			}})
			h = plumbing.ZeroHash
			if len(c.ParentHashes) > 0 {
				h = c.ParentHashes[0]
			}
		}
		for i := range chain {
			chain[i].rank = reviewRank + int64(len(chain)-i)
		}
		out = append(out, chain...)
	}
	return out, nil
}

// historyMessage is a review or label commit's message as history shows
// it: the subject, and an override's reason, without the trailers that
// name the review and its head.
func historyMessage(m string) string {
	lines := strings.Split(strings.TrimRight(m, "\n"), "\n")
	out := lines[0]
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "Override: ") {
			out += "\n\n" + l
		}
	}
	return out
}
