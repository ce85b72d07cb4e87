package client_test

import (
	"context"
	"testing"

	"github.com/quire/quire/client"
	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/skillpack"
)

// TestClientReviewFlow opens a review through the project-scoped address
// ("project/slug"), comments, resolves, approves, reads it back, closes
// and reopens it, and publishes the draft.
func TestClientReviewFlow(t *testing.T) {
	begin(t)
	e := testenv.New(t)
	ctx := context.Background()
	c, _ := newClient(t, e, e.Admin)
	must(c.CreateProject(ctx, client.MetaInput{Name: client.String("Docs")}))
	sk := must(c.CreateSkill(ctx, "docs", client.MetaInput{Name: client.String("PDF tools")}))
	must(c.CreateSkillVersion(ctx, sk.ID, client.Base{}))
	must(c.PutFile(ctx, sk.ID, 1, "SKILL.md", []byte(testenv.SkillManifest("pdf-tools")), client.FileOptions{}))
	must(c.PublishSkillVersion(ctx, sk.ID, 1))
	must(c.CreateSkillVersion(ctx, sk.ID, client.Base{}))
	must(c.PutFile(ctx, sk.ID, 2, "notes.txt", []byte("one\ntwo\n"), client.FileOptions{}))

	const ref = "docs/pdf-tools"
	rv := must(c.OpenReview(ctx, client.KindSkill, ref, 2, client.ReviewInput{Title: client.String("Add notes")}))
	if rv.Review.Number != 1 || rv.Review.Title != "Add notes" || len(rv.Files) != 1 || rv.Files[0].Path != "notes.txt" {
		t.Fatalf("opened %+v", rv)
	}
	_, err := c.OpenReview(ctx, client.KindSkill, ref, 2, client.ReviewInput{Title: client.String("again")})
	apiError(t, err, 409, "conflict")

	cm := must(c.CommentReview(ctx, client.KindSkill, ref, 1, client.CommentInput{Body: client.String("why two?"), Path: "notes.txt", Line: 2}))
	_, err = c.CommentReview(ctx, client.KindSkill, ref, 1, client.CommentInput{Body: client.String("x"), Path: "notes.txt", Line: 9})
	apiError(t, err, 422, "unprocessable")
	done := true
	if r := must(c.UpdateComment(ctx, client.KindSkill, sk.ID, 1, cm.ID, client.CommentPatch{Resolved: &done})); !r.Resolved {
		t.Fatalf("resolved %+v", r)
	}
	must(c.RequestChanges(ctx, client.KindSkill, ref, 1, "shorter please"))
	if v := must(c.ApproveReview(ctx, client.KindSkill, ref, 1, "")); v.Kind != "approve" {
		t.Fatalf("verdict %+v", v)
	}
	got := must(c.Review(ctx, client.KindSkill, ref, 1))
	if len(got.Comments) != 1 || !got.Comments[0].Resolved || len(got.Verdicts) != 1 || !got.Mergeable.OK {
		t.Fatalf("review %+v", got)
	}
	if pg := must(c.Reviews(ctx, client.KindSkill, sk.ID, "open", client.ListOptions{})); len(pg.Items) != 1 {
		t.Fatalf("open reviews %+v", pg)
	}
	if r := must(c.CloseReview(ctx, client.KindSkill, ref, 1)); r.Review.State != "closed" {
		t.Fatalf("closed %+v", r.Review)
	}
	if r := must(c.ReopenReview(ctx, client.KindSkill, ref, 1)); r.Review.State != "open" {
		t.Fatalf("reopened %+v", r.Review)
	}
	must(c.PublishSkillVersion(ctx, ref, 2))
	if r := must(c.Review(ctx, client.KindSkill, sk.ID, 1)); r.Review.State != "merged" {
		t.Fatalf("after publish %+v", r.Review)
	}
	_, err = c.Review(ctx, client.KindSkill, ref, 7)
	apiError(t, err, 404, "not_found")

	live := must(c.LiveSkill(ctx, ref, ""))
	if live.Version.Number != 2 || len(live.Files) != 2 {
		t.Fatalf("live %+v", live)
	}
	if again := must(c.LiveSkill(ctx, sk.ID, live.Version.Commit)); again != nil {
		t.Fatal("If-None-Match with the live commit was not a 304")
	}
}

// TestClientLabels moves a label and reads through it: the archive of a
// skill by label, and a prompt rendered by label on the server and by
// the prompt cache.
func TestClientLabels(t *testing.T) {
	begin(t)
	e := testenv.New(t)
	ctx := context.Background()
	c, _ := newClient(t, e, e.Admin)
	must(c.CreateProject(ctx, client.MetaInput{Name: client.String("Docs")}))
	sk := must(c.CreateSkill(ctx, "docs", client.MetaInput{Name: client.String("PDF tools")}))
	for n := 1; n <= 2; n++ {
		must(c.CreateSkillVersion(ctx, sk.ID, client.Base{}))
		must(c.PutFile(ctx, sk.ID, n, "SKILL.md", []byte(testenv.SkillManifest("pdf-tools")+itoa(n)), client.FileOptions{}))
		must(c.PublishSkillVersion(ctx, sk.ID, n))
	}
	const ref = "docs/pdf-tools"
	if l := must(c.SetLabel(ctx, client.KindSkill, ref, "staging", client.LabelInput{Version: 1})); l.Version != 1 {
		t.Fatalf("label %+v", l)
	}
	ls := must(c.Labels(ctx, client.KindSkill, sk.ID))
	if len(ls) != 1 || ls[0].Name != "staging" || ls[0].Version != 1 {
		t.Fatalf("labels %+v", ls)
	}
	ar := must(c.SkillArchive(ctx, ref, "staging", skillpack.Zip))
	if ar.Version != 1 {
		t.Fatalf("archive by label: version %d", ar.Version)
	}
	_, err := c.SkillArchive(ctx, sk.ID, "nope", skillpack.Zip)
	apiError(t, err, 404, "not_found")

	must(c.SetLabel(ctx, client.KindSkill, ref, "staging", client.LabelInput{Version: 2}))
	h := must(c.LabelHistory(ctx, client.KindSkill, ref, "staging"))
	if len(h) != 2 || h[0].Version != 2 || h[0].FromVersion != 1 || h[1].Version != 1 {
		t.Fatalf("history %+v", h)
	}
	_, err = c.SetLabel(ctx, client.KindSkill, ref, "live", client.LabelInput{Version: 1})
	apiError(t, err, 422, "unprocessable")
	ok(c.DeleteLabel(ctx, client.KindSkill, ref, "staging"))
	if ls := must(c.Labels(ctx, client.KindSkill, ref)); len(ls) != 0 {
		t.Fatalf("labels after delete %+v", ls)
	}

	// Prompts: render by label, on the server and in the cache.
	pr := must(c.CreatePrompt(ctx, "docs", client.MetaInput{Name: client.String("Greeting")}))
	for n, tpl := range []string{"Hello {{name}}", "Hi {{name}}"} {
		must(c.CreatePromptVersion(ctx, pr.ID, client.PromptVersionInput{Template: client.String(tpl)}))
		must(c.PublishPromptVersion(ctx, pr.ID, n+1))
	}
	must(c.SetLabel(ctx, client.KindPrompt, "docs/greeting", "stable", client.LabelInput{Version: 1}))
	r := must(c.RenderPrompt(ctx, "docs/greeting", client.RenderInput{Label: "stable", Variables: map[string]any{"name": "Ann"}}))
	if *r.Text != "Hello Ann" || r.Version != 1 {
		t.Fatalf("server render by label %q v%d", *r.Text, r.Version)
	}
	pc := c.Prompts()
	defer pc.Close()
	cr := must(pc.Render(ctx, "docs/greeting", map[string]any{"name": "Bo"}, client.Label("stable")))
	if *cr.Text != "Hello Bo" || cr.Version != 1 {
		t.Fatalf("cache render by label %q v%d", *cr.Text, cr.Version)
	}
	if v := must(pc.Get(ctx, "docs/greeting", client.Label("live"))); v.Number != 2 {
		t.Fatalf("label live: version %d", v.Number)
	}
	_, err = pc.Get(ctx, "docs/greeting", client.Label("missing"))
	if !client.IsNotFound(err) {
		t.Fatalf("missing label: %v", err)
	}
}
