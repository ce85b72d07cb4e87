package app_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/zipfile"
)

// versionCase is one use case of the version life cycle and the access
// it needs.
type versionCase struct {
	name  string
	write bool
	do    func(context.Context, *app.Handle) error
}

// versionCases are the version and file use cases of a skill, on the
// world's published version 1 and draft 2.
func versionCases(t *testing.T) []versionCase {
	var zip bytes.Buffer
	if err := zipfile.Write(&zip, "pdf", map[string][]byte{"SKILL.md": []byte(skillMD)}); err != nil {
		t.Fatal(err)
	}
	return []versionCase{
		{"list versions", false, func(ctx context.Context, h *app.Handle) error {
			_, _, err := h.Versions(ctx, "", quire.ListOptions{})
			return err
		}},
		{"read a version", false, func(ctx context.Context, h *app.Handle) error { _, err := h.Version(ctx, 1); return err }},
		{"diff", false, func(ctx context.Context, h *app.Handle) error { _, err := h.Diff(ctx, 1, 1); return err }},
		{"list files", false, func(ctx context.Context, h *app.Handle) error { _, err := h.Files(ctx, 1); return err }},
		{"read a file", false, func(ctx context.Context, h *app.Handle) error {
			_, _, err := h.ReadFile(ctx, 1, "SKILL.md")
			return err
		}},
		{"download", false, func(ctx context.Context, h *app.Handle) error { _, err := h.DownloadVersion(ctx, 1); return err }},
		{"open a draft", true, func(ctx context.Context, h *app.Handle) error {
			_, err := h.CreateVersion(ctx, quire.Base{Live: true})
			return err
		}},
		{"upload a zip", true, func(ctx context.Context, h *app.Handle) error {
			_, _, err := h.UploadVersion(ctx, zip.Bytes())
			return err
		}},
		{"write a file", true, func(ctx context.Context, h *app.Handle) error {
			_, _, err := h.UpsertFile(ctx, 2, app.FileWrite{Path: "b.txt", Content: []byte("b")})
			return err
		}},
		{"delete a file", true, func(ctx context.Context, h *app.Handle) error {
			_, err := h.DeleteFile(ctx, 2, "a.txt", "")
			return err
		}},
		{"delete a draft", true, func(ctx context.Context, h *app.Handle) error { return h.DeleteVersion(ctx, 2) }},
		{"publish", true, func(ctx context.Context, h *app.Handle) error {
			_, err := h.PublishVersion(ctx, 2, app.PublishOptions{})
			return err
		}},
		{"promote", true, func(ctx context.Context, h *app.Handle) error { _, err := h.PromoteVersion(ctx, 1); return err }},
		{"archive", true, func(ctx context.Context, h *app.Handle) error { _, err := h.ArchiveVersion(ctx, 2); return err }},
	}
}

// TestVersionAccess: every kind of caller against every version and file
// use case of a skill, in a private and a public project. Reads need
// read access, writes write access: a viewer, a read key and a viewer's
// write key (a key never exceeds its user's role) are forbidden to
// write; a stranger and a key limited to another project do not find
// the skill; an anonymous caller must sign in, or in a public project
// may read but not write. A refused write leaves the store as it was
// and records no event. Mirrors httpapi's authorization matrix rows of
// these routes at the use case.
func TestVersionAccess(t *testing.T) {
	ctx := context.Background()
	for _, public := range []bool{false, true} {
		callers := []struct {
			name        string
			p           func(*world) *quire.Principal
			open, write quire.Code // "" for allowed
		}{
			{"owner", func(w *world) *quire.Principal { return w.owner }, "", ""},
			{"admin", func(w *world) *quire.Principal { return w.admin }, "", ""},
			{"editor", func(w *world) *quire.Principal { return w.editor }, "", ""},
			{"viewer", func(w *world) *quire.Principal { return w.viewer }, "", quire.EFORBIDDEN},
			{"read key of an editor", func(w *world) *quire.Principal { return w.readKey }, "", quire.EFORBIDDEN},
			{"write key of a viewer", func(w *world) *quire.Principal { return w.viewerWriteKey }, "", quire.EFORBIDDEN},
			{"key of another project", func(w *world) *quire.Principal { return w.otherKey }, quire.ENOTFOUND, ""},
			{"stranger", func(w *world) *quire.Principal { return w.stranger }, quire.ENOTFOUND, ""},
			{"anonymous", func(w *world) *quire.Principal { return w.anon }, quire.EUNAUTHORIZED, ""},
		}
		if public {
			// Public is for readers without a credential: a signed-in
			// stranger still sees only the projects it belongs to.
			callers[len(callers)-1].open, callers[len(callers)-1].write = "", quire.EUNAUTHORIZED
		}
		for _, uc := range versionCases(t) {
			for _, c := range callers {
				w := newWorld(t, worldOpts{public: public})
				p := c.p(w)
				h, err := w.app.Open(ctx, p, quire.KindSkill, "pdf", quire.AccessRead)
				if code(err) != c.open {
					t.Fatalf("public=%v %s: open: %v, want %q", public, c.name, err, c.open)
				}
				if err != nil {
					continue
				}
				want := quire.Code("")
				if uc.write {
					want = c.write
				}
				before := w.state(t)
				if err := uc.do(ctx, h); code(err) != want {
					t.Errorf("public=%v %s: %s: %v, want %q", public, c.name, uc.name, err, want)
				}
				if want == "" {
					continue
				}
				if after := w.state(t); !slices.Equal(after, before) {
					t.Errorf("public=%v %s: refused %s changed the store: %v, was %v", public, c.name, uc.name, after, before)
				}
				if evs, ins := w.events.Recorded(w.project.ID), w.events.Intents(w.project.ID, ""); len(evs) != 0 || len(ins) != 0 {
					t.Errorf("public=%v %s: refused %s recorded events %v, intents %v", public, c.name, uc.name, types(evs), ins)
				}
			}
		}
	}
}

// TestAnonymousSeesPublishedOnly: an anonymous reader of a public project
// sees published versions only (drafts and archived versions answer as
// missing ones do) and no history, which would show drafts' commits.
// Members see every version.
func TestAnonymousSeesPublishedOnly(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, worldOpts{public: true})
	if _, err := w.open(t, w.owner).ArchiveVersion(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := w.open(t, w.owner).CreateVersion(ctx, quire.Base{Live: true}); err != nil {
		t.Fatal(err) // draft 3
	}
	anon, member := w.open(t, w.anon), w.open(t, w.viewer)
	numbers := func(vs []*quire.Version) (out []int) {
		for _, v := range vs {
			out = append(out, v.Number)
		}
		return out
	}
	for _, tc := range []struct {
		state       quire.VersionState
		anon, viewr []int
	}{
		{"", []int{1}, []int{1, 2, 3}},
		{quire.StatePublished, []int{1}, []int{1}},
		{quire.StateDraft, nil, []int{3}},
		{quire.StateArchived, nil, []int{2}},
	} {
		vs, _, err := anon.Versions(ctx, tc.state, quire.ListOptions{})
		if err != nil || !slices.Equal(numbers(vs), tc.anon) {
			t.Errorf("anonymous lists %q: %v, %v; want %v", tc.state, numbers(vs), err, tc.anon)
		}
		vs, _, err = member.Versions(ctx, tc.state, quire.ListOptions{})
		if err != nil || !slices.Equal(numbers(vs), tc.viewr) {
			t.Errorf("viewer lists %q: %v, %v; want %v", tc.state, numbers(vs), err, tc.viewr)
		}
	}
	if _, _, err := anon.Versions(ctx, "live", quire.ListOptions{}); code(err) != quire.EINVALID {
		t.Errorf("a bad state filter: %v, want invalid", err)
	}
	for _, n := range []int{2, 3} {
		for name, err := range map[string]error{
			"read":     func() error { _, err := anon.Version(ctx, n); return err }(),
			"files":    func() error { _, err := anon.Files(ctx, n); return err }(),
			"a file":   func() error { _, _, err := anon.ReadFile(ctx, n, "SKILL.md"); return err }(),
			"download": func() error { _, err := anon.DownloadVersion(ctx, n); return err }(),
			"diff to":  func() error { _, err := anon.Diff(ctx, 1, n); return err }(),
		} {
			if code(err) != quire.ENOTFOUND {
				t.Errorf("anonymous %s of version %d: %v, want not found", name, n, err)
			}
		}
		if _, err := member.Version(ctx, n); err != nil {
			t.Errorf("viewer reads version %d: %v", n, err)
		}
		if _, err := member.Diff(ctx, 1, n); err != nil {
			t.Errorf("viewer diffs to version %d: %v", n, err)
		}
	}
	if _, _, err := anon.History(ctx, quire.ListOptions{}); code(err) != quire.EUNAUTHORIZED {
		t.Errorf("anonymous history: %v, want sign in", err)
	}
	if _, _, err := member.History(ctx, quire.ListOptions{}); err != nil {
		t.Errorf("viewer history: %v", err)
	}
	if _, err := member.Diff(ctx, 0, 1); code(err) != quire.EINVALID {
		t.Errorf("diff from 0: %v, want invalid", err)
	}
}

// TestSkillUseCasesOnAPrompt: the use cases only skills have answer a
// prompt's handle as if no skill of its id existed, even to its owner.
func TestSkillUseCasesOnAPrompt(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	h, err := w.app.Open(ctx, w.owner, quire.KindPrompt, "greet", quire.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"upload":        func() error { _, _, err := h.UploadVersion(ctx, nil); return err }(),
		"delete a file": func() error { _, err := h.DeleteFile(ctx, 1, "a.txt", ""); return err }(),
		"list files":    func() error { _, err := h.Files(ctx, 1); return err }(),
		"read a file":   func() error { _, _, err := h.ReadFile(ctx, 1, "a.txt"); return err }(),
		"download":      func() error { _, err := h.DownloadVersion(ctx, 1); return err }(),
		"replace files": func() error { _, _, err := h.ReplaceFiles(ctx, 1, app.TreeWrite{}); return err }(),
	} {
		if code(err) != quire.ENOTFOUND {
			t.Errorf("%s on a prompt: %v, want not found", name, err)
		}
	}
}

// TestPromptUseCasesOnASkill: the use cases only prompts have answer a
// skill's handle as if no prompt of its id existed, even to its owner,
// before any store is reached.
func TestPromptUseCasesOnASkill(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, worldOpts{})
	h := w.open(t, w.owner)
	for name, err := range map[string]error{
		"check":           func() error { _, err := h.CheckPromptVersion(ctx, 1); return err }(),
		"dependents":      func() error { _, err := h.Dependents(ctx); return err }(),
		"create payload":  func() error { _, err := h.CreatePayload(ctx, app.PayloadInput{}); return err }(),
		"list payloads":   func() error { _, _, err := h.Payloads(ctx, quire.ListOptions{}); return err }(),
		"read a payload":  func() error { _, err := h.Payload(ctx, "p"); return err }(),
		"update payload":  func() error { _, err := h.UpdatePayload(ctx, "p", app.PayloadInput{}); return err }(),
		"delete payload":  func() error { return h.DeletePayload(ctx, "p") }(),
		"new version":     func() error { _, err := h.CreatePromptVersion(ctx, app.NewPromptVersion{}); return err }(),
		"edit a version":  func() error { _, err := h.UpdatePromptVersion(ctx, 2, app.PromptEdit{}, ""); return err }(),
		"variables":       func() error { _, err := h.PromptVariables(ctx, 1); return err }(),
		"live commit":     func() error { _, err := h.LiveCommit(ctx); return err }(),
		"live prompt":     func() error { _, err := h.LivePrompt(ctx, ""); return err }(),
		"purge the cache": func() error { return h.PurgePromptCache(ctx) }(),
		"render":          func() error { _, err := h.Render(ctx, app.RenderRequest{}); return err }(),
		"run":             func() error { _, err := h.RunPrompt(ctx, app.VersionRef{Live: true}, app.RunRequest{}); return err }(),
		"usage":           func() error { _, err := h.PromptUsage(ctx); return err }(),
	} {
		if code(err) != quire.ENOTFOUND {
			t.Errorf("%s on a skill: %v, want not found", name, err)
		}
	}
	if got := w.state(t); len(got) != 2 {
		t.Errorf("the store holds %v", got)
	}
}
