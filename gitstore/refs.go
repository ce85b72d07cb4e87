package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/quire/quire/gitstore/odb"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage"
)

// storer is the object storage of odb.Storer (with its fixes for
// objects) plus the fixes quire depends on for refs:
//
//   - Ref updates are atomic for every reader: the new value goes to a
//     temporary file in the repository's top directory and is renamed over
//     the ref. go-git rewrites the ref file in place, so a concurrent reader
//     can see it empty. The temporary file is kept out of refs/ (C git uses
//     <ref>.lock there) because go-git's ref listing reads every file under
//     refs/: it fails on an empty <ref>.lock and lists a full one as a ref,
//     during a write or forever after a crash.
//   - With fsync on, refs and every directory entry leading to them reach
//     the disk before a write returns, removals too.
//   - Every ref change bumps the data root's counter and tells the
//     change feed, if any (refgen.go).
//
// Callers hold the repository's write lock around every ref change, so the
// compare-and-swap below is safe across goroutines and processes.
type storer struct {
	*odb.Storer
	gen *changeClock // bumped after every ref change
}

// Reference reads a ref. A loose ref is read straight from its file, and a
// missing one is answered without go-git's lookup when there is no
// packed-refs file; go-git's lookup (which stats every directory on the
// way and reads packed-refs) serves everything else.
func (s *storer) Reference(name plumbing.ReferenceName) (*plumbing.Reference, error) {
	if !strings.HasPrefix(string(name), "refs/") || name.Validate() != nil {
		return s.Storage.Reference(name)
	}
	b, err := os.ReadFile(filepath.Join(s.Dir(), filepath.FromSlash(string(name))))
	switch {
	case err == nil:
		if line := strings.TrimSuffix(string(b), "\n"); len(line) == 40 && isHex(line) {
			return plumbing.NewHashReference(name, plumbing.NewHash(line)), nil
		}
	case errors.Is(err, fs.ErrNotExist):
		if _, err := os.Stat(filepath.Join(s.Dir(), "packed-refs")); errors.Is(err, fs.ErrNotExist) {
			return nil, plumbing.ErrReferenceNotFound
		}
	}
	return s.Storage.Reference(name)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// SetReference writes r unconditionally.
func (s *storer) SetReference(r *plumbing.Reference) error {
	return s.writeRef(r)
}

// CheckAndSetReference writes r if the ref currently equals old. A nil old
// means the ref must not exist yet.
func (s *storer) CheckAndSetReference(r, old *plumbing.Reference) error {
	cur, err := s.Reference(r.Name())
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		if old != nil && !old.Hash().IsZero() {
			return storage.ErrReferenceHasChanged
		}
	case err != nil:
		return err
	default:
		if old == nil || old.Hash().IsZero() || cur.Hash() != old.Hash() {
			return storage.ErrReferenceHasChanged
		}
	}
	return s.writeRef(r)
}

func (s *storer) writeRef(r *plumbing.Reference) error {
	var content string
	switch r.Type() {
	case plumbing.SymbolicReference:
		content = "ref: " + r.Target().String() + "\n"
	case plumbing.HashReference:
		content = r.Hash().String() + "\n"
	default:
		return fmt.Errorf("write ref %s: invalid reference type", r.Name())
	}
	path := filepath.Join(s.Dir(), filepath.FromSlash(r.Name().String()))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write ref %s: %w", r.Name(), err)
	}
	f, err := os.CreateTemp(s.Dir(), refTempPrefix+"*")
	if err != nil {
		return fmt.Errorf("write ref %s: %w", r.Name(), err)
	}
	tmp := f.Name()
	err = odb.WriteSyncClose(f, []byte(content), s.Fsync())
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write ref %s: %w", r.Name(), err)
	}
	s.gen.bump()
	if s.Fsync() {
		if err := odb.SyncDirs(s.Dir(), filepath.Dir(path)); err != nil {
			return fmt.Errorf("write ref %s: %w", r.Name(), err)
		}
	}
	return nil
}

// refTempPrefix names the temporary files refs are staged in.
const refTempPrefix = "quire-ref-"

// RemoveReference deletes a ref and, with fsync on, makes the removal durable.
func (s *storer) RemoveReference(name plumbing.ReferenceName) error {
	err := s.Storage.RemoveReference(name)
	s.gen.bump() // even on an error: the ref may be gone all the same
	if err != nil {
		return fmt.Errorf("remove ref %s: %w", name, err)
	}
	if s.Fsync() {
		dir := filepath.Dir(filepath.Join(s.Dir(), filepath.FromSlash(name.String())))
		if err := odb.SyncDirs(s.Dir(), dir); err != nil {
			return fmt.Errorf("remove ref %s: %w", name, err)
		}
	}
	return nil
}

// ref resolves a ref to a hash, or ZeroHash when it does not exist.
func (r *repo) ref(name plumbing.ReferenceName) (plumbing.Hash, error) {
	if h, ok := r.looseRef(name); ok {
		return h, nil
	}
	ref, err := r.st.Reference(name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return ref.Hash(), nil
}

// refTree returns the commit name points at and that commit's tree: the
// state of a metadata ref such as the label log or the payloads (zeros
// when the ref does not exist yet).
func (r *repo) refTree(name plumbing.ReferenceName) (tip, tree plumbing.Hash, err error) {
	tip, err = r.ref(name)
	if err != nil || tip.IsZero() {
		return tip, plumbing.ZeroHash, err
	}
	c, err := r.Commit(tip)
	if err != nil {
		return tip, plumbing.ZeroHash, err
	}
	return tip, c.TreeHash, nil
}

// casRef moves name from old (ZeroHash: must not exist) to new.
func (r *repo) casRef(name plumbing.ReferenceName, old, new plumbing.Hash) error {
	var oldRef *plumbing.Reference
	if !old.IsZero() {
		oldRef = plumbing.NewHashReference(name, old)
	}
	return r.st.CheckAndSetReference(plumbing.NewHashReference(name, new), oldRef)
}
