package meta

import (
	"encoding/json"
	"path"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/quire/quire"
)

// Entry is one system commit in a project's activity: the commit (with
// the asset it concerns, when it concerns one) and its depth in the
// system repository's history, which orders commits of the same second.
type Entry struct {
	quire.Commit
	Depth int64
}

// ProjectActivity lists the system repository's commits that changed
// project id's record or its assets' metadata (create, rename, delete,
// members), oldest first.
func (s *Store) ProjectActivity(id string) ([]Entry, error) {
	return s.activity.project(s, id)
}

// activityIndex indexes the system repository's commits by the projects
// they concern. Its history is linear (every write moves main from the tip
// it read), so the index is built once and then extended from the tip.
type activityIndex struct {
	mu        sync.Mutex
	tip       plumbing.Hash
	depth     int64
	byProject map[string][]Entry
	owner     map[string]string // asset id -> project id, deleted assets too
}

// project returns the metadata entries of project id, bringing the index
// up to date first.
func (m *activityIndex) project(s *Store, id string) ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.update(s); err != nil {
		return nil, err
	}
	return append([]Entry(nil), m.byProject[id]...), nil
}

func (m *activityIndex) update(s *Store) error {
	r := s.idx.r
	tip, err := r.Ref(mainRef)
	if err != nil || tip == m.tip {
		return err
	}
	// Collect the commits since the indexed tip, newest first.
	var news []plumbing.Hash
	found := m.tip.IsZero()
	for h := tip; !h.IsZero(); {
		if h == m.tip {
			found = true
			break
		}
		news = append(news, h)
		c, err := r.Commit(h)
		if err != nil {
			return err
		}
		h = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			h = c.ParentHashes[0]
		}
	}
	if !found || m.byProject == nil { // rewritten history: start over
		m.depth, m.byProject, m.owner = 0, map[string][]Entry{}, map[string]string{}
	}
	for i := len(news) - 1; i >= 0; i-- {
		if err := m.index(r, news[i]); err != nil {
			return err
		}
	}
	m.tip = tip
	return nil
}

// index adds one system commit to the projects it touches.
func (m *activityIndex) index(r *sysRepo, h plumbing.Hash) error {
	c, err := r.Commit(h)
	if err != nil {
		return err
	}
	m.depth++
	var from plumbing.Hash
	if len(c.ParentHashes) > 0 {
		pc, err := r.Commit(c.ParentHashes[0])
		if err != nil {
			return err
		}
		from = pc.TreeHash
	}
	type change struct {
		name string
		blob plumbing.Hash
	}
	var changes []change
	err = diffTrees(r, from, c.TreeHash, "", func(name string, blob plumbing.Hash) {
		changes = append(changes, change{name, blob})
	})
	if err != nil {
		return err
	}
	type touch struct {
		kind quire.Kind
		id   string
	}
	touched := map[string][]touch{} // project id -> assets touched ("" kind: the project)
	for _, ch := range changes {
		name, blob := ch.name, ch.blob
		dir, _, _ := strings.Cut(name, "/")
		id := strings.TrimSuffix(path.Base(name), ".json")
		switch dir {
		case "projects":
			touched[id] = append(touched[id], touch{})
		case "skills", "prompts":
			pid := m.owner[id]
			if pid == "" {
				b, err := r.ReadBlob(blob)
				if err != nil {
					return err
				}
				var rec struct {
					ProjectID string `json:"project_id"`
				}
				if json.Unmarshal(b, &rec) != nil || rec.ProjectID == "" {
					continue
				}
				pid = rec.ProjectID
				m.owner[id] = pid
			}
			touched[pid] = append(touched[pid], touch{quire.Kind(strings.TrimSuffix(dir, "s")), id})
		}
	}
	for pid, ts := range touched {
		e := Entry{Commit: quire.Commit{
			ID: h.String(), Author: c.Author.Name, Email: c.Author.Email,
			Message: strings.TrimRight(c.Message, "\n"), Time: c.Author.When.UTC(),
		}, Depth: m.depth}
		if len(ts) == 1 && ts[0].id != "" {
			e.AssetID, e.AssetKind = ts[0].id, ts[0].kind
		}
		m.byProject[pid] = append(m.byProject[pid], e)
	}
	return nil
}

// activityDirs are the top directories whose changes concern a project.
var activityDirs = map[string]bool{"projects": true, "skills": true, "prompts": true}

// diffTrees calls fn with the path of every file that differs between
// trees from and to (either zero: empty), and its blob: the new one, or
// the old one for a file removed. It descends only into directories whose
// ids differ, reading trees through the shared decoded-tree cache.
// Hand-written rather than go-git's DiffTree: that one opens every
// sibling subtree of a changed directory to count its children (the
// 256 shards of skills/ and prompts/, each a loose object read through
// billy), so indexing a system history of 2,000 commits took minutes.
func diffTrees(r *sysRepo, from, to plumbing.Hash, prefix string, fn func(name string, blob plumbing.Hash)) error {
	if from == to {
		return nil
	}
	var a, b []object.TreeEntry
	var err error
	if !from.IsZero() {
		if a, err = r.Entries(from); err != nil {
			return err
		}
	}
	if !to.IsZero() {
		if b, err = r.Entries(to); err != nil {
			return err
		}
	}
	old := make(map[string]object.TreeEntry, len(a))
	for _, e := range a {
		old[e.Name] = e
	}
	// side reports one side's entry: a file as changed, a directory's
	// files through a diff against nothing.
	side := func(e object.TreeEntry, removed bool) error {
		name := prefix + e.Name
		if e.Mode != filemode.Dir {
			fn(name, e.Hash)
			return nil
		}
		if removed {
			return diffTrees(r, e.Hash, plumbing.ZeroHash, name+"/", fn)
		}
		return diffTrees(r, plumbing.ZeroHash, e.Hash, name+"/", fn)
	}
	for _, e := range b {
		if prefix == "" && !activityDirs[e.Name] {
			continue
		}
		o, ok := old[e.Name]
		delete(old, e.Name)
		switch {
		case ok && o.Hash == e.Hash && o.Mode == e.Mode:
		case ok && o.Mode == filemode.Dir && e.Mode == filemode.Dir:
			if err := diffTrees(r, o.Hash, e.Hash, prefix+e.Name+"/", fn); err != nil {
				return err
			}
		case ok && o.Mode != filemode.Dir && e.Mode != filemode.Dir:
			fn(prefix+e.Name, e.Hash) // modified
		default: // added, or a file became a directory or back
			if ok {
				if err := side(o, true); err != nil {
					return err
				}
			}
			if err := side(e, false); err != nil {
				return err
			}
		}
	}
	for _, o := range a {
		if _, gone := old[o.Name]; !gone || (prefix == "" && !activityDirs[o.Name]) {
			continue
		}
		if err := side(o, true); err != nil {
			return err
		}
	}
	return nil
}
