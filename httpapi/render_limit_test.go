package httpapi_test

import (
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/render"
)

// TestRenderExpansionIs422 renders a template that nested sections over a
// list would expand to 800 MB: 422 naming the limit, not a 500, an
// out-of-memory kill or a hung request; the same prompt renders with a
// short list.
func TestRenderExpansionIs422(t *testing.T) {
	e := testenv.New(t)
	id := newPrompt(e, "bomb")
	publishTemplate(e, id, strings.Repeat("{{#l}}", 8)+"xxxxxxxx"+strings.Repeat("{{/l}}", 8))
	list := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	r := e.Do("POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"variables": obj{"l": list}})
	m := wantError(t, r, 422, "expands to more than")
	if got := get(t, m, "details", "limit"); got != float64(render.MaxOutput) {
		t.Errorf("limit %v, want %d", got, render.MaxOutput)
	}
	st, out := renderText(e, id, e.Admin, obj{"variables": obj{"l": []int{1}}})
	if st != 200 || out["rendered"] != "xxxxxxxx" {
		t.Fatalf("short list: %d %v", st, out)
	}
	// Through a payload too, and as a chat message.
	p := e.Must(201, "POST", "/v1/prompts/"+id+"/payloads", e.Admin, obj{"variables": obj{"l": list}}).JSON(t)
	r = e.Do("POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"payload_id": str(t, p, "payload", "id")})
	wantError(t, r, 422, "expands to more than")
	e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"messages": []obj{{"role": "user", "content": strings.Repeat("{{#l}}{{.}}", 9) + strings.Repeat("{{/l}}", 9)}}})
	e.Must(200, "POST", "/v1/prompts/"+id+"/versions/2/publish", e.Admin, nil)
	r = e.Do("POST", "/v1/prompts/"+id+"/render", e.Admin, obj{"variables": obj{"l": list}})
	wantError(t, r, 422, "expands to more than")
}
