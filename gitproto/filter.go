package gitproto

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Partial clone (gitprotocol-pack.txt "filter", git rev-list --filter):
// a filter leaves objects out of a pack; the client fetches them later,
// lazily, by wanting them one by one. Objects wanted explicitly are always
// sent, as git's upload-pack does; the filter applies to what is reached
// from them.

type filterKind int

const (
	filterBlobNone  filterKind = iota + 1 // blob:none
	filterBlobLimit                       // blob:limit=<n>
	filterTreeDepth                       // tree:<depth>
)

// objectFilter is one parsed filter spec.
type objectFilter struct {
	spec string // as the client sent it
	kind filterKind
	n    uint64 // blob:limit: blobs of n bytes or more are left out; tree: the depth
}

// errFilterSupport lists what quire filters, for refusals git prints.
const errFilterSupport = "quire supports the filters blob:none, blob:limit=<n> and tree:<depth>"

// parseFilter parses a filter spec as git's list-objects-filter-options.c
// does for the forms quire supports; the error is the message for git.
func parseFilter(spec string) (*objectFilter, error) {
	f := &objectFilter{spec: spec}
	switch {
	case spec == "blob:none":
		f.kind = filterBlobNone
	case strings.HasPrefix(spec, "blob:limit="):
		n, ok := parseGitUlong(strings.TrimPrefix(spec, "blob:limit="))
		if !ok {
			return nil, fmt.Errorf("invalid filter-spec '%s': expected 'blob:limit=<n>' with <n> a size such as 100, 10k or 1m", spec)
		}
		f.kind, f.n = filterBlobLimit, n
	case strings.HasPrefix(spec, "tree:"):
		n, ok := parseGitUlong(strings.TrimPrefix(spec, "tree:"))
		if !ok {
			return nil, fmt.Errorf("invalid filter-spec '%s': expected 'tree:<depth>'", spec)
		}
		f.kind, f.n = filterTreeDepth, n
	default:
		return nil, fmt.Errorf("filter '%s' is not supported: %s", spec, errFilterSupport)
	}
	return f, nil
}

// parseGitUlong parses a non-negative decimal number with an optional k,
// m or g suffix (powers of 1024), as git_parse_ulong accepts sizes.
func parseGitUlong(s string) (uint64, bool) {
	shift := 0
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			shift = 10
		case 'm', 'M':
			shift = 20
		case 'g', 'G':
			shift = 30
		}
		if shift > 0 {
			s = s[:n-1]
		}
	}
	if s == "" || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > (1<<64-1)>>shift {
		return 0, false
	}
	return v << shift, true
}

// filterWalk is the state of one filtered listing.
type filterWalk struct {
	f     *objectFilter
	skip  map[plumbing.Hash]bool   // objects the client has
	depth map[plumbing.Hash]uint64 // trees walked, at the least depth seen
	add   func(plumbing.Hash)      // must ignore repeats
}

// walk lists t (a tree at depth, 0 for a root) and what is under it as
// the filter keeps them. An explicit tree (one the client wanted) is sent
// whatever the filter says. tree:<depth> counts the least depth an object
// is found at, so a tree seen again nearer a root is walked again.
func (w *walker) filteredTree(fw *filterWalk, t plumbing.Hash, depth uint64, explicit bool) error {
	if fw.skip[t] {
		return nil
	}
	if d, ok := fw.depth[t]; ok && d <= depth {
		return nil
	}
	if fw.f.kind == filterTreeDepth && !explicit && depth >= fw.f.n {
		return nil
	}
	fw.depth[t] = depth
	fw.add(t)
	b, err := w.readTree(t)
	if err != nil {
		return err
	}
	return forEachTreeEntry(b, func(e treeEntry) error {
		switch e.mode {
		case uint32(filemode.Dir):
			return w.filteredTree(fw, e.hash, depth+1, false)
		case uint32(filemode.Submodule):
			return nil
		}
		if fw.skip[e.hash] {
			return nil
		}
		switch fw.f.kind {
		case filterBlobNone:
			return nil
		case filterBlobLimit:
			size, err := w.r.Size(e.hash)
			if err != nil {
				return fmt.Errorf("blob %s: %w", e.hash, err)
			}
			if uint64(size) >= fw.f.n {
				return nil
			}
		case filterTreeDepth:
			if depth+1 >= fw.f.n {
				return nil
			}
		}
		fw.add(e.hash)
		return nil
	})
}
