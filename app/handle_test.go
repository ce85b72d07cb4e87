package app_test

import (
	"context"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/app/apptest"
)

// labelWorld is a project with an owner, an editor and a viewer, a
// prompt with version 1 published and 2 a draft, and "production" a
// protected label: the use cases' rules, tested on in-memory stores.
type labelWorld struct {
	app                     *app.App
	owner, editor, viewer   *quire.Principal
	readKey, stranger, anon *quire.Principal
}

func newLabelWorld(t *testing.T, public bool) *labelWorld {
	t.Helper()
	meta, versions := apptest.NewMeta(), apptest.NewVersions()
	pr := &quire.Project{Slug: "demo", Members: []quire.Member{
		{UserID: "owner", Role: quire.ProjectOwner}, {UserID: "editor", Role: quire.ProjectEditor}, {UserID: "viewer", Role: quire.ProjectViewer},
	}, ReviewPolicy: &quire.ReviewPolicy{ProtectedLabels: []string{"production"}}}
	if public {
		pr.Visibility = quire.Public
	}
	meta.AddProject(pr)
	as := meta.AddAsset(&quire.Asset{ProjectID: pr.ID, Kind: quire.KindPrompt, Slug: "greet"})
	versions.AddVersion(as, 1, quire.StatePublished)
	versions.AddVersion(as, 2, quire.StateDraft)
	user := func(id string) *quire.Principal { return &quire.Principal{User: &quire.User{ID: id}} }
	w := &labelWorld{
		app:   app.New(app.Config{Meta: meta, Versions: versions}),
		owner: user("owner"), editor: user("editor"), viewer: user("viewer"),
		stranger: user("stranger"), anon: quire.Anonymous(),
	}
	w.readKey = &quire.Principal{User: &quire.User{ID: "editor"}, Key: &quire.APIKey{Scope: quire.ScopeRead}}
	return w
}

// open opens the prompt for p with read access, as a door's read route
// does; nil when p may not see it (the code is in err).
func (w *labelWorld) open(t *testing.T, p *quire.Principal) (*app.Handle, error) {
	t.Helper()
	return w.app.Open(context.Background(), p, quire.KindPrompt, "greet", quire.AccessRead)
}

// TestHandleAccess: every principal against the label use cases, read
// and write: the handle checks what each needs, whatever the door opened
// it with. Mirrors httpapi's authorization matrix at the use case.
func TestHandleAccess(t *testing.T) {
	ctx := context.Background()
	one := 1
	for _, public := range []bool{false, true} {
		w := newLabelWorld(t, public)
		cases := []struct {
			name        string
			p           *quire.Principal
			open, write quire.Code // "" for allowed
		}{
			{"owner", w.owner, "", ""},
			{"editor", w.editor, "", ""},
			{"viewer", w.viewer, "", quire.EFORBIDDEN},
			{"read key of an editor", w.readKey, "", quire.EFORBIDDEN},
			{"stranger", w.stranger, quire.ENOTFOUND, ""},
			{"anonymous", w.anon, quire.EUNAUTHORIZED, ""},
		}
		if public {
			// Public is for readers without a credential: a signed-in
			// stranger still sees only the projects it belongs to.
			cases[5].open, cases[5].write = "", quire.EUNAUTHORIZED
		}
		for _, tc := range cases {
			h, err := w.open(t, tc.p)
			if quire.ErrorCode(err) != tc.open && !(tc.open == "" && err == nil) {
				t.Fatalf("public=%v %s: open: %v, want %q", public, tc.name, err, tc.open)
			}
			if err != nil {
				continue
			}
			if _, err := h.Labels(ctx); err != nil {
				t.Errorf("public=%v %s: read labels: %v", public, tc.name, err)
			}
			_, err = h.SetLabel(ctx, "staging", app.LabelEdit{Version: &one})
			if got := quire.ErrorCode(err); err != nil && got != tc.write || err == nil && tc.write != "" {
				t.Errorf("public=%v %s: set a label: %v, want %q", public, tc.name, err, tc.write)
			}
			// A forbidden caller is refused before its input is looked
			// at: an edit with no version is still forbidden, not invalid.
			if tc.write != "" {
				if _, err := h.SetLabel(ctx, "staging", app.LabelEdit{}); quire.ErrorCode(err) != tc.write {
					t.Errorf("public=%v %s: malformed edit: %v, want %q", public, tc.name, err, tc.write)
				}
			}
		}
	}
}

// TestProtectedLabel: moving or removing a protected label needs a
// reviewed version or an owner's override with a reason; an editor's
// override is refused, and a draft is never labeled.
func TestProtectedLabel(t *testing.T) {
	ctx := context.Background()
	w := newLabelWorld(t, false)
	one, two := 1, 2
	for _, tc := range []struct {
		name string
		p    *quire.Principal
		edit app.LabelEdit
		code quire.Code
	}{
		{"editor, unreviewed", w.editor, app.LabelEdit{Version: &one}, quire.EREVIEW},
		{"editor's override", w.editor, app.LabelEdit{Version: &one, Override: true, Reason: "hotfix"}, quire.EFORBIDDEN},
		{"owner's override without a reason", w.owner, app.LabelEdit{Version: &one, Override: true, Reason: "  "}, quire.EUNPROCESSABLE},
		{"no version", w.owner, app.LabelEdit{Override: true, Reason: "x"}, quire.EINVALID},
		{"a draft", w.owner, app.LabelEdit{Version: &two, Override: true, Reason: "x"}, quire.ECONFLICT},
		{"owner's override", w.owner, app.LabelEdit{Version: &one, Override: true, Reason: "incident 12"}, ""},
	} {
		h, err := w.open(t, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		l, err := h.SetLabel(ctx, "production", tc.edit)
		if quire.ErrorCode(err) != tc.code && !(tc.code == "" && err == nil) {
			t.Fatalf("%s: %v, want %q", tc.name, err, tc.code)
		}
		if err == nil && l.Version != 1 {
			t.Fatalf("%s: label at %d", tc.name, l.Version)
		}
	}
	h, _ := w.open(t, w.owner)
	moves, err := h.LabelHistory(ctx, "production")
	if err != nil || len(moves) != 1 || moves[0].Override != "incident 12" || moves[0].MovedBy != "owner" {
		t.Fatalf("history %+v, %v: want the one override, by the owner, with its reason", moves, err)
	}
	he, _ := w.open(t, w.editor)
	if err := he.DeleteLabel(ctx, "production", app.LabelDelete{}); quire.ErrorCode(err) != quire.ELABELPROTECT {
		t.Fatalf("editor removes a protected label: %v", err)
	}
	if err := h.DeleteLabel(ctx, "production", app.LabelDelete{Override: true, Reason: "retired"}); err != nil {
		t.Fatalf("owner removes it with a reason: %v", err)
	}
}
