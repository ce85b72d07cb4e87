package gitstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/quire/quire/gitstore/odb"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
	"github.com/google/uuid"
	"github.com/quire/quire"
)

// metaIndex is the in-memory view of the system repository, where users,
// API keys, projects and asset metadata live as JSON blobs:
//
//	users/ab/<id>.json   apikeys/ab/<id>.json   projects/ab/<id>.json
//	skills/ab/<id>.json  prompts/ab/<id>.json   (ab: the id's first two characters)
//
// Before every read it compares the system repository's main ref with the
// commit it was built from and, when another process has written since,
// applies the tree diff. That costs one small file read per call and means
// no process ever answers from a stale index.
type metaIndex struct {
	s *Store
	r *repo

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

	// snapTree is the tree of the saved index (metasnap.go), snapChanges
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

func newMetaIndex(s *Store, r *repo) *metaIndex {
	m := &metaIndex{s: s, r: r, snapEvery: metaSnapEvery}
	m.reset()
	return m
}

func (m *metaIndex) reset() {
	m.tip, m.tree = plumbing.ZeroHash, plumbing.ZeroHash
	m.users, m.emails = map[string]*quire.User{}, map[string]string{}
	m.keys = map[string]*quire.APIKey{}
	m.projects, m.pslugs = map[string]*quire.Project{}, map[string]string{}
	m.assets = map[string]*quire.Asset{}
	m.lists = map[assetList][]*quire.Asset{}
	m.slugs = map[assetSlug][]*quire.Asset{}
}

// slugBefore orders a project's assets: by slug, then id.
func slugBefore(a, b *quire.Asset) bool {
	return a.Slug < b.Slug || a.Slug == b.Slug && a.ID < b.ID
}

// addAsset indexes a. Callers hold m.mu.
func (m *metaIndex) addAsset(a *quire.Asset) {
	m.assets[a.ID] = a
	k := assetList{a.ProjectID, a.Kind}
	l := m.lists[k]
	i := sort.Search(len(l), func(i int) bool { return !slugBefore(l[i], a) })
	m.lists[k] = slices.Insert(l, i, a)
	sk := assetSlug{a.Kind, a.Slug}
	m.slugs[sk] = append(m.slugs[sk], a)
}

// removeAsset drops the asset id from the indexes. Callers hold m.mu.
func (m *metaIndex) removeAsset(id string) {
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
func (m *metaIndex) seen(a *quire.Asset) {
	if m.visit != nil {
		m.visit(a)
	}
}

// slugTaken reports whether another asset of a's kind in a's project
// has a's slug. Callers hold m.mu.
func (m *metaIndex) slugTaken(a *quire.Asset) bool {
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
func (m *metaIndex) fresh() error {
	tip, err := m.r.recentRef(mainRef)
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
	if tip, err = m.r.ref(mainRef); err != nil {
		return err
	}
	return m.advance(tip)
}

// advance applies the changes from m.tip to tip. Callers hold m.mu.
func (m *metaIndex) advance(tip plumbing.Hash) error {
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
func (m *metaIndex) apply(path string, b []byte) error {
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
	}
	return nil
}

// assetRecord is an asset as stored: the kind is implied by the directory.
type assetRecord struct {
	quire.Asset
}

// remove drops the record stored at path. Callers hold m.mu.
func (m *metaIndex) remove(path string) {
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
	}
}

// write commits puts (path -> record) and deletes to the system repository
// under its lock, after check approves them against the fresh index.
func (m *metaIndex) write(by quire.Actor, msg string, puts map[string]any, dels []string, check func() error) (err error) {
	// Metadata writes carry no context, so they are timed but not traced.
	defer m.s.observe(context.Background(), quire.GitOpCommit, "metadata")(&err)
	unlock, err := m.s.locks.lock(m.r.path)
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
	c, err := m.r.WriteCommit(by, m.s.opts.Now(), newTree, tip, msg+"\n")
	if err != nil {
		return err
	}
	if err := m.r.casRef(mainRef, tip, c); errors.Is(err, storage.ErrReferenceHasChanged) {
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
func (m *metaIndex) read(ctx context.Context, fn func() error) error {
	if quire.ReadScopeFrom(ctx).First(m) {
		if err := m.fresh(); err != nil {
			return err
		}
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return fn()
}

func newID() string { return uuid.NewString() }

// Users.

func (s *Store) CreateUser(ctx context.Context, by quire.Actor, u *quire.User) error {
	if u.ID == "" {
		u.ID = newID()
	}
	now := s.opts.Now().UTC()
	u.CreatedAt, u.UpdatedAt = now, now
	return s.meta.write(by, "Create user "+u.Email, map[string]any{metaPath("users", u.ID): u}, nil, func() error {
		if _, ok := s.meta.emails[strings.ToLower(u.Email)]; ok {
			return quire.Errorf(quire.ECONFLICT, "a user with email %s exists", u.Email)
		}
		return nil
	})
}

func (s *Store) User(ctx context.Context, id string) (*quire.User, error) {
	var out quire.User
	err := s.meta.read(ctx, func() error {
		u := s.meta.users[id]
		if u == nil {
			return quire.Errorf(quire.ENOTFOUND, "user not found")
		}
		out = *u
		return nil
	})
	return &out, err
}

func (s *Store) UserByEmail(ctx context.Context, email string) (*quire.User, error) {
	var out quire.User
	err := s.meta.read(ctx, func() error {
		u := s.meta.users[s.meta.emails[strings.ToLower(email)]]
		if u == nil {
			return quire.Errorf(quire.ENOTFOUND, "user not found")
		}
		out = *u
		return nil
	})
	return &out, err
}

func (s *Store) Users(ctx context.Context) ([]*quire.User, error) {
	var out []*quire.User
	err := s.meta.read(ctx, func() error {
		for _, u := range s.meta.users {
			c := *u
			out = append(out, &c)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, err
}

func (s *Store) UpdateUser(ctx context.Context, by quire.Actor, u *quire.User) error {
	u.UpdatedAt = s.opts.Now().UTC()
	return s.meta.write(by, "Update user "+u.Email, map[string]any{metaPath("users", u.ID): u}, nil, func() error {
		old := s.meta.users[u.ID]
		if old == nil {
			return quire.Errorf(quire.ENOTFOUND, "user not found")
		}
		if id, ok := s.meta.emails[strings.ToLower(u.Email)]; ok && id != u.ID {
			return quire.Errorf(quire.ECONFLICT, "a user with email %s exists", u.Email)
		}
		return s.meta.keepsAdmin(u.ID, u)
	})
}

// DeleteUser deletes a user and the user's API keys.
func (s *Store) DeleteUser(ctx context.Context, by quire.Actor, id string) error {
	var dels []string
	err := s.meta.read(ctx, func() error {
		if s.meta.users[id] == nil {
			return quire.Errorf(quire.ENOTFOUND, "user not found")
		}
		dels = append(dels, metaPath("users", id))
		for _, k := range s.meta.keys {
			if k.UserID == id {
				dels = append(dels, metaPath("apikeys", k.ID))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.meta.write(by, "Delete user "+id, nil, dels, func() error {
		if s.meta.users[id] == nil {
			return quire.Errorf(quire.ENOTFOUND, "user not found")
		}
		return s.meta.deletable(id)
	})
}

// API keys.

func (s *Store) CreateAPIKey(ctx context.Context, by quire.Actor, k *quire.APIKey) error {
	if k.ID == "" {
		k.ID = newID()
	}
	now := s.opts.Now().UTC()
	k.CreatedAt, k.UpdatedAt = now, now
	return s.meta.write(by, "Create API key "+k.Name, map[string]any{metaPath("apikeys", k.ID): k}, nil, nil)
}

func (s *Store) APIKey(ctx context.Context, id string) (*quire.APIKey, error) {
	var out quire.APIKey
	err := s.meta.read(ctx, func() error {
		k := s.meta.keys[id]
		if k == nil {
			return quire.Errorf(quire.ENOTFOUND, "API key not found")
		}
		out = *k
		out.ProjectIDs = append([]string(nil), k.ProjectIDs...)
		return nil
	})
	return &out, err
}

// APIKeys lists the keys of userID, or every key when userID is "".
func (s *Store) APIKeys(ctx context.Context, userID string) ([]*quire.APIKey, error) {
	var out []*quire.APIKey
	err := s.meta.read(ctx, func() error {
		for _, k := range s.meta.keys {
			if userID == "" || k.UserID == userID {
				c := *k
				c.ProjectIDs = append([]string(nil), k.ProjectIDs...)
				out = append(out, &c)
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, err
}

func (s *Store) UpdateAPIKey(ctx context.Context, by quire.Actor, k *quire.APIKey) error {
	k.UpdatedAt = s.opts.Now().UTC()
	return s.meta.write(by, "Update API key "+k.Name, map[string]any{metaPath("apikeys", k.ID): k}, nil, func() error {
		if s.meta.keys[k.ID] == nil {
			return quire.Errorf(quire.ENOTFOUND, "API key not found")
		}
		return nil
	})
}

func (s *Store) DeleteAPIKey(ctx context.Context, by quire.Actor, id string) error {
	return s.meta.write(by, "Delete API key "+id, nil, []string{metaPath("apikeys", id)}, func() error {
		if s.meta.keys[id] == nil {
			return quire.Errorf(quire.ENOTFOUND, "API key not found")
		}
		return nil
	})
}

// Projects.

func cloneProject(p *quire.Project) *quire.Project {
	c := *p
	c.Members = append([]quire.Member{}, p.Members...)
	return &c
}

func (s *Store) CreateProject(ctx context.Context, by quire.Actor, p *quire.Project) error {
	if p.ID == "" {
		p.ID = newID()
	}
	now := s.opts.Now().UTC()
	p.CreatedAt, p.UpdatedAt = now, now
	if p.Members == nil {
		p.Members = []quire.Member{}
	}
	return s.meta.write(by, "Create project "+p.Slug, map[string]any{metaPath("projects", p.ID): p}, nil, func() error {
		if _, ok := s.meta.pslugs[p.Slug]; ok {
			return quire.Errorf(quire.ECONFLICT, "a project with slug %q exists", p.Slug)
		}
		return nil
	})
}

// Project finds a project by id or slug.
func (s *Store) Project(ctx context.Context, idOrSlug string) (*quire.Project, error) {
	var out *quire.Project
	err := s.meta.read(ctx, func() error {
		p := s.meta.projects[idOrSlug]
		if p == nil {
			p = s.meta.projects[s.meta.pslugs[idOrSlug]]
		}
		if p == nil {
			return quire.Errorf(quire.ENOTFOUND, "project not found")
		}
		out = cloneProject(p)
		return nil
	})
	return out, err
}

func (s *Store) Projects(ctx context.Context) ([]*quire.Project, error) {
	var out []*quire.Project
	err := s.meta.read(ctx, func() error {
		for _, p := range s.meta.projects {
			out = append(out, cloneProject(p))
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Slug < out[j].Slug })
	return out, err
}

func (s *Store) UpdateProject(ctx context.Context, by quire.Actor, p *quire.Project) error {
	p.UpdatedAt = s.opts.Now().UTC()
	return s.meta.write(by, "Update project "+p.Slug, map[string]any{metaPath("projects", p.ID): p}, nil, func() error {
		if s.meta.projects[p.ID] == nil {
			return quire.Errorf(quire.ENOTFOUND, "project not found")
		}
		if id, ok := s.meta.pslugs[p.Slug]; ok && id != p.ID {
			return quire.Errorf(quire.ECONFLICT, "a project with slug %q exists", p.Slug)
		}
		return s.meta.keepsOwner(p)
	})
}

// DeleteProject deletes a project, its assets' metadata and repositories.
func (s *Store) DeleteProject(ctx context.Context, by quire.Actor, id string) error {
	var dels []string
	err := s.meta.read(ctx, func() error {
		if s.meta.projects[id] == nil {
			return quire.Errorf(quire.ENOTFOUND, "project not found")
		}
		dels = append(dels, metaPath("projects", id))
		for _, kind := range []quire.Kind{quire.KindSkill, quire.KindPrompt} {
			for _, a := range s.meta.lists[assetList{id, kind}] {
				dels = append(dels, metaPath(a.Kind.Plural(), a.ID))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.meta.write(by, "Delete project "+id, nil, dels, nil); err != nil {
		return err
	}
	dir := filepath.Join(s.opts.Root, id)
	for _, path := range s.open.Keys() {
		if strings.HasPrefix(path, dir+string(filepath.Separator)) {
			s.open.Remove(path)
		}
	}
	trash := filepath.Join(s.opts.Root, ".trash-"+id)
	if err := os.Rename(dir, trash); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.RemoveAll(trash)
}

// Assets.

func (s *Store) CreateAsset(ctx context.Context, by quire.Actor, a *quire.Asset) error {
	if a.ID == "" {
		a.ID = newID()
	}
	now := s.opts.Now().UTC()
	a.CreatedAt, a.UpdatedAt = now, now
	check := func() error {
		if s.meta.projects[a.ProjectID] == nil {
			return quire.Errorf(quire.ENOTFOUND, "project not found")
		}
		if s.meta.slugTaken(a) {
			return quire.Errorf(quire.ECONFLICT, "a %s with slug %q exists in this project", a.Kind, a.Slug)
		}
		return nil
	}
	if err := s.meta.read(ctx, check); err != nil {
		return err
	}
	if err := s.InitAsset(ctx, a); err != nil {
		return err
	}
	err := s.meta.write(by, fmt.Sprintf("Create %s %s", a.Kind, a.Slug), map[string]any{metaPath(a.Kind.Plural(), a.ID): assetRecord{*a}}, nil, check)
	if err != nil {
		s.removeRepo(s.RepoPath(a))
	}
	return err
}

func (s *Store) Asset(ctx context.Context, kind quire.Kind, id string) (*quire.Asset, error) {
	var out quire.Asset
	err := s.meta.read(ctx, func() error {
		a := s.meta.assets[id]
		if a == nil || a.Kind != kind {
			return quire.Errorf(quire.ENOTFOUND, "%s not found", kind)
		}
		out = *a
		return nil
	})
	return &out, err
}

// FindAssets returns the assets of kind whose id or slug is idOrSlug.
func (s *Store) FindAssets(ctx context.Context, kind quire.Kind, idOrSlug string) ([]*quire.Asset, error) {
	var out []*quire.Asset
	err := s.meta.read(ctx, func() error {
		if a := s.meta.assets[idOrSlug]; a != nil && a.Kind == kind {
			c := *a
			out = append(out, &c)
			return nil
		}
		for _, a := range s.meta.slugs[assetSlug{kind, idOrSlug}] {
			s.meta.seen(a)
			c := *a
			out = append(out, &c)
		}
		return nil
	})
	return out, err
}

// Assets lists the assets of kind in a project, ordered by slug.
func (s *Store) Assets(ctx context.Context, kind quire.Kind, projectID string) ([]*quire.Asset, error) {
	out, _, err := s.AssetsPage(ctx, kind, projectID, quire.ListOptions{})
	return out, err
}

// AssetsPage lists a page of the assets of kind in a project, ordered by
// slug. The cursor is the offset of the page's first asset; a zero Limit
// means no limit.
func (s *Store) AssetsPage(ctx context.Context, kind quire.Kind, projectID string, opts quire.ListOptions) ([]*quire.Asset, string, error) {
	off := 0
	if opts.Cursor != "" {
		n, err := strconv.Atoi(opts.Cursor)
		if err != nil || n < 0 {
			return nil, "", quire.Errorf(quire.EINVALID, "invalid cursor")
		}
		off = n
	}
	out := []*quire.Asset{}
	next := ""
	err := s.meta.read(ctx, func() error {
		l := s.meta.lists[assetList{projectID, kind}]
		if off >= len(l) {
			return nil
		}
		end := len(l)
		if opts.Limit > 0 && off+opts.Limit < end {
			end = off + opts.Limit
			next = strconv.Itoa(end)
		}
		for _, a := range l[off:end] {
			s.meta.seen(a)
			c := *a
			out = append(out, &c)
		}
		return nil
	})
	return out, next, err
}

func (s *Store) UpdateAsset(ctx context.Context, by quire.Actor, a *quire.Asset) error {
	a.UpdatedAt = s.opts.Now().UTC()
	err := s.meta.write(by, fmt.Sprintf("Update %s %s", a.Kind, a.Slug), map[string]any{metaPath(a.Kind.Plural(), a.ID): assetRecord{*a}}, nil, func() error {
		if o := s.meta.assets[a.ID]; o == nil || o.Kind != a.Kind {
			return quire.Errorf(quire.ENOTFOUND, "%s not found", a.Kind)
		}
		if s.meta.slugTaken(a) {
			return quire.Errorf(quire.ECONFLICT, "a %s with slug %q exists in this project", a.Kind, a.Slug)
		}
		return nil
	})
	if err == nil {
		s.changed(a)
	}
	return err
}

// DeleteAsset deletes an asset's metadata, then its repository.
func (s *Store) DeleteAsset(ctx context.Context, by quire.Actor, a *quire.Asset) error {
	err := s.meta.write(by, fmt.Sprintf("Delete %s %s", a.Kind, a.Slug), nil, []string{metaPath(a.Kind.Plural(), a.ID)}, func() error {
		if o := s.meta.assets[a.ID]; o == nil || o.Kind != a.Kind {
			return quire.Errorf(quire.ENOTFOUND, "%s not found", a.Kind)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.changed(a)
	return s.removeRepo(s.RepoPath(a))
}

// Compile-time checks that Store implements the root interfaces.
var (
	_ quire.MetaStore    = (*Store)(nil)
	_ quire.VersionStore = (*Store)(nil)
)
