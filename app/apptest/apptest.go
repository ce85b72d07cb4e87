// Package apptest holds in-memory stores for testing app's use cases
// without git, Redis or HTTP, as WTF Dial's mock package does: each keeps
// its records in maps under a mutex and implements the root package's
// interface it is named for. A method a test does not need is left to
// the embedded interface, nil, so calling it panics: a test that reaches
// it says at once which store it must fill in.
package apptest

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/quire/quire"
)

// Meta is a quire.MetaStore of projects and assets.
type Meta struct {
	quire.MetaStore

	mu       sync.Mutex
	projects map[string]*quire.Project
	assets   []*quire.Asset
}

// NewMeta returns an empty Meta.
func NewMeta() *Meta { return &Meta{projects: map[string]*quire.Project{}} }

// AddProject stores pr, giving it an id when it has none.
func (m *Meta) AddProject(pr *quire.Project) *quire.Project {
	m.mu.Lock()
	defer m.mu.Unlock()
	if pr.ID == "" {
		pr.ID = uuid.NewString()
	}
	m.projects[pr.ID] = pr
	return pr
}

// AddAsset stores as, giving it an id when it has none.
func (m *Meta) AddAsset(as *quire.Asset) *quire.Asset {
	m.mu.Lock()
	defer m.mu.Unlock()
	if as.ID == "" {
		as.ID = uuid.NewString()
	}
	m.assets = append(m.assets, as)
	return as
}

// Project returns a copy of the project ref names (id or slug), as the
// real store does, so a use case's changes reach it only through a write.
func (m *Meta) Project(_ context.Context, ref string) (*quire.Project, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, pr := range m.projects {
		if pr.ID == ref || pr.Slug == ref {
			c := *pr
			c.Members = append([]quire.Member(nil), pr.Members...)
			return &c, nil
		}
	}
	return nil, quire.Errorf(quire.ENOTFOUND, "project not found")
}

// FindAssets lists the assets of kind whose id or slug is ref.
func (m *Meta) FindAssets(_ context.Context, kind quire.Kind, ref string) ([]*quire.Asset, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*quire.Asset
	for _, as := range m.assets {
		if as.Kind == kind && (as.ID == ref || as.Slug == ref) {
			c := *as
			out = append(out, &c)
		}
	}
	return out, nil
}

// Versions is a quire.VersionStore of version records, and the
// quire.LabelStore app finds on it (as on gitstore's).
type Versions struct {
	quire.VersionStore

	mu       sync.Mutex
	versions map[string]map[int]*quire.Version // asset id → number
	labels   map[string]map[string]int         // asset id → name → version
	moves    map[string][]quire.LabelMove      // asset id + "/" + name, newest first
}

// NewVersions returns an empty Versions.
func NewVersions() *Versions {
	return &Versions{versions: map[string]map[int]*quire.Version{}, labels: map[string]map[string]int{}, moves: map[string][]quire.LabelMove{}}
}

// AddVersion stores version n of as in state.
func (v *Versions) AddVersion(as *quire.Asset, n int, state quire.VersionState) *quire.Version {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.versions[as.ID] == nil {
		v.versions[as.ID] = map[int]*quire.Version{}
	}
	ver := &quire.Version{Number: n, State: state, Commit: uuid.NewString()}
	v.versions[as.ID][n] = ver
	return ver
}

// Version returns version n of as.
func (v *Versions) Version(_ context.Context, as *quire.Asset, n int) (*quire.Version, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ver, ok := v.versions[as.ID][n]
	if !ok {
		return nil, quire.Errorf(quire.ENOTFOUND, "version %d not found", n)
	}
	c := *ver
	return &c, nil
}

// SetLabel points name at published version n, as gitstore does.
func (v *Versions) SetLabel(_ context.Context, by quire.Actor, as *quire.Asset, name string, n int, override string) (*quire.Label, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ver, ok := v.versions[as.ID][n]
	if !ok {
		return nil, quire.Errorf(quire.ENOTFOUND, "version %d not found", n)
	}
	if ver.State != quire.StatePublished {
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is %s; only a published version can be labeled", n, ver.State)
	}
	if v.labels[as.ID] == nil {
		v.labels[as.ID] = map[string]int{}
	}
	v.labels[as.ID][name] = n
	key := as.ID + "/" + name
	v.moves[key] = append([]quire.LabelMove{{Name: name, Version: n, Action: "set", Override: override, MovedAt: time.Now().UTC(), MovedBy: by.UserID}}, v.moves[key]...)
	return &quire.Label{Name: name, Version: n}, nil
}

// DeleteLabel removes name.
func (v *Versions) DeleteLabel(_ context.Context, by quire.Actor, as *quire.Asset, name, override string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.labels[as.ID][name]; !ok {
		return quire.Errorf(quire.ENOTFOUND, "label %s not found", name)
	}
	delete(v.labels[as.ID], name)
	return nil
}

// Labels lists the labels of as.
func (v *Versions) Labels(_ context.Context, as *quire.Asset) ([]quire.Label, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := []quire.Label{}
	for name, n := range v.labels[as.ID] {
		out = append(out, quire.Label{Name: name, Version: n})
	}
	return out, nil
}

// LabelHistory lists the moves of name, newest first.
func (v *Versions) LabelHistory(_ context.Context, as *quire.Asset, name string) ([]quire.LabelMove, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	moves, ok := v.moves[as.ID+"/"+name]
	if !ok {
		return nil, quire.Errorf(quire.ENOTFOUND, "label %s not found", name)
	}
	return append([]quire.LabelMove(nil), moves...), nil
}
