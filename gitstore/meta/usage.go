package meta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/quire/quire/gitstore/odb"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage"
	"github.com/quire/quire"
)

// Usage totals live in the system repository on their own ref, beside
// (not in) the metadata on main, so flushing them neither touches the
// audit trail nor invalidates the metadata index:
//
//	refs/quire/usage
//	  prompts/ab/<prompt id>.json   {"versions": {"3": {"renders": 12, "last_used_at": …}}}
//	  apikeys.json                  {"<key id>": "<last used time>", …}
//
// Each flush writes a parentless commit: the ref holds only the current
// totals, and the trees of earlier flushes are left for git gc.
const (
	usageRef      = plumbing.ReferenceName("refs/quire/usage")
	usageKeysFile = "apikeys.json"
)

var usageActor = quire.Actor{Name: "quire", Email: "quire@localhost"}

type promptUsageFile struct {
	Versions map[string]*versionUsageRecord `json:"versions"`
}

type versionUsageRecord struct {
	Renders    int64      `json:"renders"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

// AddUsage merges d into the stored totals as one commit.
func (s *Store) AddUsage(ctx context.Context, d *quire.UsageDelta) (err error) {
	if d.Empty() {
		return nil
	}
	defer s.observe(ctx, quire.GitOpCommit, "AddUsage")(&err)
	r := s.idx.r
	unlock, err := r.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	tip, root, err := s.usageRoot()
	if err != nil {
		return err
	}

	prompts := map[string]*promptUsageFile{}
	load := func(id string) (*promptUsageFile, error) {
		if f := prompts[id]; f != nil {
			return f, nil
		}
		f := &promptUsageFile{Versions: map[string]*versionUsageRecord{}}
		if err := readJSON(r, root, metaPath("prompts", id), f); err != nil {
			return nil, err
		}
		if f.Versions == nil {
			f.Versions = map[string]*versionUsageRecord{}
		}
		prompts[id] = f
		return f, nil
	}
	version := func(pv quire.VersionKey) (*versionUsageRecord, error) {
		f, err := load(pv.PromptID)
		if err != nil {
			return nil, err
		}
		k := strconv.Itoa(pv.Version)
		if f.Versions[k] == nil {
			f.Versions[k] = &versionUsageRecord{}
		}
		return f.Versions[k], nil
	}
	for pv, n := range d.Renders {
		v, err := version(pv)
		if err != nil {
			return err
		}
		v.Renders += n
	}
	for pv, t := range d.LastUsed {
		v, err := version(pv)
		if err != nil {
			return err
		}
		v.LastUsedAt = later(v.LastUsedAt, t)
	}

	var edits []odb.TreeEdit
	put := func(path string, v any) error {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		h, err := r.WriteBlob(append(b, '\n'))
		if err != nil {
			return err
		}
		edits = append(edits, odb.TreeEdit{Path: path, Blob: h})
		return nil
	}
	for id, f := range prompts {
		if err := put(metaPath("prompts", id), f); err != nil {
			return err
		}
	}
	if len(d.KeysUsed) > 0 {
		keys := map[string]time.Time{}
		if err := readJSON(r, root, usageKeysFile, &keys); err != nil {
			return err
		}
		for id, t := range d.KeysUsed {
			if t.After(keys[id]) {
				keys[id] = t.UTC()
			}
		}
		if err := put(usageKeysFile, keys); err != nil {
			return err
		}
	}
	tree, err := r.EditTree(root, edits)
	if err != nil {
		return err
	}
	c, err := r.WriteCommit(usageActor, s.now(), tree, plumbing.ZeroHash, "Record usage\n")
	if err != nil {
		return err
	}
	if err := r.CASRef(usageRef, tip, c); errors.Is(err, storage.ErrReferenceHasChanged) {
		return quire.Errorf(quire.ECONFLICT, "usage changed concurrently; retry")
	} else if err != nil {
		return err
	}
	s.systemChanged()
	return nil
}

func later(cur *time.Time, t time.Time) *time.Time {
	if cur != nil && !t.After(*cur) {
		return cur
	}
	t = t.UTC()
	return &t
}

// usageRoot returns the usage ref's commit and tree (zero when unset).
func (s *Store) usageRoot() (tip, root plumbing.Hash, err error) {
	r := s.idx.r
	if tip, err = r.Ref(usageRef); err != nil || tip.IsZero() {
		return tip, plumbing.ZeroHash, err
	}
	c, err := r.Commit(tip)
	if err != nil {
		return tip, plumbing.ZeroHash, err
	}
	return tip, c.TreeHash, nil
}

// readJSON decodes the file at path of the tree at root into v, leaving v
// as it is when there is no such file.
func readJSON(r *sysRepo, root plumbing.Hash, path string, v any) error {
	if root.IsZero() {
		return nil
	}
	e, ok, err := r.Lookup(root, path)
	if err != nil || !ok {
		return err
	}
	b, err := r.ReadBlob(e.Hash)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// PromptUsage returns the stored usage totals of a prompt.
func (s *Store) PromptUsage(ctx context.Context, promptID string) (_ *quire.PromptUsage, err error) {
	defer s.observe(ctx, quire.GitOpRead, "PromptUsage")(&err)
	_, root, err := s.usageRoot()
	if err != nil {
		return nil, err
	}
	f := &promptUsageFile{}
	if err := readJSON(s.idx.r, root, metaPath("prompts", promptID), f); err != nil {
		return nil, err
	}
	out := &quire.PromptUsage{PromptID: promptID, Versions: []quire.VersionUsage{}}
	for k, v := range f.Versions {
		n, err := strconv.Atoi(k)
		if err != nil {
			continue
		}
		out.Versions = append(out.Versions, quire.VersionUsage{Version: n, Renders: v.Renders, LastUsedAt: v.LastUsedAt})
	}
	sort.Slice(out.Versions, func(i, j int) bool { return out.Versions[i].Version < out.Versions[j].Version })
	return out, nil
}

// KeysLastUsed returns the stored last-use time of every API key.
func (s *Store) KeysLastUsed(ctx context.Context) (_ map[string]time.Time, err error) {
	defer s.observe(ctx, quire.GitOpRead, "KeysLastUsed")(&err)
	_, root, err := s.usageRoot()
	if err != nil {
		return nil, err
	}
	keys := map[string]time.Time{}
	if err := readJSON(s.idx.r, root, usageKeysFile, &keys); err != nil {
		return nil, err
	}
	return keys, nil
}
