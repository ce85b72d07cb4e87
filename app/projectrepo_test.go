package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/app/apptest"
)

// viewVersions is apptest's Versions that publishes and keeps project
// repositories, recording each change applied to one.
type viewVersions struct {
	*memVersions
	applied chan quire.ProjectChange
}

// memVersions names apptest.Versions for embedding: its own name would
// hide VersionStore's method Versions.
type memVersions = apptest.Versions

func (v *viewVersions) PublishVersion(ctx context.Context, by quire.Actor, as *quire.Asset, n int, check func(quire.ReadFunc) error) (*quire.Version, error) {
	return &quire.Version{Number: n, State: quire.StatePublished, Commit: "0123456789abcdef0123456789abcdef01234567"}, nil
}

func (v *viewVersions) SyncProject(context.Context, quire.Actor, *quire.Project, []*quire.Asset, string) (string, error) {
	return "", nil
}

func (v *viewVersions) ApplyProjectChange(_ context.Context, _ quire.Actor, _ *quire.Project, _ []*quire.Asset, ch quire.ProjectChange, _ string) (string, error) {
	v.applied <- ch
	return "c", nil
}

func (v *viewVersions) HasProjectRepo(*quire.Project) bool { return true }

// viewMeta is apptest's Meta that lists a project's assets.
type viewMeta struct {
	*apptest.Meta
	assets []*quire.Asset
}

func (m *viewMeta) Assets(context.Context, quire.Kind, string) ([]*quire.Asset, error) {
	return m.assets, nil
}

// TestProjectChangeAfterAnswer: a publish made in a request's context
// (quire.InRequest) changes the project's repository only once that
// context ends -- once the door has answered -- and one made outside a
// request at once.
func TestProjectChangeAfterAnswer(t *testing.T) {
	mem := apptest.NewMeta()
	pr := mem.AddProject(&quire.Project{Slug: "demo", Members: []quire.Member{{UserID: "owner", Role: quire.ProjectOwner}}})
	as := mem.AddAsset(&quire.Asset{ProjectID: pr.ID, Kind: quire.KindSkill, Slug: "pdf"})
	meta := &viewMeta{Meta: mem, assets: []*quire.Asset{as}}
	versions := &viewVersions{memVersions: apptest.NewVersions(), applied: make(chan quire.ProjectChange, 4)}
	a := app.New(app.Config{Meta: meta, Versions: versions})
	owner := &quire.Principal{User: &quire.User{ID: "owner"}}
	publish := func(ctx context.Context) {
		t.Helper()
		h, err := a.Open(ctx, owner, quire.KindSkill, "pdf", quire.AccessWrite)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.PublishVersion(ctx, 1, app.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	req, answer := context.WithCancel(quire.InRequest(context.Background()))
	publish(req)
	select {
	case ch := <-versions.applied:
		t.Fatalf("the project's repository changed (%s) before the request answered", ch.Slug)
	case <-time.After(50 * time.Millisecond):
	}
	answer()
	select {
	case ch := <-versions.applied:
		if ch.Slug != as.Slug || ch.Commit == "" {
			t.Errorf("change %+v, want %s at its commit", ch, as.Slug)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the project's repository did not change after the request answered")
	}

	publish(context.Background())
	select {
	case <-versions.applied:
	case <-time.After(5 * time.Second):
		t.Fatal("a publish outside a request did not change the project's repository")
	}
	if err := a.ProjectReposIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
}
