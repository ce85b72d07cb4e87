package httpapi_test

import (
	"testing"
)

// TestAnonymousRender: without a credential, a public project's prompt
// renders at its published versions only (live, a number, a label naming
// one); drafts and archived versions are 404 as for every other anonymous
// read, payloads ask to sign in, and a private or missing prompt is 401.
func TestAnonymousRender(t *testing.T) {
	e := publicFixture(t)
	e.Must(200, "PATCH", "/v1/projects/pub", e.Admin, map[string]string{"visibility": "public"})
	// Version 3 published then archived; label "stable" at 1, "next" at
	// the archived 3.
	e.Must(200, "POST", "/v1/prompts/pub-prompt/versions/2/publish", e.Admin, nil)
	e.Must(201, "POST", "/v1/prompts/pub-prompt/versions", e.Admin, map[string]string{"template": "Three {{name}}"})
	e.Must(200, "POST", "/v1/prompts/pub-prompt/versions/3/publish", e.Admin, nil)
	e.Must(200, "POST", "/v1/prompts/pub-prompt/versions/2/promote", e.Admin, nil)
	e.Must(200, "PUT", "/v1/prompts/pub-prompt/labels/stable", e.Admin, map[string]any{"version": 1})
	e.Must(200, "PUT", "/v1/prompts/pub-prompt/labels/next", e.Admin, map[string]any{"version": 3})
	e.Must(200, "POST", "/v1/prompts/pub-prompt/versions/3/archive", e.Admin, nil)
	e.Must(201, "POST", "/v1/prompts/pub-prompt/versions", e.Admin, map[string]string{"template": "Draft {{name}}"})
	pay := e.Must(201, "POST", "/v1/prompts/pub-prompt/payloads", e.Admin, map[string]any{"name": "p", "variables": map[string]any{"name": "Pay"}}).JSON(t)
	payID := get(t, pay, "payload", "id").(string)

	vars := map[string]any{"name": "Ann"}
	for _, c := range []struct {
		name, path string
		body       map[string]any
		status     int
		text       string
	}{
		{"live", "/v1/prompts/pub-prompt/render", map[string]any{"variables": vars}, 200, "Draft Ann"},
		{"project-scoped", "/v1/projects/pub/prompts/pub-prompt/render", map[string]any{"variables": vars}, 200, "Draft Ann"},
		{"published version", "/v1/prompts/pub-prompt/render", map[string]any{"variables": vars, "version": 1}, 200, "Hello Ann"},
		{"label at a published version", "/v1/prompts/pub-prompt/render", map[string]any{"variables": vars, "label": "stable"}, 200, "Hello Ann"},
		{"label live", "/v1/prompts/pub-prompt/render", map[string]any{"variables": vars, "label": "live"}, 200, "Draft Ann"},
		{"draft", "/v1/prompts/pub-prompt/render", map[string]any{"variables": vars, "version": 4}, 404, ""},
		{"archived", "/v1/prompts/pub-prompt/render", map[string]any{"variables": vars, "version": 3}, 404, ""},
		{"label at an archived version", "/v1/prompts/pub-prompt/render", map[string]any{"variables": vars, "label": "next"}, 404, ""},
		{"missing label", "/v1/prompts/pub-prompt/render", map[string]any{"variables": vars, "label": "nope"}, 404, ""},
		{"no such version", "/v1/prompts/pub-prompt/render", map[string]any{"variables": vars, "version": 9}, 404, ""},
		{"payload", "/v1/prompts/pub-prompt/render", map[string]any{"payload_id": payID}, 401, ""},
		{"private", "/v1/prompts/priv-prompt/render", map[string]any{"variables": vars}, 401, ""},
		{"private, project-scoped", "/v1/projects/priv/prompts/priv-prompt/render", map[string]any{"variables": vars}, 401, ""},
		{"missing", "/v1/prompts/no-such/render", map[string]any{"variables": vars}, 401, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.Do("POST", c.path, "", c.body)
			if r.Status != c.status {
				t.Fatalf("%d, want %d\n%s", r.Status, c.status, r.Body)
			}
			if c.text != "" && get(t, r.JSON(t), "rendered") != c.text {
				t.Fatalf("rendered %s", r.Body)
			}
		})
	}
	// A wrong token is still 401, and members still render drafts.
	e.Must(401, "POST", "/v1/prompts/pub-prompt/render", "sess_wrong", map[string]any{"variables": vars})
	if r := e.Must(200, "POST", "/v1/prompts/pub-prompt/render", e.Admin, map[string]any{"variables": vars, "version": 4}); get(t, r.JSON(t), "rendered") != "Draft Ann" {
		t.Fatalf("member render of a draft: %s", r.Body)
	}
	// Private again: the render asks to sign in.
	e.Must(200, "PATCH", "/v1/projects/pub", e.Admin, map[string]string{"visibility": "private"})
	e.Must(401, "POST", "/v1/prompts/pub-prompt/render", "", map[string]any{"variables": vars})
}
