package gitstore

import (
	"context"
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// pushChecker applies the API's rules to pushed content: every new commit
// must be complete, and its tree must hold only regular files whose paths
// pass valid.FilePath, within the file and version limits.
type pushChecker struct {
	s       *Store
	objs    *pushObjects
	limits  quire.Limits
	trees   map[string]treeStats // tree id + path prefix -> totals
	sizes   map[plumbing.Hash]int64
	checked map[plumbing.Hash]bool // commits already checked
	kind    quire.Kind             // of the asset pushed to, for checkNames
}

func newPushChecker(s *Store, objs *pushObjects) *pushChecker {
	return &pushChecker{
		s: s, objs: objs, limits: s.opts.Limits,
		trees: map[string]treeStats{}, sizes: map[plumbing.Hash]int64{}, checked: map[plumbing.Hash]bool{},
	}
}

// commits checks every commit reachable from tip that the repository does
// not hold yet (those it holds were checked when they arrived).
func (pc *pushChecker) commits(ctx context.Context, tip plumbing.Hash) error {
	obj, err := pc.objs.EncodedObject(plumbing.AnyObject, tip)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return quire.Errorf(quire.EINVALID, "missing necessary objects")
	}
	if err != nil {
		return err
	}
	if obj.Type() != plumbing.CommitObject {
		return quire.Errorf(quire.EINVALID, "%s is a %s, not a commit", ShortHash(tip), obj.Type())
	}
	queue := []plumbing.Hash{tip}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if pc.checked[h] {
			continue
		}
		pc.checked[h] = true
		if !pc.objs.inPack(h) {
			if pc.objs.r.st.HasEncodedObject(h) == nil {
				continue // already in the repository, with its history
			}
			return quire.Errorf(quire.EINVALID, "missing necessary objects: commit %s", ShortHash(h))
		}
		c, err := object.GetCommit(pc.objs, h)
		if err != nil {
			return quire.Errorf(quire.EINVALID, "commit %s: %v", ShortHash(h), err)
		}
		st, err := pc.tree(c.TreeHash, "")
		if err != nil {
			return withCommit(h, err)
		}
		if err := pc.s.checkVersionLimits(st); err != nil {
			return withCommit(h, err)
		}
		queue = append(queue, c.ParentHashes...)
	}
	return nil
}

func withCommit(h plumbing.Hash, err error) error {
	var qe *quire.Error
	if errors.As(err, &qe) && qe.Code != quire.EINTERNAL {
		return quire.Errorf(qe.Code, "commit %s: %s", ShortHash(h), qe.Message)
	}
	return err
}

// tree checks the tree h found at prefix and returns its totals.
func (pc *pushChecker) tree(h plumbing.Hash, prefix string) (treeStats, error) {
	key := h.String() + "\x00" + prefix
	if st, ok := pc.trees[key]; ok {
		return st, nil
	}
	t, err := object.GetTree(pc.objs, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return treeStats{}, quire.Errorf(quire.EINVALID, "missing necessary objects: tree %s", ShortHash(h))
	}
	if err != nil {
		return treeStats{}, quire.Errorf(quire.EINVALID, "tree %s: %v", ShortHash(h), err)
	}
	var st treeStats
	for _, e := range t.Entries {
		p := prefix + e.Name
		ent, err := pc.entry(p, e)
		if err != nil {
			return st, err
		}
		if err := valid.File(ent, pc.limits); err != nil {
			return st, err
		}
		if e.Mode == filemode.Dir {
			sub, err := pc.tree(e.Hash, p+"/")
			if err != nil {
				return st, err
			}
			st.files += sub.files
			st.bytes += sub.bytes
		} else {
			st.files++
			st.bytes += ent.Size
		}
		if st.files > pc.limits.MaxVersionFiles {
			return st, pc.s.checkVersionLimits(st)
		}
	}
	if err := pc.checkNames(prefix, t.Entries); err != nil {
		return st, err
	}
	pc.trees[key] = st
	return st, nil
}
