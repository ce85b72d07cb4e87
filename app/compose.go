package app

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/quire/quire"
	"github.com/quire/quire/render"
)

// Composition: {{> slug}} includes the live version of the text prompt
// slug of the same project, {{> slug@N}} its published version N.
//
// A render keeps what its partials resolved to (composeMemo), by the
// including prompt and commit, stamped with the prompt store's
// generation: a number that changes whenever a ref moves on the shared
// data root, in any process, when the prompt cache is told to invalidate
// (locally or over pub/sub), and at least every second. A render whose
// stamp still holds takes every partial from the memo and looks nothing
// up; once it moves, the next render resolves each partial afresh (the
// slug in the project's metadata, the live commit or published version,
// the content and parsed template, both kept by commit). So a publish,
// promote or archive of a partial, or a rename, shows in the next render
// of every includer on every node sharing the data root, as the live
// cache's own commit check does for the rendered prompt.

// PartialUse is one prompt a render included.
type PartialUse struct {
	Slug     string `json:"slug"`
	PromptID string `json:"prompt_id"`
	Version  int    `json:"version"`
	Commit   string `json:"commit"`
}

// generations is a prompt store that can say cheaply whether anything a
// resolution read may have changed (the prompt cache over gitstore):
// Generation changes whenever it may have; ok is false when the store
// cannot tell, and then nothing is reused.
type generations interface {
	Generation() (gen uint64, ok bool)
}

// includes resolves partial names to the prompts of one project, for
// one render or one publish check, and remembers what it resolved.
type includes struct {
	a       *App
	ctx     context.Context
	project string
	// seen holds each name's resolution, so a name is resolved once per
	// render however many messages name it (and every message sees the
	// same commit of it).
	seen map[string]resolved
	// memo is what earlier renders of the same commit resolved, under a
	// generation that still holds (nil when there is none); fresh says
	// seen holds a resolution memo lacks.
	memo  *composition
	fresh bool
}

type resolved struct {
	t   *render.Template
	use PartialUse
	err error
}

func (a *App) includes(ctx context.Context, as *quire.Asset) *includes {
	return &includes{a: a, ctx: ctx, project: as.ProjectID}
}

// splitPartial splits "slug@N" into slug and N (0 for the live version).
func splitPartial(name string) (slug string, n int, ok bool) {
	slug, ver, pinned := strings.Cut(name, "@")
	if slug == "" {
		return "", 0, false
	}
	if !pinned {
		return slug, 0, true
	}
	n, err := strconv.Atoi(ver)
	if err != nil || n <= 0 || strconv.Itoa(n) != ver {
		return "", 0, false
	}
	return slug, n, true
}

// Partial implements render.Partials.
func (in *includes) Partial(name string) (*render.Template, error) {
	r, ok := in.seen[name]
	if !ok && in.memo != nil {
		r, ok = in.memo.parts[name]
	}
	if !ok {
		r = in.resolve(name)
		if in.seen == nil {
			in.seen = map[string]resolved{}
		}
		in.seen[name] = r
		in.fresh = true
	}
	return r.t, r.err
}

// resolve finds the template partial name stands for. The project's
// metadata is read in a scope of its own: a memo stamped with a
// generation must not hold what the request's scope read before it.
func (in *includes) resolve(name string) resolved {
	slug, n, ok := splitPartial(name)
	if !ok {
		return resolved{err: render.ErrNoPartial}
	}
	as, err := in.a.projectPrompt(quire.WithReadScope(in.ctx), in.project, slug)
	if err != nil || as == nil {
		return resolved{err: cmp.Or(err, render.ErrNoPartial)}
	}
	var (
		v       *quire.Version
		content *quire.PromptContent
	)
	if n == 0 {
		commit, err := in.a.prompts.LiveCommit(in.ctx, as)
		if err != nil {
			return resolved{err: err}
		}
		if commit == "" {
			return resolved{err: render.ErrNoPartial}
		}
		pv, err := in.a.livePromptAt(in.ctx, as, commit)
		if err != nil {
			return resolved{err: err}
		}
		v, content = pv.Version, pv.Content
	} else {
		v, err = in.a.versions.Version(in.ctx, as, n)
		if quire.ErrorCode(err) == quire.ENOTFOUND || err == nil && v.State != quire.StatePublished {
			return resolved{err: render.ErrNoPartial}
		}
		if err != nil {
			return resolved{err: err}
		}
		if content, err = in.a.prompts.PromptContent(in.ctx, as, v.Commit); err != nil {
			return resolved{err: err}
		}
	}
	cp, err := in.a.templates.get(v.Commit, content)
	if err != nil {
		return resolved{err: quire.Errorf(quire.EUNPROCESSABLE, "partial %s: %s", name, quire.ErrorMessage(err))}
	}
	if cp.text == nil {
		return resolved{err: quire.Errorf(quire.EUNPROCESSABLE, "partial %s is a chat prompt; only text prompts can be included", name).
			WithDetail("partial", name)}
	}
	return resolved{t: cp.text, use: PartialUse{Slug: name, PromptID: as.ID, Version: v.Number, Commit: v.Commit}}
}

// composition is what the renders of one commit of one prompt resolved
// their partials to, while the prompt store's generation was gen. It is
// never changed once stored: a render that resolves more stores a new
// one.
type composition struct {
	gen   uint64
	parts map[string]resolved // only resolutions that succeeded or found nothing
	// names, used and etag are the partials and entity tag of the last
	// render stored, reused by the renders that include the same names.
	names []string
	used  []PartialUse
	etag  string
}

// composeMemo keeps a composition per prompt and commit. Content at a
// commit never changes; what its partials resolve to is checked against
// the generation, so entries only go stale and are then replaced.
type composeMemo struct {
	mu sync.RWMutex
	m  map[composeKey]*composition
}

type composeKey struct{ prompt, commit string }

const maxComposeMemo = 4096

// composed returns the includes for a render of commit of as: with the
// memo's composition when the store's generation still holds it.
func (a *App) composed(ctx context.Context, as *quire.Asset, commit string) *includes {
	in := a.includes(ctx, as)
	if a.gens == nil {
		return in
	}
	gen, ok := a.gens.Generation()
	if !ok {
		return in
	}
	a.compose.mu.RLock()
	c := a.compose.m[composeKey{as.ID, commit}]
	a.compose.mu.RUnlock()
	if c == nil || c.gen != gen {
		c = &composition{gen: gen}
	}
	in.memo = c
	return in
}

// finish returns the partials a render used, in the order it names them
// (render.Rendered.Partials), always a list, and its entity tag, and
// keeps what the render resolved for the next render of commit. The list
// may be shared with other renders: it must not be changed.
func (in *includes) finish(as *quire.Asset, commit string, names []string) ([]PartialUse, string) {
	c := in.memo
	if c != nil && !in.fresh && c.etag != "" && slices.Equal(c.names, names) {
		return c.used, c.etag
	}
	used := in.usedIn(names)
	etag := renderETag(commit, used)
	// Stored when the render resolved something or the composition is
	// new; a render that merely reached other partials than the stored
	// one (another section) computes its own list and tag.
	if c == nil || !in.fresh && c.etag != "" {
		return used, etag
	}
	next := &composition{gen: c.gen, parts: c.parts, names: names, used: used, etag: etag}
	if in.fresh {
		next.parts = make(map[string]resolved, len(c.parts)+len(in.seen))
		maps.Copy(next.parts, c.parts)
		for name, r := range in.seen {
			if r.err == nil || r.err == render.ErrNoPartial {
				next.parts[name] = r
			}
		}
	}
	m := &in.a.compose
	m.mu.Lock()
	if m.m == nil || len(m.m) >= maxComposeMemo {
		m.m = map[composeKey]*composition{}
	}
	key := composeKey{as.ID, commit}
	// A render that began under an older generation leaves a newer
	// composition alone.
	if old := m.m[key]; old == nil || old.gen <= next.gen {
		m.m[key] = next
	}
	m.mu.Unlock()
	return used, etag
}

// projectPrompt finds the prompt slug (or id) in project; nil when there
// is none.
func (a *App) projectPrompt(ctx context.Context, project, slug string) (*quire.Asset, error) {
	found, err := a.meta.FindAssets(ctx, quire.KindPrompt, slug)
	if err != nil {
		return nil, err
	}
	for _, as := range found {
		if as.ProjectID == project {
			return as, nil
		}
	}
	return nil, nil
}

// usedIn returns the partials a render used, in the order it names them
// (render.Rendered.Partials), always a list.
func (in *includes) usedIn(names []string) []PartialUse {
	out := make([]PartialUse, 0, len(names))
	for _, n := range names {
		r, ok := in.seen[n]
		if !ok && in.memo != nil {
			r, ok = in.memo.parts[n]
		}
		if ok && r.err == nil && !slices.Contains(out, r.use) {
			out = append(out, r.use)
		}
	}
	return out
}

// renderETag is the entity tag of a render: the version's commit alone
// when it includes nothing, else a hash of it and the included commits,
// so a publish of a partial changes the tag of every includer.
func renderETag(commit string, used []PartialUse) string {
	if len(used) == 0 {
		return commit
	}
	h := sha256.New()
	h.Write([]byte(commit))
	for _, u := range used {
		h.Write([]byte{0})
		h.Write([]byte(u.Slug))
		h.Write([]byte{0})
		h.Write([]byte(u.Commit))
	}
	return hex.EncodeToString(h.Sum(nil)[:20])
}

// checkIncludes is the publish check of a version's templates: every
// partial they name (and the partials of those) exists, and none includes
// the prompt being published, directly or through others.
func (a *App) checkIncludes(ctx context.Context, as *quire.Asset, cp *compiledPrompt) error {
	in := a.includes(ctx, as)
	for _, t := range cp.all() {
		if err := render.CheckPartials(as.Slug, t, in); err != nil {
			return err
		}
	}
	return nil
}

// Dependent is a prompt whose live version, labelled versions or drafts
// include another, directly or through other prompts.
type Dependent struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	// Direct says a version includes the prompt by name; otherwise every
	// version listed reaches it only through other prompts (Via).
	Direct bool `json:"direct"`
	// Versions are the including versions: the live one, those a label
	// points at, and the drafts.
	Versions []DependentVersion `json:"versions"`
}

// DependentVersion is one version that includes a prompt.
type DependentVersion struct {
	Version int                `json:"version"`
	State   quire.VersionState `json:"state"`
	Live    bool               `json:"live"`
	// Labels are the labels that point at the version, if any: a render
	// by label takes it, so it depends on what it includes as the live
	// version does.
	Labels []string `json:"labels,omitempty"`
	// Includes are the names the version includes the prompt by: its
	// slug (the live version) or slug@N (a pinned one); [] when it
	// includes it only through others.
	Includes []string `json:"includes"`
	// Via are the names the version includes other prompts by whose
	// included version (live, or the pinned one) includes the prompt,
	// directly or further down: the first step of each path, whose own
	// entry in the list shows the next. [] when it includes it only
	// directly.
	Via []string `json:"via"`
}

// Dependents lists the prompts of prompt ref's project (read access)
// whose live version, labelled versions or drafts include it, directly or
// through other prompts, so an editor knows everything a change touches:
// the direct ones first, then the rest in the order of the project's
// prompts. A path counts as a render would take it: through the live
// version of a prompt included by slug and the published version N of one
// included by slug@N. Dynamic names ({{>*var}}) depend on the variables
// and are not followed. The walk is linear in the size of the project's
// templates: each version's names are read once into a set, resolved
// through maps, and the versions reaching the prompt found by one
// breadth-first walk of the reversed graph.
func (h *Handle) Dependents(ctx context.Context) ([]Dependent, error) {
	a, as := h.app, h.Asset
	if err := h.needPrompt(quire.AccessRead); err != nil {
		return nil, err
	}
	g, err := a.includeGraph(ctx, as.ProjectID)
	if err != nil {
		return nil, err
	}
	reaching := g.reaching(ctx, as.ID)
	direct, indirect := []Dependent{}, []Dependent{}
	for _, o := range g.prompts {
		if o.ID == as.ID {
			continue
		}
		d := Dependent{ID: o.ID, Slug: o.Slug}
		for _, v := range g.versions[o.ID] {
			if !g.root(o, v) {
				continue
			}
			dv := DependentVersion{Version: v.Number, State: v.State, Live: v.Live, Labels: g.labels[o.ID][v.Number],
				Includes: []string{}, Via: []string{}}
			for _, e := range g.edges(ctx, o, v) {
				switch {
				case e.to == nil:
				case e.to.ID == as.ID: // by slug, even with a version it lacks
					dv.Includes = append(dv.Includes, e.name)
				case e.v != nil && reaching[nodeKey(e.to, e.v)]:
					dv.Via = append(dv.Via, e.name)
				}
			}
			if len(dv.Includes)+len(dv.Via) > 0 {
				d.Direct = d.Direct || len(dv.Includes) > 0
				d.Versions = append(d.Versions, dv)
			}
		}
		switch {
		case d.Direct:
			direct = append(direct, d)
		case len(d.Versions) > 0:
			indirect = append(indirect, d)
		}
	}
	return append(direct, indirect...), nil
}

// includeGraph is a project's prompts, their versions and labels and,
// read on demand, what each version includes: what Dependents walks.
type includeGraph struct {
	a        *App
	prompts  []*quire.Asset
	bySlug   map[string]*quire.Asset       // by slug and by id
	versions map[string][]*quire.Version   // by prompt id
	live     map[string]*quire.Version     // by prompt id
	numbered map[versionKey]*quire.Version // published ones
	labels   map[string]map[int][]string   // prompt id → version → labels
	out      map[string][]includeEdge      // by nodeKey
}

type versionKey struct {
	prompt string
	n      int
}

// includeEdge is one name a version includes, and what a render takes
// for it: the prompt (nil when none has the slug) and its live or pinned
// published version (nil when it has none).
type includeEdge struct {
	name string
	to   *quire.Asset
	v    *quire.Version
}

func nodeKey(p *quire.Asset, v *quire.Version) string { return p.ID + "@" + v.Commit }

func (a *App) includeGraph(ctx context.Context, project string) (*includeGraph, error) {
	ps, err := a.meta.Assets(ctx, quire.KindPrompt, project)
	if err != nil {
		return nil, err
	}
	g := &includeGraph{a: a, prompts: ps, bySlug: make(map[string]*quire.Asset, 2*len(ps)),
		versions: map[string][]*quire.Version{}, live: map[string]*quire.Version{},
		numbered: map[versionKey]*quire.Version{}, labels: map[string]map[int][]string{}, out: map[string][]includeEdge{}}
	for _, p := range ps {
		// A slug wins over an id that happens to read the same, as in
		// the first match of the list this map replaces.
		if _, ok := g.bySlug[p.Slug]; !ok {
			g.bySlug[p.Slug] = p
		}
		vs, err := a.versions.Versions(ctx, p)
		if err != nil {
			return nil, err
		}
		g.versions[p.ID] = vs
		for _, v := range vs {
			if v.Live {
				g.live[p.ID] = v
			}
			if v.State == quire.StatePublished {
				g.numbered[versionKey{p.ID, v.Number}] = v
			}
		}
		if a.labels != nil {
			ls, err := a.labels.Labels(ctx, p)
			if err != nil {
				return nil, err
			}
			for _, l := range ls {
				if g.labels[p.ID] == nil {
					g.labels[p.ID] = map[int][]string{}
				}
				g.labels[p.ID][l.Version] = append(g.labels[p.ID][l.Version], l.Name)
			}
		}
	}
	for _, p := range ps {
		if _, ok := g.bySlug[p.ID]; !ok {
			g.bySlug[p.ID] = p
		}
	}
	return g, nil
}

// root says whether version v of p is one a caller can reach without
// another prompt: the live version, one a label points at, or a draft.
func (g *includeGraph) root(p *quire.Asset, v *quire.Version) bool {
	return v.Live || v.State == quire.StateDraft || len(g.labels[p.ID][v.Number]) > 0
}

// edges lists the names version v of prompt p includes, each once; a
// version whose layout or templates are broken includes nothing.
func (g *includeGraph) edges(ctx context.Context, p *quire.Asset, v *quire.Version) []includeEdge {
	key := nodeKey(p, v)
	if es, ok := g.out[key]; ok {
		return es
	}
	var es []includeEdge
	if c, err := g.a.prompts.PromptContent(ctx, p, v.Commit); err == nil {
		if cp, err := g.a.templates.get(v.Commit, c); err == nil {
			seen := map[string]struct{}{}
			for _, t := range cp.all() {
				for _, n := range t.PartialNames() {
					if _, dup := seen[n]; !dup {
						seen[n] = struct{}{}
						to, tv := g.resolve(n)
						es = append(es, includeEdge{n, to, tv})
					}
				}
			}
		}
	}
	g.out[key] = es
	return es
}

// resolve finds what a render includes for name: the prompt and its live
// version, or its published version N.
func (g *includeGraph) resolve(name string) (*quire.Asset, *quire.Version) {
	slug, n, ok := splitPartial(name)
	if !ok {
		return nil, nil
	}
	p := g.bySlug[slug]
	if p == nil {
		return nil, nil
	}
	if n == 0 {
		return p, g.live[p.ID]
	}
	return p, g.numbered[versionKey{p.ID, n}]
}

// reaching returns the versions (by nodeKey) that include the prompt
// target directly or further down, among those a root version (live,
// labelled, draft) of the project's prompts leads to: first every such
// version and what it includes, then one breadth-first walk back from
// the versions that include target along the reversed edges. Cycles
// (refused at publish, but a draft may hold one) end nothing early.
func (g *includeGraph) reaching(ctx context.Context, target string) map[string]bool {
	seen := map[string]bool{}
	var seeds []string
	back := map[string][]string{} // nodeKey → the versions that include it
	var visit func(p *quire.Asset, v *quire.Version)
	visit = func(p *quire.Asset, v *quire.Version) {
		key := nodeKey(p, v)
		if p.ID == target || seen[key] {
			return
		}
		seen[key] = true
		direct := false
		for _, e := range g.edges(ctx, p, v) {
			switch {
			case e.to == nil:
			case e.to.ID == target:
				direct = true
			case e.v != nil:
				to := nodeKey(e.to, e.v)
				back[to] = append(back[to], key)
				visit(e.to, e.v)
			}
		}
		if direct {
			seeds = append(seeds, key)
		}
	}
	for _, p := range g.prompts {
		for _, v := range g.versions[p.ID] {
			if g.root(p, v) {
				visit(p, v)
			}
		}
	}
	reach := make(map[string]bool, len(seeds))
	for _, k := range seeds {
		reach[k] = true
	}
	for len(seeds) > 0 {
		k := seeds[len(seeds)-1]
		seeds = seeds[:len(seeds)-1]
		for _, from := range back[k] {
			if !reach[from] {
				reach[from] = true
				seeds = append(seeds, from)
			}
		}
	}
	return reach
}
