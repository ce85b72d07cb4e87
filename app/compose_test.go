package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/render"
)

// project is an in-memory project of prompts behind the stores
// composition reads (metadata, versions, prompt content), with a
// generation as the prompt cache has one, and a count of lookups.
type project struct {
	quire.MetaStore
	quire.VersionStore
	quire.PromptStore

	mu      sync.Mutex
	id      string
	prompts []*fakePrompt
	gen     uint64
	noGen   bool
	lookups int // FindAssets calls: one per partial resolved
}

type fakePrompt struct {
	as       *quire.Asset
	versions []*quire.Version
	contents map[string]*quire.PromptContent // by commit
}

func newProject(id string) *project { return &project{id: id} }

// prompt returns the prompt slug, made on first use.
func (p *project) prompt(slug string) *fakePrompt {
	for _, fp := range p.prompts {
		if fp.as.Slug == slug {
			return fp
		}
	}
	fp := &fakePrompt{as: &quire.Asset{ID: "id-" + slug, ProjectID: p.id, Kind: quire.KindPrompt, Slug: slug}, contents: map[string]*quire.PromptContent{}}
	p.prompts = append(p.prompts, fp)
	return fp
}

// add adds a version of slug in state; a published one goes live. Every
// change moves the generation, as a ref move does.
func (p *project) add(slug string, state quire.VersionState, c *quire.PromptContent) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	fp := p.prompt(slug)
	n := len(fp.versions) + 1
	v := &quire.Version{AssetID: fp.as.ID, Kind: quire.KindPrompt, Number: n, State: state, Commit: fmt.Sprintf("%s-%s-%d", p.id, slug, n)}
	if state == quire.StatePublished {
		for _, o := range fp.versions {
			o.Live = false
		}
		v.Live = true
	}
	fp.versions = append(fp.versions, v)
	fp.contents[v.Commit] = c
	p.gen++
	return n
}

func text(t string) *quire.PromptContent { return &quire.PromptContent{Template: &t} }

func (p *project) publish(slug, template string) int {
	return p.add(slug, quire.StatePublished, text(template))
}

func (p *project) draft(slug, template string) int {
	return p.add(slug, quire.StateDraft, text(template))
}

// archive archives version n of slug (never the live one).
func (p *project) archive(slug string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prompt(slug).versions[n-1].State = quire.StateArchived
	p.gen++
}

func (p *project) find(slug string) *fakePrompt {
	for _, fp := range p.prompts {
		if fp.as.Slug == slug || fp.as.ID == slug {
			return fp
		}
	}
	return nil
}

func (p *project) byID(id string) *fakePrompt {
	for _, fp := range p.prompts {
		if fp.as.ID == id {
			return fp
		}
	}
	panic("no prompt " + id)
}

func (p *project) FindAssets(_ context.Context, _ quire.Kind, idOrSlug string) ([]*quire.Asset, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lookups++
	if fp := p.find(idOrSlug); fp != nil {
		return []*quire.Asset{fp.as}, nil
	}
	return nil, nil
}

func (p *project) Assets(_ context.Context, _ quire.Kind, projectID string) ([]*quire.Asset, error) {
	var out []*quire.Asset
	for _, fp := range p.prompts {
		out = append(out, fp.as)
	}
	return out, nil
}

func (p *project) Version(_ context.Context, as *quire.Asset, n int) (*quire.Version, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fp := p.byID(as.ID)
	if n < 1 || n > len(fp.versions) {
		return nil, quire.Errorf(quire.ENOTFOUND, "version %d not found", n)
	}
	v := *fp.versions[n-1]
	return &v, nil
}

func (p *project) Versions(_ context.Context, as *quire.Asset) ([]*quire.Version, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.byID(as.ID).versions), nil
}

func (p *project) LiveCommit(_ context.Context, as *quire.Asset) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, v := range p.byID(as.ID).versions {
		if v.Live {
			return v.Commit, nil
		}
	}
	return "", nil
}

func (p *project) LivePrompt(ctx context.Context, as *quire.Asset) (*quire.PromptVersion, error) {
	commit, _ := p.LiveCommit(ctx, as)
	if commit == "" {
		return nil, quire.Errorf(quire.ENOTFOUND, "no live version: publish one first")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fp := p.byID(as.ID)
	for _, v := range fp.versions {
		if v.Commit == commit {
			return &quire.PromptVersion{Version: v, Content: fp.contents[commit]}, nil
		}
	}
	panic("unreachable")
}

func (p *project) PromptContent(_ context.Context, as *quire.Asset, commit string) (*quire.PromptContent, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.byID(as.ID).contents[commit]; c != nil {
		return c, nil
	}
	return nil, quire.Errorf(quire.ENOTFOUND, "no commit %s", commit)
}

func (p *project) Generation() (uint64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gen, !p.noGen
}

func (p *project) app() *App {
	return New(Config{Meta: p, Versions: p, Prompts: p})
}

func (p *project) findLookups() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lookups
}

// composeCases render prompt "main" (its live version, or version of
// main when set) of a project set up by setup.
var composeCases = []struct {
	name    string
	setup   func(p *project) (version int)
	vars    render.Vars
	want    string
	used    string // the partials: slug@version, space-separated
	code    quire.Code
	details map[string]string // detail key -> fmt.Sprint of its value
	substr  string
}{
	{name: "three levels of live partials",
		setup: func(p *project) int {
			p.publish("c", "c={{x}}")
			p.publish("b", "b[{{> c}}]")
			p.publish("a", "a[{{> b}}]")
			p.publish("main", "main[{{> a}}]")
			return 0
		},
		vars: render.Vars{"x": "1"}, want: "main[a[b[c=1]]]", used: "a@1 b@1 c@1"},
	{name: "the live version, not the newest draft",
		setup: func(p *project) int {
			p.publish("part", "old")
			p.publish("part", "live")
			p.draft("part", "draft")
			p.publish("main", "{{> part}}")
			return 0
		},
		want: "live", used: "part@2"},
	{name: "pinned @N takes published version N",
		setup: func(p *project) int {
			p.publish("part", "one")
			p.publish("part", "two")
			p.publish("main", "{{> part@1}} {{> part}}")
			return 0
		},
		want: "one two", used: "part@1@1 part@2"},
	{name: "a pin pins one level",
		setup: func(p *project) int {
			p.publish("leaf", "leaf1")
			p.publish("mid", "mid {{> leaf}}")
			p.publish("leaf", "leaf2")
			p.publish("main", "{{> mid@1}}")
			return 0
		},
		want: "mid leaf2", used: "mid@1@1 leaf@2"},
	{name: "missing partial and variable together",
		setup: func(p *project) int {
			p.publish("main", "{{> nosuch}} {{x}}")
			return 0
		},
		code: quire.EUNPROCESSABLE, details: map[string]string{"missing": "[>nosuch x]", "missing_partials": "[nosuch]"}},
	{name: "missing partial two levels down",
		setup: func(p *project) int {
			p.publish("mid", "mid {{> gone}}")
			p.publish("main", "{{> mid}}")
			return 0
		},
		code: quire.EUNPROCESSABLE, details: map[string]string{"missing": "[>gone]"}},
	{name: "pin to a draft is missing",
		setup: func(p *project) int {
			p.publish("part", "one")
			p.draft("part", "draft")
			p.publish("main", "{{> part@2}}")
			return 0
		},
		code: quire.EUNPROCESSABLE, details: map[string]string{"missing": "[>part@2]"}},
	{name: "pin to an archived version is missing",
		setup: func(p *project) int {
			p.publish("part", "one")
			p.publish("part", "two")
			p.archive("part", 1)
			p.publish("main", "{{> part@1}}")
			return 0
		},
		code: quire.EUNPROCESSABLE, details: map[string]string{"missing": "[>part@1]"}},
	{name: "pin to a version that does not exist is missing",
		setup: func(p *project) int {
			p.publish("part", "one")
			p.publish("main", "{{> part@7}}")
			return 0
		},
		code: quire.EUNPROCESSABLE, details: map[string]string{"missing": "[>part@7]"}},
	{name: "a prompt with no live version is missing",
		setup: func(p *project) int {
			p.draft("part", "never published")
			p.publish("main", "{{> part}}")
			return 0
		},
		code: quire.EUNPROCESSABLE, details: map[string]string{"missing": "[>part]"}},
	{name: "malformed names are missing",
		setup: func(p *project) int {
			p.publish("part", "x")
			p.publish("main", "{{> part@0}}{{> part@01}}{{> @1}}")
			return 0
		},
		code: quire.EUNPROCESSABLE, details: map[string]string{"missing": "[>part@0 >part@01 >@1]"}},
	{name: "a chat prompt cannot be included",
		setup: func(p *project) int {
			p.add("chat", quire.StatePublished, &quire.PromptContent{Messages: []quire.Message{{Role: "user", Content: "hi"}}})
			p.publish("main", "{{> chat}}")
			return 0
		},
		code: quire.EUNPROCESSABLE, substr: "chat prompt", details: map[string]string{"partial": "chat"}},
	{name: "self-include is a cycle",
		setup: func(p *project) int {
			p.publish("main", "plain")
			return p.draft("main", "again {{> main}}")
		},
		code: quire.EUNPROCESSABLE, details: map[string]string{"cycle": "[main main]"}},
	{name: "cycle through other prompts names the chain",
		setup: func(p *project) int {
			p.publish("main", "plain")
			p.publish("b", "b {{> main}}")
			p.publish("a", "a {{> b}}")
			return p.draft("main", "m {{> a}}")
		},
		code: quire.EUNPROCESSABLE, details: map[string]string{"cycle": "[main a b main]"}},
	{name: "a cycle among partials below",
		setup: func(p *project) int {
			p.publish("x", "x")
			p.publish("y", "y {{> x}}")
			p.draft("x", "unused")
			// x's live version includes y, which includes x: published
			// behind the publish check's back.
			p.add("x", quire.StatePublished, text("x {{> y}}"))
			p.publish("main", "{{> x}}")
			return 0
		},
		code: quire.EUNPROCESSABLE, details: map[string]string{"cycle": "[main x y x]"}},
	{name: "depth limit counts every level",
		setup: func(p *project) int {
			p.publish("l0", "end")
			for i := 1; i <= render.MaxDepth; i++ {
				p.publish(fmt.Sprintf("l%d", i), fmt.Sprintf("{{> l%d}}", i-1))
			}
			p.publish("main", fmt.Sprintf("{{> l%d}}", render.MaxDepth))
			return 0
		},
		code: quire.EUNPROCESSABLE, details: map[string]string{"limit": fmt.Sprint(render.MaxDepth)}, substr: "nest deeper than"},
	{name: "depth limit reached exactly renders",
		setup: func(p *project) int {
			p.publish("l1", "end")
			for i := 2; i <= render.MaxDepth; i++ {
				p.publish(fmt.Sprintf("l%d", i), fmt.Sprintf("{{> l%d}}", i-1))
			}
			p.publish("main", fmt.Sprintf("{{> l%d}}", render.MaxDepth))
			return 0
		},
		want: "end"},
	{name: "output limit counts included text",
		setup: func(p *project) int {
			p.publish("big", strings.Repeat("x", render.MaxOutput/2+1))
			p.publish("main", "{{> big}}{{> big}}")
			return 0
		},
		code: quire.EUNPROCESSABLE, details: map[string]string{"limit": fmt.Sprint(render.MaxOutput)}},
	{name: "output limit counts text included in a loop",
		setup: func(p *project) int {
			p.publish("row", strings.Repeat("y", 4096))
			p.publish("main", "{{#rows}}{{> row}}{{/rows}}")
			return 0
		},
		vars: render.Vars{"rows": make([]any, render.MaxOutput/4096+1)},
		code: quire.EUNPROCESSABLE, details: map[string]string{"limit": fmt.Sprint(render.MaxOutput)}},
	{name: "partials of another project are never seen",
		setup: func(p *project) int {
			p.publish("main", "{{> elsewhere}}")
			return 0
		},
		code: quire.EUNPROCESSABLE, details: map[string]string{"missing": "[>elsewhere]"}},
}

func TestComposeRender(t *testing.T) {
	for _, tc := range composeCases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject("p1")
			n := tc.setup(p)
			// Another project's prompt of the name used above.
			other := newProject("p2")
			other.publish("elsewhere", "foreign")
			p.prompts = append(p.prompts, other.prompts...)
			a := p.app()
			req := RenderRequest{Vars: tc.vars}
			if n > 0 {
				req.Version = &n
			}
			// Twice: the second render takes its partials from the memo
			// and must answer the same.
			for round := range 2 {
				out, err := a.render(context.Background(), p.prompt("main").as, req)
				if tc.code != "" {
					if quire.ErrorCode(err) != tc.code || !strings.Contains(quire.ErrorMessage(err), tc.substr) {
						t.Fatalf("round %d: err %v, want %s containing %q", round, err, tc.code, tc.substr)
					}
					d := quire.ErrorDetails(err)
					for k, want := range tc.details {
						if got := fmt.Sprint(d[k]); got != want {
							t.Fatalf("round %d: details.%s = %s, want %s (%v)", round, k, got, want, err)
						}
					}
					continue
				}
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if *out.Text != tc.want {
					t.Fatalf("round %d: rendered %q, want %q", round, *out.Text, tc.want)
				}
				var used []string
				for _, u := range out.Partials {
					used = append(used, fmt.Sprintf("%s@%d", u.Slug, u.Version))
					if fp := p.find(strings.Split(u.Slug, "@")[0]); fp == nil || u.PromptID != fp.as.ID || u.Commit != fp.versions[u.Version-1].Commit {
						t.Fatalf("partial %+v", u)
					}
				}
				if tc.used != "" && strings.Join(used, " ") != tc.used {
					t.Fatalf("round %d: partials %v, want %s", round, used, tc.used)
				}
				if len(out.Partials) > 0 && out.ETag == out.Commit || len(out.Partials) == 0 && out.ETag != out.Commit {
					t.Fatalf("ETag %s of commit %s with %d partials", out.ETag, out.Commit, len(out.Partials))
				}
			}
		})
	}
}

// publishCases are publish checks of a draft of "main".
var publishCases = []struct {
	name    string
	setup   func(p *project) int
	details map[string]string // nil: the check passes
}{
	{name: "partials that exist",
		setup: func(p *project) int {
			p.publish("b", "b")
			p.publish("a", "a {{> b}} {{> b@1}}")
			return p.draft("main", "{{> a}}")
		}},
	{name: "missing partials, also below",
		setup: func(p *project) int {
			p.publish("a", "a {{> gone}}")
			return p.draft("main", "{{> a}} {{> nosuch}} {{> a@3}}")
		},
		details: map[string]string{"missing": "[>gone >nosuch >a@3]"}},
	{name: "self-include",
		setup:   func(p *project) int { return p.draft("main", "{{> main}}") },
		details: map[string]string{"cycle": "[main main]"}},
	{name: "including a published version of itself",
		// main@1 is a fixed text that includes nothing: no cycle.
		setup: func(p *project) int {
			p.publish("main", "v1")
			return p.draft("main", "{{> main@1}}")
		}},
	{name: "self-include by id",
		setup: func(p *project) int { return p.draft("main", "{{> id-main}}") },
		// The id names main too, but the chain is by name: main, then
		// the id, then main's live version (none yet): missing.
		details: map[string]string{"missing": "[>id-main]"}},
	{name: "cycle through others",
		setup: func(p *project) int {
			p.publish("main", "plain")
			p.publish("c", "c {{> main}}")
			p.publish("b", "b {{> c}}")
			return p.draft("main", "{{> b}}")
		},
		details: map[string]string{"cycle": "[main b c main]"}},
	{name: "depth limit",
		setup: func(p *project) int {
			p.publish("l0", "end")
			for i := 1; i <= render.MaxDepth+1; i++ {
				p.publish(fmt.Sprintf("l%d", i), fmt.Sprintf("{{> l%d}}", i-1))
			}
			return p.draft("main", fmt.Sprintf("{{> l%d}}", render.MaxDepth+1))
		},
		details: map[string]string{"limit": fmt.Sprint(render.MaxDepth)}},
}

func TestComposePublishCheck(t *testing.T) {
	for _, tc := range publishCases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject("p1")
			n := tc.setup(p)
			err := p.app().PromptPublishCheck(context.Background(), p.prompt("main").as, n)(nil)
			if tc.details == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if quire.ErrorCode(err) != quire.EUNPROCESSABLE {
				t.Fatalf("err %v, want 422", err)
			}
			d := quire.ErrorDetails(err)
			for k, want := range tc.details {
				if got := fmt.Sprint(d[k]); got != want {
					t.Fatalf("details.%s = %s, want %s (%v)", k, got, want, err)
				}
			}
		})
	}
}

// TestComposeMemo: a render whose generation holds looks nothing up; a
// change (which moves the generation) shows in the next render; a store
// that cannot tell its generation is asked every time.
func TestComposeMemo(t *testing.T) {
	ctx := context.Background()
	p := newProject("p1")
	p.publish("c", "c1")
	p.publish("b", "b[{{> c}}]")
	p.publish("main", "m[{{> b}}{{#more}}{{> extra}}{{/more}}]")
	a := p.app()
	main := p.prompt("main").as
	render1 := func(vars render.Vars) Rendered {
		t.Helper()
		out, err := a.render(ctx, main, RenderRequest{Vars: vars})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := render1(nil)
	if *first.Text != "m[b[c1]]" || p.findLookups() != 2 {
		t.Fatalf("%q after %d lookups", *first.Text, p.findLookups())
	}
	for range 3 {
		if out := render1(nil); *out.Text != "m[b[c1]]" || out.ETag != first.ETag || len(out.Partials) != 2 {
			t.Fatalf("cached render %q %s %v", *out.Text, out.ETag, out.Partials)
		}
	}
	if p.findLookups() != 2 {
		t.Fatalf("cached renders looked partials up: %d lookups", p.findLookups())
	}
	// A section that reaches a partial not resolved yet resolves it
	// alone, and keeps it.
	p.publish("extra", "+")
	p.mu.Lock()
	p.gen-- // as if "extra" had been published before the memo was filled
	p.mu.Unlock()
	if out := render1(render.Vars{"more": true}); *out.Text != "m[b[c1]+]" || len(out.Partials) != 3 || out.ETag == first.ETag {
		t.Fatalf("with extra: %q %v", *out.Text, out.Partials)
	}
	if p.findLookups() != 3 {
		t.Fatalf("%d lookups, want 3", p.findLookups())
	}
	render1(render.Vars{"more": true})
	if out := render1(nil); out.ETag != first.ETag || len(out.Partials) != 2 || p.findLookups() != 3 {
		t.Fatalf("%d lookups, partials %v", p.findLookups(), out.Partials)
	}

	// A new live version of the partial two levels down moves the
	// generation: the next render resolves afresh and shows it.
	p.publish("c", "c2")
	second := render1(nil)
	if *second.Text != "m[b[c2]]" || second.ETag == first.ETag || second.Partials[1].Version != 2 {
		t.Fatalf("after publishing c: %q %v", *second.Text, second.Partials)
	}
	// Archiving a pinned version, too.
	p.publish("pinned", "p1")
	p.publish("pinned", "p2")
	p.publish("main", "{{> pinned@1}}")
	if out := render1(nil); *out.Text != "p1" {
		t.Fatalf("pinned: %q", *out.Text)
	}
	p.archive("pinned", 1)
	if _, err := a.render(ctx, main, RenderRequest{}); quire.ErrorCode(err) != quire.EUNPROCESSABLE {
		t.Fatalf("pinned archived version: %v", err)
	}

	// Without a generation every render looks its partials up.
	p.noGen = true
	p.publish("main", "{{> c}}")
	before := p.findLookups()
	for range 3 {
		render1(nil)
	}
	if got := p.findLookups() - before; got != 3 {
		t.Fatalf("%d lookups in 3 renders without a generation", got)
	}
}
