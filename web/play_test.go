package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// A prompt with a typed variables schema gets a typed form; a sample
// payload fills it; the values render and are saved as a new payload the
// API lists.
func TestPlaygroundSchemaAndPayloads(t *testing.T) {
	f := newFixture(t)
	id := f.e.CreatePrompt(f.e.Admin, f.projectID, "order")
	f.e.Must(201, "POST", "/v1/prompts/"+id+"/versions", f.e.Admin, map[string]any{
		"template": "{{customer}} ordered {{count}} ({{tier}}){{#rush}} fast{{/rush}}",
		"variables_schema": map[string]any{
			"type":     "object",
			"required": []string{"customer", "count"},
			"properties": map[string]any{
				"customer": map[string]any{"type": "string", "description": "who <orders>"},
				"count":    map[string]any{"type": "integer"},
				"tier":     map[string]any{"type": "string", "enum": []string{"gold", "silver"}},
				"rush":     map[string]any{"type": "boolean"},
			},
		},
	})
	pl := f.e.Must(201, "POST", "/v1/prompts/"+id+"/payloads", f.e.Admin, map[string]any{"name": "Ada's order", "variables": map[string]any{"customer": "Ada", "count": 3, "tier": "gold", "rush": true, "note": "x"}}).JSON(t)
	plID := pl["payload"].(map[string]any)["id"].(string)
	if plID == "" {
		t.Fatalf("payload: %v", pl)
	}

	b := newBrowser(t, f.e.URL)
	tok := b.signIn(testenv.AdminEmail, testenv.AdminPassword)
	play := "/ui/p/demo/prompts/order/play"
	form := b.get(play + "?version=1")
	wantPage(t, form, 200, "From the version's variables schema.",
		`<input id="var-count" name="var.count" type="number" step="any" value="" required>`,
		`<select id="var-tier" name="var.tier"><option value="">(none)</option><option>gold</option><option>silver</option></select>`,
		`<input id="var-rush" name="var.rush" type="checkbox" value="true">`,
		"who &lt;orders&gt;", "Ada&#39;s order")
	filled := b.get(play + "?version=1&payload=" + plID)
	wantPage(t, filled, 200, `name="var.customer" type="text" value="Ada"`, `name="var.count" type="number" step="any" value="3"`, "<option selected>gold</option>", `value="true" checked`, "&#34;note&#34;: &#34;x&#34;")

	r := b.do("POST", play+"?version=1", url.Values{"csrf": {tok}, "action": {"render"}, "var.customer": {"Bo"}, "var.count": {"2"}, "var.tier": {"silver"}, "var.rush": {"false", "true"}})
	wantPage(t, r, 200, `id="rendered">Bo ordered 2 (silver) fast</pre>`)
	wantPage(t, b.do("POST", play+"?version=1", url.Values{"csrf": {tok}, "var.customer": {"Bo"}, "var.count": {"two"}}), 400, "count must be a number")

	r = b.do("POST", play+"?version=1", url.Values{"csrf": {tok}, "action": {"save"}, "payload_name": {"Bo's"}, "var.customer": {"Bo"}, "var.count": {"2"}, "var.rush": {"false"}})
	wantPage(t, r, 200, "Saved the sample “Bo&#39;s”.")
	list := string(f.e.Must(200, "GET", "/v1/prompts/"+id+"/payloads", f.e.Admin, nil).Body)
	if !strings.Contains(list, `"Bo's"`) || !strings.Contains(list, `{"count":2,"customer":"Bo","rush":false}`) {
		t.Errorf("payloads after save: %s", list)
	}
}
