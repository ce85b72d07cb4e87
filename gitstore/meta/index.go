package meta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/quire/quire/gitstore/odb"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
	"github.com/quire/quire"
)

// index is the in-memory view of the system repository, where users,
// API keys, projects and asset metadata live as JSON blobs:
//
//	users/ab/<id>.json   apikeys/ab/<id>.json   projects/ab/<id>.json
//	skills/ab/<id>.json  prompts/ab/<id>.json   (ab: the id's first two characters)
//
// Before every read it compares the system repository's main ref with the
// commit it was built from and, when another process has written since,
// applies the tree diff. That costs one small file read per call and means
// no process ever answers from a stale index.
type index struct {
	s *Store
	r *sysRepo

	mu       sync.RWMutex
	tip      plumbing.Hash
	tree     plumbing.Hash
	users    map[string]*quire.User
	emails   map[string]string // lower-case email -> user id
	keys     map[string]*quire.APIKey
	projects map[string]*quire.Project
	pslugs   map[string]string // project slug -> id
	assets   map[string]*quire.Asset
	// lists holds each project's assets of each kind ordered by slug, so
	// a list page is a slice of one and a slug check looks at one project;
	// slugs finds the assets of a kind with a slug across projects.
	lists map[assetList][]*quire.Asset
	slugs map[assetSlug][]*quire.Asset
	// oauth holds OAuth clients and grants (oauth.go).
	oauth oauthIndex

	// snapTree is the tree of the saved index (snapshot.go), snapChanges
	// the records changed since, snapEvery how many trigger a save.
	snapTree    plumbing.Hash
	snapChanges int
	snapEvery   int

	// visit, when set (by tests), is called for every asset record a
	// read looks at; decoded, for every record read from git.
	visit   func(*quire.Asset)
	decoded func(path string)
}

// assetList names the assets of one kind in one project.
type assetList struct {
	project string
	kind    quire.Kind
}

// assetSlug names the assets of one kind with one slug.
type assetSlug struct {
	kind quire.Kind
	slug string
}

func newIndex(s *Store, r *sysRepo) *index {
	m := &index{s: s, r: r, snapEvery: metaSnapEvery}
	m.reset()
	return m
}

func (m *index) reset() {
	m.tip, m.tree = plumbing.ZeroHash, plumbing.ZeroHash
	m.users, m.emails = map[string]*quire.User{}, map[string]string{}
	m.keys = map[string]*quire.APIKey{}
	m.projects, m.pslugs = map[string]*quire.Project{}, map[string]string{}
	m.assets = map[string]*quire.Asset{}
	m.lists = map[assetList][]*quire.Asset{}
	m.slugs = map[assetSlug][]*quire.Asset{}
	m.oauth.reset()
}

// slugBefore orders a project's assets: by slug, then id.
func slugBefore(a, b *quire.Asset) bool {
	return a.Slug < b.Slug || a.Slug == b.Slug && a.ID < b.ID
}

// addAsset indexes a. Callers hold m.mu.
func (m *index) addAsset(a *quire.Asset) {
	m.assets[a.ID] = a
	k := assetList{a.ProjectID, a.Kind}
	l := m.lists[k]
	i := sort.Search(len(l), func(i int) bool { return !slugBefore(l[i], a) })
	m.lists[k] = slices.Insert(l, i, a)
	sk := assetSlug{a.Kind, a.Slug}
	m.slugs[sk] = append(m.slugs[sk], a)
}

// removeAsset drops the asset id from the indexes. Callers hold m.mu.
func (m *index) removeAsset(id string) {
	a := m.assets[id]
	if a == nil {
		return
	}
	delete(m.assets, id)
	k := assetList{a.ProjectID, a.Kind}
	l := m.lists[k]
	i := sort.Search(len(l), func(i int) bool { return !slugBefore(l[i], a) })
	if i < len(l) && l[i] == a {
		l = slices.Delete(l, i, i+1)
	}
	if len(l) == 0 {
		delete(m.lists, k)
	} else {
		m.lists[k] = l
	}
	sk := assetSlug{a.Kind, a.Slug}
	same := slices.DeleteFunc(m.slugs[sk], func(o *quire.Asset) bool { return o == a })
	if len(same) == 0 {
		delete(m.slugs, sk)
	} else {
		m.slugs[sk] = same
	}
}

// seen reports a to the visit hook.
func (m *index) seen(a *quire.Asset) {
	if m.visit != nil {
		m.visit(a)
	}
}

// slugTaken reports whether another asset of a's kind in a's project
// has a's slug. Callers hold m.mu.
func (m *index) slugTaken(a *quire.Asset) bool {
	for _, o := range m.slugs[assetSlug{a.Kind, a.Slug}] {
		m.seen(o)
		if o.ID != a.ID && o.ProjectID == a.ProjectID {
			return true
		}
	}
	return false
}

func metaPath(dir, id string) string {
	shard := id
	if len(shard) > 2 {
		shard = shard[:2]
	}
	return dir + "/" + shard + "/" + id + ".json"
}

// fresh brings the index up to the system repository's current commit.
func (m *index) fresh() error {
	tip, err := m.r.RecentRef(mainRef)
	if err != nil {
		return err
	}
	m.mu.RLock()
	same := tip == m.tip
	m.mu.RUnlock()
	if same {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// Read main again under the lock: the value read above may be older
	// than what a writer has applied since, and main only moves forward,
	// so only a value read while holding the lock may replace m.tip.
	if tip, err = m.r.Ref(mainRef); err != nil {
		return err
	}
	return m.advance(tip)
}

// advance applies the changes from m.tip to tip. Callers hold m.mu.
func (m *index) advance(tip plumbing.Hash) error {
	if tip == m.tip {
		return nil
	}
	var newTree plumbing.Hash
	if !tip.IsZero() {
		c, err := m.r.Commit(tip)
		if err != nil {
			return err
		}
		newTree = c.TreeHash
	}
	if m.tree.IsZero() && !newTree.IsZero() && m.loadSnap() && m.tip == tip {
		return nil
	}
	changed := 0
	if m.tree.IsZero() {
		err := m.r.WalkFiles(newTree, "", func(p string, e object.TreeEntry) error {
			changed++
			b, err := m.r.ReadBlob(e.Hash)
			if err != nil {
				return err
			}
			return m.apply(p, b)
		})
		if err != nil {
			m.reset()
			return err
		}
	} else {
		from, err := m.r.Tree(m.tree)
		if err != nil {
			return err
		}
		to, err := m.r.Tree(newTree)
		if err != nil {
			return err
		}
		changes, err := object.DiffTree(from, to)
		if err != nil {
			return err
		}
		changed = len(changes)
		for _, ch := range changes {
			if ch.To.Name == "" {
				m.remove(ch.From.Name)
				continue
			}
			b, err := m.r.ReadBlob(ch.To.TreeEntry.Hash)
			if err != nil {
				return err
			}
			if err := m.apply(ch.To.Name, b); err != nil {
				return err
			}
		}
	}
	m.tip, m.tree = tip, newTree
	m.noteChanges(changed)
	return nil
}

// apply sets the record stored at path. Callers hold m.mu.
func (m *index) apply(path string, b []byte) error {
	if m.decoded != nil {
		m.decoded(path)
	}
	dir, _, _ := strings.Cut(path, "/")
	m.remove(path)
	switch dir {
	case "users":
		u := &quire.User{}
		if err := json.Unmarshal(b, u); err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
		m.users[u.ID] = u
		m.emails[strings.ToLower(u.Email)] = u.ID
	case "apikeys":
		k := &quire.APIKey{}
		if err := json.Unmarshal(b, k); err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
		m.keys[k.ID] = k
	case "projects":
		p := &quire.Project{}
		if err := json.Unmarshal(b, p); err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
		m.projects[p.ID] = p
		m.pslugs[p.Slug] = p.ID
	case "skills", "prompts":
		var rec assetRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
		a := rec.Asset
		a.Kind = quire.Kind(strings.TrimSuffix(dir, "s"))
		m.addAsset(&a)
	default:
		if _, err := m.oauth.apply(dir, path, b); err != nil {
			return err
		}
	}
	return nil
}

// assetRecord is an asset as stored: the kind is implied by the directory.
type assetRecord struct {
	quire.Asset
}

// remove drops the record stored at path. Callers hold m.mu.
func (m *index) remove(path string) {
	dir, rest, _ := strings.Cut(path, "/")
	id := strings.TrimSuffix(filepath.Base(rest), ".json")
	switch dir {
	case "users":
		if u := m.users[id]; u != nil {
			delete(m.emails, strings.ToLower(u.Email))
			delete(m.users, id)
		}
	case "apikeys":
		delete(m.keys, id)
	case "projects":
		if p := m.projects[id]; p != nil {
			if m.pslugs[p.Slug] == id {
				delete(m.pslugs, p.Slug)
			}
			delete(m.projects, id)
		}
	case "skills", "prompts":
		m.removeAsset(id)
	default:
		m.oauth.remove(dir, id)
	}
}

// write commits puts (path -> record) and deletes to the system repository
// under its lock, after check approves them against the fresh index.
func (m *index) write(by quire.Actor, msg string, puts map[string]any, dels []string, check func() error) (err error) {
	// Metadata writes carry no context, so they are timed but not traced.
	defer m.s.observe(context.Background(), quire.GitOpCommit, "metadata")(&err)
	unlock, err := m.r.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := m.fresh(); err != nil {
		return err
	}
	if check != nil {
		m.mu.RLock()
		err := check()
		m.mu.RUnlock()
		if err != nil {
			return err
		}
	}
	blobs := map[string][]byte{}
	edits := make([]odb.TreeEdit, 0, len(puts)+len(dels))
	for p, v := range puts {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		b = append(b, '\n')
		h, err := m.r.WriteBlob(b)
		if err != nil {
			return err
		}
		blobs[p] = b
		edits = append(edits, odb.TreeEdit{Path: p, Blob: h})
	}
	for _, p := range dels {
		edits = append(edits, odb.TreeEdit{Path: p})
	}
	m.mu.RLock()
	tip, tree := m.tip, m.tree
	m.mu.RUnlock()
	newTree, err := m.r.EditTree(tree, edits)
	if err != nil {
		return err
	}
	c, err := m.r.WriteCommit(by, m.s.now(), newTree, tip, msg+"\n")
	if err != nil {
		return err
	}
	if err := m.r.CASRef(mainRef, tip, c); errors.Is(err, storage.ErrReferenceHasChanged) {
		return quire.Errorf(quire.ECONFLICT, "metadata changed concurrently; retry")
	} else if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range dels {
		m.remove(p)
	}
	for p, b := range blobs {
		if err := m.apply(p, b); err != nil {
			return err
		}
	}
	m.tip, m.tree = c, newTree
	m.noteChanges(len(edits))
	m.s.systemChanged()
	return nil
}

// read runs fn against the fresh index under its read lock. Within one
// quire.ReadScope the index is brought up to date once.
func (m *index) read(ctx context.Context, fn func() error) error {
	if quire.ReadScopeFrom(ctx).First(m) {
		if err := m.fresh(); err != nil {
			return err
		}
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return fn()
}
