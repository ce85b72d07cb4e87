package apiclient_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"testing"

	"github.com/quire/quire/httpapi"
	"github.com/quire/quire/internal/apiclient"
	"github.com/quire/quire/internal/testenv"
)

// TestDocumentCurrent fails when the API changed but the generated client
// was not regenerated from it.
func TestDocumentCurrent(t *testing.T) {
	served, err := httpapi.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	kept, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(kept), bytes.TrimSpace(served)) {
		t.Fatal("internal/apiclient is stale: the served OpenAPI document changed; run go generate ./internal/apiclient")
	}
}

// TestGeneratedClientSmoke drives a real server with the generated client:
// a project, a skill, a draft with a file, publishing, the live read by
// project and slug, and a typed error.
func TestGeneratedClientSmoke(t *testing.T) {
	e := testenv.New(t)
	ctx := context.Background()
	c, err := apiclient.NewClientWithResponses(e.URL, apiclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+e.Admin)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	name, slug := "Smoke", "smoke"
	pr, err := c.PostV1ProjectsWithResponse(ctx, &apiclient.PostV1ProjectsParams{}, apiclient.MetaCreateRequest{Name: name, Slug: &slug})
	if err != nil || pr.JSON201 == nil {
		t.Fatalf("create project: %v %s", err, body(pr.Body))
	}
	if pr.JSON201.Project.Slug != "smoke" || pr.HTTPResponse.Header.Get("Location") != "/v1/projects/"+pr.JSON201.Project.Id.String() {
		t.Fatalf("project %+v, Location %q", pr.JSON201.Project, pr.HTTPResponse.Header.Get("Location"))
	}
	skill := "pdf"
	sr, err := c.PostV1ProjectsProjectSkillsWithResponse(ctx, "smoke", &apiclient.PostV1ProjectsProjectSkillsParams{}, apiclient.MetaCreateRequest{Name: skill})
	if err != nil || sr.JSON201 == nil {
		t.Fatalf("create skill: %v %s", err, body(sr.Body))
	}
	dr, err := c.PostV1ProjectsProjectSkillsSlugVersionsWithResponse(ctx, "smoke", "pdf", &apiclient.PostV1ProjectsProjectSkillsSlugVersionsParams{}, apiclient.BaseRequest{})
	if err != nil || dr.JSON201 == nil {
		t.Fatalf("open draft: %v %s", err, body(dr.Body))
	}
	n := dr.JSON201.Version.Version
	fr, err := c.PostV1ProjectsProjectSkillsSlugVersionsVersionFilesWithResponse(ctx, "smoke", "pdf", n, &apiclient.PostV1ProjectsProjectSkillsSlugVersionsVersionFilesParams{},
		apiclient.FileRequest{FilePath: "SKILL.md", Content: testenv.SkillManifest("pdf")})
	if err != nil || fr.JSON200 == nil {
		t.Fatalf("write file: %v %s", err, body(fr.Body))
	}
	pub, err := c.PostV1ProjectsProjectSkillsSlugVersionsVersionPublishWithResponse(ctx, "smoke", "pdf", n, apiclient.PublishRequest{})
	if err != nil || pub.JSON200 == nil || pub.JSON200.Version.State != "published" {
		t.Fatalf("publish: %v %s", err, body(pub.Body))
	}
	live, err := c.GetV1ProjectsProjectSkillsSlugLiveWithResponse(ctx, "smoke", "pdf", &apiclient.GetV1ProjectsProjectSkillsSlugLiveParams{})
	if err != nil || live.JSON200 == nil {
		t.Fatalf("live: %v %s", err, body(live.Body))
	}
	if live.JSON200.Version.Version != n || len(live.JSON200.Files) != 1 || live.JSON200.Files[0].Path != "SKILL.md" || len(live.JSON200.Files[0].Sha256) != 64 {
		t.Fatalf("live %+v", live.JSON200)
	}
	etag := live.HTTPResponse.Header.Get("ETag")
	again, err := c.GetV1ProjectsProjectSkillsSlugLiveWithResponse(ctx, "smoke", "pdf", &apiclient.GetV1ProjectsProjectSkillsSlugLiveParams{IfNoneMatch: &etag})
	if err != nil || again.StatusCode() != http.StatusNotModified {
		t.Fatalf("live with If-None-Match: %v %d", err, again.StatusCode())
	}
	missing, err := c.GetV1ProjectsProjectWithResponse(ctx, "nope")
	if err != nil || missing.JSON404 == nil || missing.JSON404.Code != apiclient.NotFound || missing.JSON404.RequestId == "" {
		t.Fatalf("unknown project: %v %s", err, body(missing.Body))
	}
}

func body(b []byte) string { return string(b) }
