package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/quire/quire"
	"github.com/quire/quire/render"
)

// Composition: {{> slug}} includes the live version of the text prompt
// slug of the same project, {{> slug@N}} its published version N. A
// render resolves every partial afresh -- the partial's live commit is one
// ref read, its content and parsed template are kept by commit -- so a
// publish, promote or archive of a partial shows in the next render on
// every node without any invalidation reaching the includer.

// PartialUse is one prompt a render included.
type PartialUse struct {
	Slug     string `json:"slug"`
	PromptID string `json:"prompt_id"`
	Version  int    `json:"version"`
	Commit   string `json:"commit"`
}

// includes resolves partial names to the prompts of one project, for
// one render or one publish check, and remembers what it resolved.
type includes struct {
	a       *App
	ctx     context.Context
	project string
	used    []PartialUse
	// seen holds each name's resolution, so a name is resolved once per
	// render however many messages name it (and every message sees the
	// same commit of it).
	seen map[string]resolved
}

type resolved struct {
	t   *render.Template
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
	if r, ok := in.seen[name]; ok {
		return r.t, r.err
	}
	t, err := in.resolve(name)
	if in.seen == nil {
		in.seen = map[string]resolved{}
	}
	in.seen[name] = resolved{t, err}
	return t, err
}

// resolve finds the template partial name stands for.
func (in *includes) resolve(name string) (*render.Template, error) {
	slug, n, ok := splitPartial(name)
	if !ok {
		return nil, render.ErrNoPartial
	}
	as, err := in.a.projectPrompt(in.ctx, in.project, slug)
	if err != nil || as == nil {
		return nil, err
	}
	var (
		v       *quire.Version
		content *quire.PromptContent
	)
	if n == 0 {
		commit, err := in.a.prompts.LiveCommit(in.ctx, as)
		if err != nil {
			return nil, err
		}
		if commit == "" {
			return nil, render.ErrNoPartial
		}
		pv, err := in.a.livePromptAt(in.ctx, as, commit)
		if err != nil {
			return nil, err
		}
		v, content = pv.Version, pv.Content
	} else {
		v, err = in.a.versions.Version(in.ctx, as, n)
		if quire.ErrorCode(err) == quire.ENOTFOUND || err == nil && v.State != quire.StatePublished {
			return nil, render.ErrNoPartial
		}
		if err != nil {
			return nil, err
		}
		if content, err = in.a.prompts.PromptContent(in.ctx, as, v.Commit); err != nil {
			return nil, err
		}
	}
	cp, err := in.a.templates.get(v.Commit, content)
	if err != nil {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "partial %s: %s", name, quire.ErrorMessage(err))
	}
	if cp.text == nil {
		return nil, quire.Errorf(quire.EUNPROCESSABLE, "partial %s is a chat prompt; only text prompts can be included", name).
			WithDetail("partial", name)
	}
	in.used = append(in.used, PartialUse{Slug: name, PromptID: as.ID, Version: v.Number, Commit: v.Commit})
	return cp.text, nil
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
		for _, u := range in.used {
			if u.Slug == n && !slices.Contains(out, u) {
				out = append(out, u)
				break
			}
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

// Dependent is a prompt whose live version or drafts include another.
type Dependent struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	// Versions are the including versions: the live one and the drafts,
	// with the name each includes the prompt by.
	Versions []DependentVersion `json:"versions"`
}

// DependentVersion is one version that includes a prompt.
type DependentVersion struct {
	Version int    `json:"version"`
	State   string `json:"state"`
	Live    bool   `json:"live"`
	// Includes are the names the version includes the prompt by: its
	// slug (the live version) or slug@N (a pinned one).
	Includes []string `json:"includes"`
}

// Dependents lists the prompts of prompt ref's project (read access)
// whose live version or drafts include it by name, so an editor knows
// what a change touches. Dynamic names ({{>*var}}) depend on the
// variables and are not followed.
func (a *App) Dependents(ctx context.Context, p *quire.Principal, ref string) (*quire.Asset, []Dependent, error) {
	as, err := a.Asset(ctx, p, quire.KindPrompt, ref, quire.AccessRead)
	if err != nil {
		return nil, nil, err
	}
	others, err := a.meta.Assets(ctx, quire.KindPrompt, as.ProjectID)
	if err != nil {
		return nil, nil, err
	}
	out := []Dependent{}
	for _, o := range others {
		if o.ID == as.ID {
			continue
		}
		vs, err := a.versions.Versions(ctx, o)
		if err != nil {
			return nil, nil, err
		}
		d := Dependent{ID: o.ID, Slug: o.Slug}
		for _, v := range vs {
			if !v.Live && v.State != quire.StateDraft {
				continue
			}
			c, err := a.prompts.PromptContent(ctx, o, v.Commit)
			if err != nil {
				continue // a broken layout includes nothing
			}
			cp, err := a.templates.get(v.Commit, c)
			if err != nil {
				continue
			}
			var names []string
			for _, t := range cp.all() {
				for _, n := range t.PartialNames() {
					slug, _, ok := splitPartial(n)
					if ok && (slug == as.Slug || slug == as.ID) && !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
			if len(names) > 0 {
				d.Versions = append(d.Versions, DependentVersion{Version: v.Number, State: string(v.State), Live: v.Live, Includes: names})
			}
		}
		if len(d.Versions) > 0 {
			out = append(out, d)
		}
	}
	return as, out, nil
}
