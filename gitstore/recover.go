package gitstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/quire/quire/gitstore/odb"

	"github.com/go-git/go-git/v5/plumbing"
)

// What a process killed mid-write leaves behind, and how quire clears it.
// None of it can damage a repository (objects are renamed into place
// before the ref that makes them reachable moves, and a ref is replaced by
// rename), but left alone some of it would confuse readers or waste space.

// leftoverAge is how old a .init-* or .trash-* directory must be before
// Open removes it: younger ones may belong to another process sharing the
// data root that is creating or deleting a repository right now.
const leftoverAge = 10 * time.Minute

// sweepRepo clears what an interrupted writer left in the repository at r:
// staged ref files (quire-ref-*), object temporaries older than
// leftoverAge, <ref>.lock files under refs/ (from C git
// or older quire versions; go-git's ref listing fails on an empty one and
// lists a full one as a ref), and the branch of a draft whose publish or
// archive stopped after its tag was written (the tag decides the state; the
// stray branch would only be advertised to git clients). It holds the
// repository's write lock, so no live writer owns any of these. It is best
// effort: on a read-only data root it leaves things as they are.
//
// It runs when a process opens the repository, which a caller may do while
// holding the repository's lock; so when the lock is taken it sweeps in
// the background, once the holder lets go.
func (s *Store) sweepRepo(r *repo) {
	if unlock, ok := s.locks.tryLock(r.path); ok {
		defer unlock()
		r.sweep()
		return
	}
	go func() {
		if unlock, err := s.locks.lock(r.path); err == nil {
			defer unlock()
			r.sweep()
		}
	}()
}

// sweep does sweepRepo's work; the caller holds the repository's lock.
func (r *repo) sweep() {
	if tmps, err := filepath.Glob(filepath.Join(r.path, refTempPrefix+"*")); err == nil {
		for _, p := range tmps {
			os.Remove(p)
		}
	}
	// Object temporaries: quire's, and go-git's (a push may write one).
	// Only old ones, as object writes need not hold the lock.
	for _, pattern := range []string{odb.ObjTempPrefix + "*", "objects/pack/tmp_obj_*"} {
		tmps, _ := filepath.Glob(filepath.Join(r.path, pattern))
		for _, p := range tmps {
			if info, err := os.Stat(p); err == nil && time.Since(info.ModTime()) > leftoverAge {
				os.Remove(p)
			}
		}
	}
	refs := filepath.Join(r.path, "refs")
	filepath.WalkDir(refs, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			os.Remove(p)
		}
		return nil
	})
	os.Remove(filepath.Join(r.path, "packed-refs.lock"))
	drafts, _ := os.ReadDir(filepath.Join(refs, "heads", "draft"))
	for _, d := range drafts {
		n, err := strconv.Atoi(d.Name())
		if err != nil || n <= 0 {
			continue
		}
		for _, tag := range []plumbing.ReferenceName{TagRef(n), ArchiveRef(n)} {
			if h, err := r.ref(tag); err == nil && !h.IsZero() {
				r.st.RemoveReference(DraftRef(n))
				break
			}
		}
	}
}

// sweepLeftovers removes, under the data root, .init-* directories of
// repository creations and .trash-* directories of deletions that a crash
// interrupted, once they are older than leftoverAge.
func sweepLeftovers(root string, now time.Time) {
	dirs := []string{root}
	projects, _ := os.ReadDir(root)
	for _, p := range projects {
		if p.IsDir() && !strings.HasPrefix(p.Name(), ".") && !strings.HasSuffix(p.Name(), ".git") {
			dirs = append(dirs, filepath.Join(root, p.Name(), "skills"), filepath.Join(root, p.Name(), "prompts"))
		}
	}
	for _, dir := range dirs {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() || !strings.HasPrefix(name, ".init-") && !strings.HasPrefix(name, ".trash-") {
				continue
			}
			if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > leftoverAge {
				os.RemoveAll(filepath.Join(dir, name))
			}
		}
	}
}
