package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/quire/quire/gitstore/odb"
)

// Listing the advertised refs (refs/heads/*, refs/tags/*) straight from
// the loose ref files: go-git's listing opens every ref through billy's
// chroot, an lstat per path component, which with a thousand refs was most
// of an upload-pack request (78 ms of 100 ms). Only the directories that
// can hold a ref under one of the prefixes are read, so a v2 ls-refs for
// refs/heads/main reads one file. quire writes loose refs only; a
// repository with a packed-refs file (git gc run by hand) or a ref file
// this does not understand is listed by go-git instead.

// Ref is one ref clients see: a branch, a tag, a review
// (refs/reviews/N), a label (refs/labels/NAME), the label log
// (refs/meta/labels) or an evaluation (refs/evaluations/ID). refs/quire/* stays hidden.
type Ref struct {
	Name string
	Hash plumbing.Hash
}

// visibleRef reports whether clients see ref name.
func visibleRef(name string) bool {
	return strings.HasPrefix(name, "refs/heads/") || strings.HasPrefix(name, "refs/tags/") ||
		strings.HasPrefix(name, "refs/reviews/") || strings.HasPrefix(name, "refs/labels/") ||
		strings.HasPrefix(name, evaluationsPrefix) || name == labelLogRef.String()
}

// refTops are the directories that can hold a visible ref.
var refTops = []string{"refs/heads", "refs/tags", "refs/reviews", "refs/labels", "refs/meta", "refs/evaluations"}

// errRefFallback sends a listing to go-git.
var errRefFallback = errors.New("ref listing needs go-git")

// refMatcher selects refs by name prefix; no prefixes selects every ref.
type refMatcher []string

func (m refMatcher) match(name string) bool {
	if len(m) == 0 {
		return true
	}
	for _, p := range m {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// mayHold reports whether directory dir (a ref name prefix without its
// slash) can hold a ref that matches.
func (m refMatcher) mayHold(dir string) bool {
	if len(m) == 0 {
		return true
	}
	dir += "/"
	for _, p := range m {
		if strings.HasPrefix(dir, p) || strings.HasPrefix(p, dir) {
			return true
		}
	}
	return false
}

// listLooseRefs lists the visible loose refs of the repository at dir that
// m matches, in no particular order.
func listLooseRefs(dir string, m refMatcher) ([]Ref, error) {
	if _, err := os.Lstat(filepath.Join(dir, "packed-refs")); !errors.Is(err, fs.ErrNotExist) {
		return nil, errRefFallback
	}
	var refs []Ref
	var walk func(name string) error
	walk = func(name string) error {
		if !m.mayHold(name) {
			return nil
		}
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(name)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil // no tags yet, or removed while listing
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			full := name + "/" + e.Name()
			if e.IsDir() {
				if err := walk(full); err != nil {
					return err
				}
				continue
			}
			if !m.match(full) || !visibleRef(full) {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(full)))
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted since the directory was read
			}
			if err != nil {
				return err
			}
			line := strings.TrimSuffix(string(b), "\n")
			if strings.HasPrefix(line, "ref: ") {
				continue // symbolic: not advertised, as with go-git's listing
			}
			h, ok := odb.ParseHash(line)
			if !ok {
				return errRefFallback
			}
			refs = append(refs, Ref{Name: full, Hash: h})
		}
		return nil
	}
	for _, top := range refTops {
		if err := walk(top); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// listRefs lists the advertised refs of r that m matches, sorted by
// name, without peeling tags, and the live commit (zero when nothing is
// live or m does not match main).
func listRefs(r *repo, m refMatcher) ([]Ref, plumbing.Hash, error) {
	refs, err := listLooseRefs(r.path, m)
	if errors.Is(err, errRefFallback) {
		refs, err = listRefsGoGit(r, m)
	}
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	sortRefs(refs)
	var head plumbing.Hash
	for _, ref := range refs {
		if ref.Name == mainRef.String() {
			head = ref.Hash
		}
	}
	return refs, head, nil
}

// listRefsGoGit lists refs through go-git, packed ones included.
func listRefsGoGit(r *repo, m refMatcher) ([]Ref, error) {
	it, err := r.st.IterReferences()
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var refs []Ref
	err = it.ForEach(func(ref *plumbing.Reference) error {
		name := ref.Name().String()
		if ref.Type() == plumbing.HashReference && visibleRef(name) && m.match(name) {
			refs = append(refs, Ref{Name: name, Hash: ref.Hash()})
		}
		return nil
	})
	return refs, err
}

func sortRefs(refs []Ref) {
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
}
