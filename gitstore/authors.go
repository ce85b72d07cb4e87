package gitstore

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quire/quire"
	"github.com/quire/quire/gitstore/odb"
)

// Draft authorship. Who wrote a draft decides whose approval of it
// counts (app/reviews.go), so it comes from quire's own principals, never
// from what a commit says: a pushed commit's author line is whatever the
// client wrote, and a user may rename their email. Every write that moves
// a draft -- opening it, an API or UI or MCP write, an accepted push --
// adds the acting principal's user id (an API key acts as its user) to
// the draft's entry of the versions log, which only quire writes.
//
// The id is recorded before the draft's ref moves, under the same lock,
// so a crash between the two leaves an author too many, never one too
// few; a write that changes nothing records no one. Only a principal new
// to the draft costs a log commit: the check is one map read on the
// upsert path, and reading the authors never walks commit history, so no
// number of commits by someone else dilutes them.

// addAuthor adds by's user id to info's authors; it reports whether the
// list changed.
func (info *versionInfo) addAuthor(by quire.Actor) bool {
	if by.UserID == "" || slices.Contains(info.Authors, by.UserID) {
		return false
	}
	info.Authors = append(info.Authors, by.UserID)
	return true
}

// entry is draft n's entry of the log, made when missing: a draft older
// than the log's entries has its authors recorded from now on, and
// record() takes the rest from its commit.
func (log *versionLog) entry(n int) *versionInfo {
	key := strconv.Itoa(n)
	info := log.Versions[key]
	if info == nil {
		info = &versionInfo{}
		log.Versions[key] = info
	}
	return info
}

// noteAuthor records by as an author of draft n in the versions log, if
// it is not one yet, and returns the log as it now stands. The caller
// holds the write lock and moves the draft's ref next.
func (w *write) noteAuthor(by quire.Actor, n int) (*versionLog, error) {
	log, tip, err := w.r.readLog()
	if err != nil {
		return nil, err
	}
	if !log.entry(n).addAuthor(by) {
		return log, nil
	}
	msg := fmt.Sprintf("Record %s as an author of draft %d\n\nQuire-Author: %s\n", by.Email, n, by.UserID)
	return log, w.r.writeLog(by, w.s.opts.Now(), log, tip, msg)
}

// draftAuthors is who wrote draft n: the user ids recorded, and for a
// draft opened before they were kept (untracked) also the emails of its
// commits' authors down to base, as older servers judged it; that walk
// is bounded, and only such drafts take it.
func (r *repo) draftAuthors(n int, head, base string) (ids, emails []string, err error) {
	log, _, err := r.readLog()
	if err != nil {
		return nil, nil, err
	}
	info := log.Versions[strconv.Itoa(n)]
	if info != nil {
		ids = slices.Clone(info.Authors)
	}
	if ids == nil {
		ids = []string{}
	}
	if info != nil && info.Tracked {
		return ids, []string{}, nil
	}
	emails, err = r.commitAuthors(head, base)
	return ids, emails, err
}

// maxAuthorWalk bounds the commits read to find an untracked draft's
// authors.
const maxAuthorWalk = 1000

// commitAuthors is the emails of whoever authored a commit from head
// down to base, the base excluded: what an untracked draft has to go on.
func (r *repo) commitAuthors(head, base string) ([]string, error) {
	seen := map[string]bool{}
	out := []string{}
	stop, _ := odb.ParseHash(base)
	var queue []plumbing.Hash
	if h, ok := odb.ParseHash(head); ok {
		queue = append(queue, h)
	}
	visited := map[plumbing.Hash]bool{}
	for len(queue) > 0 && len(visited) < maxAuthorWalk {
		h := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if h == stop || visited[h] {
			continue
		}
		visited[h] = true
		c, err := r.Commit(h)
		if err != nil {
			if errors.Is(err, plumbing.ErrObjectNotFound) {
				continue
			}
			return nil, err
		}
		if e := strings.ToLower(c.Author.Email); !seen[e] {
			seen[e] = true
			out = append(out, c.Author.Email)
		}
		queue = append(queue, c.ParentHashes...)
	}
	slices.Sort(out)
	return out, nil
}
