package httpapi_test

import (
	"strings"
	"testing"

	"github.com/quire/quire/internal/testenv"
)

// TestPayloadAssertions: a payload keeps the assertions it is given,
// every kind; a replacement without assertions keeps them, an empty list
// removes them.
func TestPayloadAssertions(t *testing.T) {
	e := testenv.New(t)
	pid := e.CreateProject(e.Admin, "asrt")
	e.CreatePrompt(e.Admin, pid, "pp")
	all := []obj{
		{"type": "contains", "value": "hello"},
		{"type": "not_contains", "value": "sorry"},
		{"type": "equals", "value": ""},
		{"type": "regex", "value": `^\w+$`},
		{"type": "max_length", "value": 200},
		{"type": "json_valid"},
		{"type": "json_schema", "schema": obj{"type": "object", "required": []string{"a"}}},
		{"type": "llm_judge", "rubric": "Is it polite?", "provider": "local", "model": "judge"},
	}
	r := e.Must(201, "POST", "/v1/prompts/pp/payloads", e.Admin, obj{"variables": obj{}, "assertions": all}).JSON(t)
	p := r["payload"].(map[string]any)
	got, _ := p["assertions"].([]any)
	if len(got) != len(all) {
		t.Fatalf("payload assertions = %v", p["assertions"])
	}
	if a := got[4].(map[string]any); a["type"] != "max_length" || a["value"] != 200.0 {
		t.Errorf("max_length = %v", a)
	}
	if a := got[7].(map[string]any); a["rubric"] != "Is it polite?" || a["model"] != "judge" {
		t.Errorf("llm_judge = %v", a)
	}
	path := "/v1/prompts/pp/payloads/" + p["id"].(string)
	r = e.Must(200, "PUT", path, e.Admin, obj{"variables": obj{"x": 1}}).JSON(t)
	if got, _ := r["payload"].(map[string]any)["assertions"].([]any); len(got) != len(all) {
		t.Errorf("a replacement without assertions dropped them: %v", r)
	}
	r = e.Must(200, "PUT", path, e.Admin, obj{"variables": obj{"x": 1}, "assertions": []obj{}}).JSON(t)
	if _, ok := r["payload"].(map[string]any)["assertions"]; ok {
		t.Errorf("an empty list kept assertions: %v", r)
	}
}

// badAssertions are malformed assertions, each refused with the JSON
// pointer of what is wrong.
var badAssertions = []struct {
	name    string
	status  int
	body    any // the assertions
	pointer string
}{
	{"not an array", 400, obj{"type": "contains"}, ""},
	{"unknown field", 400, []obj{{"type": "contains", "value": "a", "weight": 2}}, ""},
	{"no type", 422, []obj{{"value": "a"}}, "/assertions/0/type"},
	{"unknown type", 422, []obj{{"type": "contains", "value": "a"}, {"type": "similar", "value": "a"}}, "/assertions/1/type"},
	{"contains without value", 422, []obj{{"type": "contains"}}, "/assertions/0/value"},
	{"contains a number", 422, []obj{{"type": "contains", "value": 3}}, "/assertions/0/value"},
	{"contains empty", 422, []obj{{"type": "contains", "value": ""}}, "/assertions/0/value"},
	{"field of another kind", 422, []obj{{"type": "contains", "value": "a", "rubric": "x"}}, "/assertions/0/rubric"},
	{"bad regex", 422, []obj{{"type": "json_valid"}, {"type": "regex", "value": "a("}}, "/assertions/1/value"},
	{"max_length negative", 422, []obj{{"type": "max_length", "value": -1}}, "/assertions/0/value"},
	{"max_length fraction", 422, []obj{{"type": "max_length", "value": 1.5}}, "/assertions/0/value"},
	{"max_length string", 422, []obj{{"type": "max_length", "value": "10"}}, "/assertions/0/value"},
	{"json_valid with value", 422, []obj{{"type": "json_valid", "value": "x"}}, "/assertions/0/value"},
	{"json_schema without schema", 422, []obj{{"type": "json_schema"}}, "/assertions/0/schema"},
	{"json_schema not an object", 422, []obj{{"type": "json_schema", "schema": []int{1}}}, "/assertions/0/schema"},
	{"json_schema invalid", 422, []obj{{"type": "json_schema", "schema": obj{"type": 12}}}, "/assertions/0/schema"},
	{"json_schema remote ref", 422, []obj{{"type": "json_schema", "schema": obj{"$ref": "https://example.com/s.json"}}}, "/assertions/0/schema"},
	{"judge without rubric", 422, []obj{{"type": "llm_judge"}}, "/assertions/0/rubric"},
	{"judge empty rubric", 422, []obj{{"type": "llm_judge", "rubric": ""}}, "/assertions/0/rubric"},
	{"judge model too long", 422, []obj{{"type": "llm_judge", "rubric": "r", "model": strings.Repeat("m", 300)}}, "/assertions/0/model"},
	{"too many", 422, func() []obj {
		var out []obj
		for range 33 {
			out = append(out, obj{"type": "json_valid"})
		}
		return out
	}(), "/assertions"},
}

func TestPayloadAssertionsBadInput(t *testing.T) {
	e := testenv.New(t)
	pid := e.CreateProject(e.Admin, "asrt")
	e.CreatePrompt(e.Admin, pid, "pp")
	id := e.Must(201, "POST", "/v1/prompts/pp/payloads", e.Admin, obj{"variables": obj{}}).JSON(t)["payload"].(map[string]any)["id"].(string)
	for _, tc := range badAssertions {
		for _, w := range []struct{ method, path string }{{"POST", "/v1/prompts/pp/payloads"}, {"PUT", "/v1/prompts/pp/payloads/" + id}} {
			r := e.Do(w.method, w.path, e.Admin, obj{"variables": obj{}, "assertions": tc.body})
			if r.Status != tc.status {
				t.Errorf("%s %s: %d %s, want %d", tc.name, w.method, r.Status, r.Body, tc.status)
				continue
			}
			if tc.pointer == "" {
				continue
			}
			d, _ := r.JSON(t)["details"].(map[string]any)
			if d["pointer"] != tc.pointer || !strings.Contains(r.JSON(t)["error"].(string), tc.pointer) {
				t.Errorf("%s %s: %s, want pointer %s", tc.name, w.method, r.Body, tc.pointer)
			}
		}
	}
	// Nothing refused was stored.
	if pl := e.Must(200, "GET", "/v1/prompts/pp/payloads", e.Admin, nil).JSON(t)["payloads"].([]any); len(pl) != 1 || strings.Contains(string(e.Must(200, "GET", "/v1/prompts/pp/payloads", e.Admin, nil).Body), "assertions") {
		t.Errorf("payloads after refusals: %v", pl)
	}
}
