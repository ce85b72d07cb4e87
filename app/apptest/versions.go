package apptest

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/quire/quire"
)

// Versions is a quire.VersionStore of versions and their files, and the
// quire.LabelStore app finds on it (as on gitstore's). It keeps the
// version life cycle as gitstore does (only a draft is edited, deleted
// or published; only a published version is promoted or labeled; the
// live version is not archived; a number is never reused), with the same
// error codes, so a use case meets the refusals it meets in production.
// A commit is a fresh id per write; History is empty and Diff names the
// paths that differ: their content is gitstore's to test.
type Versions struct {
	quire.VersionStore

	mu       sync.Mutex
	versions map[string]map[int]*record   // asset id → number
	last     map[string]int               // asset id → highest number given
	commits  map[string]map[string][]byte // commit → its files
	labels   map[string]map[string]int    // asset id → name → version
	moves    map[string][]quire.LabelMove // asset id + "/" + name, newest first
}

// record is one version: its record as read, its files, and the ids of
// the users who wrote to it (a review's authors).
type record struct {
	v       quire.Version
	files   map[string][]byte
	authors []string
}

// NewVersions returns an empty Versions.
func NewVersions() *Versions {
	return &Versions{
		versions: map[string]map[int]*record{}, last: map[string]int{}, commits: map[string]map[string][]byte{},
		labels: map[string]map[string]int{}, moves: map[string][]quire.LabelMove{},
	}
}

// AddVersion stores version n of as in state holding files; a published
// one becomes live, as the newest publish does.
func (v *Versions) AddVersion(as *quire.Asset, n int, state quire.VersionState, files ...quire.FileContent) *quire.Version {
	v.mu.Lock()
	defer v.mu.Unlock()
	fs := map[string][]byte{}
	for _, f := range files {
		fs[f.Path] = f.Content
	}
	r := &record{v: quire.Version{AssetID: as.ID, Kind: as.Kind, Number: n, State: state}, files: fs}
	v.commit(r)
	v.put(as, r)
	if state == quire.StatePublished {
		v.makeLive(as, n)
	}
	c := r.v
	return &c
}

// put stores r as a version of as.
func (v *Versions) put(as *quire.Asset, r *record) {
	if v.versions[as.ID] == nil {
		v.versions[as.ID] = map[int]*record{}
	}
	v.versions[as.ID][r.v.Number] = r
	v.last[as.ID] = max(v.last[as.ID], r.v.Number)
}

// commit gives r a new commit holding its files.
func (v *Versions) commit(r *record) {
	r.v.Commit = uuid.NewString()
	r.v.UpdatedAt = time.Now().UTC()
	v.commits[r.v.Commit] = maps.Clone(r.files)
}

// makeLive makes version n of as the live one.
func (v *Versions) makeLive(as *quire.Asset, n int) {
	for m, r := range v.versions[as.ID] {
		r.v.Live = m == n
	}
}

// get is version n of as, ENOTFOUND when there is none.
func (v *Versions) get(as *quire.Asset, n int) (*record, error) {
	r, ok := v.versions[as.ID][n]
	if !ok {
		return nil, quire.Errorf(quire.ENOTFOUND, "version %d not found", n)
	}
	return r, nil
}

// draft is get for a write to a draft: ECONFLICT when n is not one, and
// EPRECONDITION when ifMatch is set and n has moved past it.
func (v *Versions) draft(as *quire.Asset, n int, ifMatch string) (*record, error) {
	r, err := v.get(as, n)
	if err != nil {
		return nil, err
	}
	if r.v.State != quire.StateDraft {
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is %s; only a draft can be changed", n, r.v.State)
	}
	if ifMatch != "" && ifMatch != r.v.Commit {
		return nil, quire.Errorf(quire.EPRECONDITION, "version %d is at %s, not %s", n, r.v.Commit, ifMatch)
	}
	return r, nil
}

// wrote records that by wrote to r.
func (r *record) wrote(by quire.Actor) {
	if by.UserID != "" && !slices.Contains(r.authors, by.UserID) {
		r.authors = append(r.authors, by.UserID)
	}
}

// CreateVersion opens draft number last+1 from base, or holding files
// when given.
func (v *Versions) CreateVersion(_ context.Context, by quire.Actor, as *quire.Asset, base quire.Base, files []quire.FileContent) (*quire.Version, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	fs := map[string][]byte{}
	from := 0
	switch {
	case base.Version > 0:
		b, err := v.get(as, base.Version)
		if err != nil {
			return nil, err
		}
		fs, from = maps.Clone(b.files), base.Version
	case !base.Empty:
		for _, r := range v.versions[as.ID] {
			if r.v.Live {
				fs, from = maps.Clone(r.files), r.v.Number
			}
		}
	}
	for _, f := range files {
		fs[f.Path] = f.Content
	}
	now := time.Now().UTC()
	r := &record{v: quire.Version{
		AssetID: as.ID, Kind: as.Kind, Number: v.last[as.ID] + 1, State: quire.StateDraft,
		Base: from, CreatedAt: now, CreatedBy: by.Email,
	}, files: fs}
	r.wrote(by)
	v.commit(r)
	v.put(as, r)
	c := r.v
	return &c, nil
}

// Versions lists the versions of as by number.
func (v *Versions) Versions(_ context.Context, as *quire.Asset) ([]*quire.Version, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.list(as, ""), nil
}

// VersionsPage is Versions in state ("" for any), as one page.
func (v *Versions) VersionsPage(_ context.Context, as *quire.Asset, state quire.VersionState, _ quire.ListOptions) ([]*quire.Version, string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.list(as, state), "", nil
}

func (v *Versions) list(as *quire.Asset, state quire.VersionState) []*quire.Version {
	out := []*quire.Version{}
	for _, n := range slices.Sorted(maps.Keys(v.versions[as.ID])) {
		if r := v.versions[as.ID][n]; state == "" || r.v.State == state {
			c := r.v
			out = append(out, &c)
		}
	}
	return out
}

// Version returns version n of as.
func (v *Versions) Version(_ context.Context, as *quire.Asset, n int) (*quire.Version, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.get(as, n)
	if err != nil {
		return nil, err
	}
	c := r.v
	return &c, nil
}

// LiveVersion returns the live version of as.
func (v *Versions) LiveVersion(_ context.Context, as *quire.Asset) (*quire.Version, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, r := range v.versions[as.ID] {
		if r.v.Live {
			c := r.v
			return &c, nil
		}
	}
	return nil, quire.Errorf(quire.ENOTFOUND, "no live version: publish one first")
}

// DeleteVersion deletes draft n; its number is not given again.
func (v *Versions) DeleteVersion(_ context.Context, _ quire.Actor, as *quire.Asset, n int) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.get(as, n)
	if err != nil {
		return err
	}
	if r.v.State != quire.StateDraft {
		return quire.Errorf(quire.ECONFLICT, "version %d is %s; only a draft can be deleted", n, r.v.State)
	}
	delete(v.versions[as.ID], n)
	return nil
}

// PublishVersion publishes draft n once check approves its files, and
// makes it live.
func (v *Versions) PublishVersion(_ context.Context, _ quire.Actor, as *quire.Asset, n int, check func(quire.ReadFunc) error) (*quire.Version, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.publish(as, n, check)
}

func (v *Versions) publish(as *quire.Asset, n int, check func(quire.ReadFunc) error) (*quire.Version, error) {
	r, err := v.get(as, n)
	if err != nil {
		return nil, err
	}
	if r.v.State != quire.StateDraft {
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is already %s", n, r.v.State)
	}
	if err := check(func(path string) ([]byte, bool, error) {
		b, ok := r.files[path]
		return b, ok, nil
	}); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	r.v.State, r.v.PublishedAt = quire.StatePublished, &now
	v.makeLive(as, n)
	c := r.v
	return &c, nil
}

// PromoteVersion makes published version n live.
func (v *Versions) PromoteVersion(_ context.Context, _ quire.Actor, as *quire.Asset, n int) (*quire.Version, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.get(as, n)
	if err != nil {
		return nil, err
	}
	if r.v.State != quire.StatePublished {
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is %s; only a published version can be promoted", n, r.v.State)
	}
	v.makeLive(as, n)
	c := r.v
	return &c, nil
}

// ArchiveVersion archives a draft, or a published version not live.
func (v *Versions) ArchiveVersion(_ context.Context, _ quire.Actor, as *quire.Asset, n int) (*quire.Version, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.get(as, n)
	if err != nil {
		return nil, err
	}
	switch {
	case r.v.State == quire.StateArchived:
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is already archived", n)
	case r.v.Live:
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is live; promote another version before archiving it", n)
	}
	now := time.Now().UTC()
	r.v.State, r.v.ArchivedAt = quire.StateArchived, &now
	c := r.v
	return &c, nil
}

// PutFiles writes files into draft n as one commit.
func (v *Versions) PutFiles(_ context.Context, by quire.Actor, as *quire.Asset, n int, files []quire.FileContent, ifMatch, _ string) (*quire.Version, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.draft(as, n, ifMatch)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		r.files[f.Path] = f.Content
	}
	r.wrote(by)
	v.commit(r)
	c := r.v
	return &c, nil
}

// DeleteFile removes path from draft n as one commit.
func (v *Versions) DeleteFile(_ context.Context, by quire.Actor, as *quire.Asset, n int, path, ifMatch string) (*quire.Version, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.draft(as, n, ifMatch)
	if err != nil {
		return nil, err
	}
	if _, ok := r.files[path]; !ok {
		return nil, quire.Errorf(quire.ENOTFOUND, "file %s not found", path)
	}
	delete(r.files, path)
	r.wrote(by)
	v.commit(r)
	c := r.v
	return &c, nil
}

// Files lists the files of version n by path.
func (v *Versions) Files(_ context.Context, as *quire.Asset, n int) ([]quire.File, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.get(as, n)
	if err != nil {
		return nil, err
	}
	out := []quire.File{}
	for _, p := range slices.Sorted(maps.Keys(r.files)) {
		out = append(out, quire.File{Path: p, Size: int64(len(r.files[p]))})
	}
	return out, nil
}

// ReadFile returns one file of version n.
func (v *Versions) ReadFile(_ context.Context, as *quire.Asset, n int, path string) ([]byte, quire.File, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.get(as, n)
	if err != nil {
		return nil, quire.File{}, err
	}
	b, ok := r.files[path]
	if !ok {
		return nil, quire.File{}, quire.Errorf(quire.ENOTFOUND, "file %s not found", path)
	}
	return slices.Clone(b), quire.File{Path: path, Size: int64(len(b))}, nil
}

// ReadFiles returns every file of version n.
func (v *Versions) ReadFiles(_ context.Context, as *quire.Asset, n int) (map[string][]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.get(as, n)
	if err != nil {
		return nil, err
	}
	return maps.Clone(r.files), nil
}

// Diff lists the paths that differ between versions from and to.
func (v *Versions) Diff(_ context.Context, as *quire.Asset, from, to int) ([]quire.FileDiff, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, err := v.get(as, from)
	if err != nil {
		return nil, err
	}
	b, err := v.get(as, to)
	if err != nil {
		return nil, err
	}
	out := []quire.FileDiff{}
	paths := slices.Sorted(maps.Keys(a.files))
	for p := range b.files {
		if _, ok := a.files[p]; !ok {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		x, inA := a.files[p]
		y, inB := b.files[p]
		switch {
		case !inB:
			out = append(out, quire.FileDiff{Path: p, Status: "deleted"})
		case !inA:
			out = append(out, quire.FileDiff{Path: p, Status: "added"})
		case string(x) != string(y):
			out = append(out, quire.FileDiff{Path: p, Status: "modified"})
		}
	}
	return out, nil
}

// History is empty: the commits are gitstore's to tell.
func (v *Versions) History(context.Context, *quire.Asset, quire.ListOptions) ([]quire.Commit, string, error) {
	return []quire.Commit{}, "", nil
}

// SetLabel points name at published version n, as gitstore does.
func (v *Versions) SetLabel(_ context.Context, by quire.Actor, as *quire.Asset, name string, n int, override string) (*quire.Label, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := v.get(as, n)
	if err != nil {
		return nil, err
	}
	if r.v.State != quire.StatePublished {
		return nil, quire.Errorf(quire.ECONFLICT, "version %d is %s; only a published version can be labeled", n, r.v.State)
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

// DraftRefs is a quire.DraftRefs of versions (number → state and
// commit) and of which commit descends from which, for testing a push's
// draft rule without a repository.
type DraftRefs struct {
	Versions map[int]DraftRef
	// Parents maps a commit to its parent.
	Parents map[string]string
	// DraftErr and AncestorErr, when set, are what Draft and IsAncestor
	// return: a repository that cannot be read.
	DraftErr, AncestorErr error
}

// DraftRef is one version as DraftRefs holds it.
type DraftRef struct {
	State  quire.VersionState
	Commit string
}

// Draft is version n's state and commit.
func (r DraftRefs) Draft(n int) (quire.VersionState, string, error) {
	if r.DraftErr != nil {
		return "", "", r.DraftErr
	}
	d, ok := r.Versions[n]
	if !ok {
		return "", "", quire.Errorf(quire.ENOTFOUND, "version %d not found", n)
	}
	return d.State, d.Commit, nil
}

// IsAncestor reports whether old is new or one of its ancestors.
func (r DraftRefs) IsAncestor(old, new string) (bool, error) {
	if r.AncestorErr != nil {
		return false, r.AncestorErr
	}
	for c := new; c != ""; c = r.Parents[c] {
		if c == old {
			return true, nil
		}
	}
	return false, nil
}
