package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/app/apptest"
)

// world is a project of an owner, an editor, an editor "alice" and a
// viewer on in-memory stores that keep reviews and events, with skill
// "pdf": version 1 published and live, version 2 a draft of alice's that
// passes the publish check. Every kind of caller is at hand.
type world struct {
	app      *app.App
	meta     *apptest.Meta
	versions *apptest.Reviews
	events   *apptest.Events
	project  *quire.Project
	skill    *quire.Asset
	prompt   *quire.Asset

	owner, editor, alice, viewer, admin *quire.Principal
	readKey, viewerWriteKey, otherKey   *quire.Principal
	stranger, anon                      *quire.Principal
}

// skillMD is a SKILL.md that passes the publish check of skill "pdf".
const skillMD = "---\nname: pdf\ndescription: Reads PDFs.\n---\nRead it.\n"

// worldOpts shape a world: a public project, a review policy.
type worldOpts struct {
	public bool
	policy *quire.ReviewPolicy
}

func newWorld(t *testing.T, o worldOpts) *world {
	t.Helper()
	meta, versions, events := apptest.NewMeta(), apptest.NewVersions(), apptest.NewEvents()
	w := &world{meta: meta, versions: apptest.NewReviews(versions), events: events}
	user := func(id string, role quire.UserRole) *quire.Principal {
		u := meta.AddUser(&quire.User{ID: id, Email: id + "@example.com", Name: id, Role: role})
		c := *u
		return &quire.Principal{User: &c}
	}
	w.owner, w.editor, w.alice, w.viewer = user("owner", ""), user("editor", ""), user("alice", ""), user("viewer", "")
	w.admin, w.stranger, w.anon = user("admin", quire.RoleAdmin), user("stranger", ""), quire.Anonymous()
	w.project = meta.AddProject(&quire.Project{Slug: "demo", ReviewPolicy: o.policy, Members: []quire.Member{
		{UserID: "owner", Role: quire.ProjectOwner}, {UserID: "editor", Role: quire.ProjectEditor},
		{UserID: "alice", Role: quire.ProjectEditor}, {UserID: "viewer", Role: quire.ProjectViewer},
	}})
	if o.public {
		w.project.Visibility = quire.Public
	}
	key := func(of *quire.Principal, scope quire.Scope, projects ...string) *quire.Principal {
		return &quire.Principal{User: of.User, Key: &quire.APIKey{ID: "key-" + of.User.ID + "-" + string(scope), Name: string(scope), Scope: scope, ProjectIDs: projects}}
	}
	w.readKey = key(w.editor, quire.ScopeRead)
	w.viewerWriteKey = key(w.viewer, quire.ScopeWrite)
	w.otherKey = key(w.editor, quire.ScopeWrite, "another-project")
	w.skill = meta.AddAsset(&quire.Asset{ProjectID: w.project.ID, Kind: quire.KindSkill, Slug: "pdf"})
	w.prompt = meta.AddAsset(&quire.Asset{ProjectID: w.project.ID, Kind: quire.KindPrompt, Slug: "greet"})
	versions.AddVersion(w.skill, 1, quire.StatePublished, quire.FileContent{Path: "SKILL.md", Content: []byte(skillMD)})
	ctx := context.Background()
	if _, err := versions.CreateVersion(ctx, w.alice.Actor(), w.skill, quire.Base{Live: true}, []quire.FileContent{{Path: "a.txt", Content: []byte("one\ntwo\n")}}); err != nil {
		t.Fatal(err)
	}
	w.app = app.New(app.Config{Meta: meta, Versions: w.versions, Events: app.EventsConfig{Log: events}})
	t.Cleanup(w.app.StopEvents)
	return w
}

// open opens the skill for p with read access, as a door's read route
// does, failing the test when p may not.
func (w *world) open(t *testing.T, p *quire.Principal) *app.Handle {
	t.Helper()
	h, err := w.app.Open(context.Background(), p, quire.KindSkill, "pdf", quire.AccessRead)
	if err != nil {
		t.Fatalf("open pdf as %s: %v", p.User.ID, err)
	}
	return h
}

// user is the session of the world's user id.
func (w *world) user(id string) *quire.Principal {
	for _, p := range []*quire.Principal{w.owner, w.editor, w.alice, w.viewer, w.admin, w.stranger} {
		if p.User.ID == id {
			return p
		}
	}
	panic("no user " + id)
}

// state is what the version store holds of the skill, for comparing
// before and after a write: each version's number, state, liveness and
// commit.
func (w *world) state(t *testing.T) []string {
	t.Helper()
	vs, err := w.versions.Versions(context.Background(), w.skill)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%d %s live=%t %.8s", v.Number, v.State, v.Live, v.Commit)
	}
	return out
}

// stateNoCommits is state without the commits, for a table to name.
func (w *world) stateNoCommits(t *testing.T) []string {
	t.Helper()
	out := w.state(t)
	for i, s := range out {
		out[i] = s[:strings.LastIndexByte(s, ' ')]
	}
	return out
}

// types lists the types of evs, in order.
func types(evs []*quire.Event) []quire.EventType {
	out := []quire.EventType{}
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

// code is err's code, "" for nil.
func code(err error) quire.Code {
	if err == nil {
		return ""
	}
	return quire.ErrorCode(err)
}
