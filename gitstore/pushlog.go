package gitstore

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
)

// A push cannot rewrite the commits it brings (the client holds their
// hashes), and their author lines say whatever the client wrote. So every
// accepted ref update of a push is recorded, as API writes are, by a
// commit authored by the caller: one on the versions log saying who pushed
// which draft from where to where, with the credential in trailers:
//
//	Push draft 2
//
//	2 commits, 1a2b…..3c4d…
//
//	Quire-Push-User: <user id>
//	Quire-Push-Email: <user email>
//	Quire-Push-Key: <API key id, when a key pushed>
//	Quire-Push-Old: <draft commit before>
//	Quire-Push-New: <draft commit after>
//	Quire-Push-Commits: <first-parent commits the push added>
//
// History reads these records back and credits the pushed commits to the
// pusher (quire.Commit.PushedBy), whatever author they claim. Only quire
// writes the versions log, so no client can forge a record.

const (
	trailerUser    = "Quire-Push-User"
	trailerEmail   = "Quire-Push-Email"
	trailerKey     = "Quire-Push-Key"
	trailerOld     = "Quire-Push-Old"
	trailerNew     = "Quire-Push-New"
	trailerCommits = "Quire-Push-Commits"
	pushPrefix     = "Push draft "
)

// pushRecord is one push as the versions log records it.
type pushRecord struct {
	by       quire.Pusher
	old, new plumbing.Hash
	commits  int
}

// addedCommits counts the commits on new's first-parent chain that the
// push brings (those in its pack), down to old.
func addedCommits(objs *pushObjects, old, new plumbing.Hash) (int, error) {
	n := 0
	for h := new; !h.IsZero() && h != old && objs.inPack(h); n++ {
		c, err := object.GetCommit(objs, h)
		if err != nil {
			return n, err
		}
		h = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			h = c.ParentHashes[0]
		}
	}
	return n, nil
}

// recordPush appends the record of moving draft n from old to new to the
// versions log, before the draft's ref moves, so no accepted push goes
// unrecorded. undo takes the record back if the ref then does not move.
// Callers hold the repository's write lock.
func (g *Git) recordPush(r *repo, by quire.Actor, objs *pushObjects, draft int, old, new plumbing.Hash) (undo func(), err error) {
	added, err := addedCommits(objs, old, new)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%d\n\n%d commits, %s..%s\n\n", pushPrefix, draft, added, ShortHash(old), ShortHash(new))
	fmt.Fprintf(&b, "%s: %s\n%s: %s\n", trailerUser, by.UserID, trailerEmail, by.Email)
	if by.KeyID != "" {
		fmt.Fprintf(&b, "%s: %s\n", trailerKey, by.KeyID)
	}
	fmt.Fprintf(&b, "%s: %s\n%s: %s\n%s: %d\n", trailerOld, old, trailerNew, new, trailerCommits, added)
	// The pusher becomes an author of the draft in the same commit, when
	// new to it (authors.go): whatever author lines the commits carry.
	log, tip, err := r.readLog()
	if err != nil {
		return nil, err
	}
	if log.entry(draft).addAuthor(by) {
		err = r.writeLog(by, g.s.opts.Now(), log, tip, b.String())
	} else {
		tip, err = r.noteLog(by, g.s.opts.Now(), b.String())
	}
	if err != nil {
		return nil, err
	}
	return func() {
		if now, err := r.ref(versionsRef); err == nil {
			r.casRef(versionsRef, now, tip)
		}
	}, nil
}

// parsePush reads a versions-log message written by recordPush. It returns
// the message without its trailers, and the record (nil for other
// messages).
func parsePush(msg string) (string, *pushRecord) {
	if !strings.HasPrefix(msg, pushPrefix) {
		return msg, nil
	}
	i := strings.LastIndex(msg, "\n\n"+trailerUser+": ")
	if i < 0 {
		return msg, nil
	}
	rec := &pushRecord{}
	for _, line := range strings.Split(msg[i+2:], "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case trailerUser:
			rec.by.UserID = v
		case trailerEmail:
			rec.by.Email = v
		case trailerKey:
			rec.by.KeyID = v
		case trailerOld:
			rec.old = plumbing.NewHash(v)
		case trailerNew:
			rec.new = plumbing.NewHash(v)
		case trailerCommits:
			rec.commits, _ = strconv.Atoi(v)
		}
	}
	return msg[:i], rec
}
