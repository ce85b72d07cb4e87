package httpapi_test

import (
	"strings"
	"testing"
)

// A version's provider is set through the API like its model: written to
// config.json (which the version's view reads), shown on the version, used by its runs. Any name of a
// provider's form is taken, configured or not (the operator's providers
// change without the prompts); a run naming one that is not configured
// is 409 no_provider. "" removes it, and a name of another form is 400.
func TestRunProviderFromVersionEdit(t *testing.T) {
	e, local, other := runEnv(t)
	vars := map[string]any{"variables": map[string]string{"name": "Ann"}}

	v := e.Must(201, "POST", "/v1/prompts/greet/versions", e.Admin, map[string]any{"provider": "other"}).JSON(t)["version"].(map[string]any)
	if v["provider"] != "other" || v["model"] != "gpt-test" || v["version"] != 2.0 {
		t.Fatalf("created version: %v", v)
	}
	if g := e.Must(200, "GET", "/v1/prompts/greet/versions/2", e.Admin, nil).JSON(t)["version"].(map[string]any); g["provider"] != "other" {
		t.Errorf("read back: %v", g)
	}
	local.reset(nil)
	r := e.Must(200, "POST", "/v1/prompts/greet/versions/2/run", e.Admin, vars)
	if run := r.JSON(t)["run"].(map[string]any); run["provider"] != "other" || len(other.got()) != 1 || len(local.got()) != 0 {
		t.Errorf("run of a version naming other: %s; local got %d, other %d", r.Body, len(local.got()), len(other.got()))
	}
	// Not configured here, but of a provider's form: kept; its run is 409.
	v = e.Must(200, "PATCH", "/v1/prompts/greet/versions/2", e.Admin, map[string]any{"provider": "azure-eu_2"}).JSON(t)["version"].(map[string]any)
	if v["provider"] != "azure-eu_2" {
		t.Errorf("patched version: %v", v)
	}
	r = e.Must(409, "POST", "/v1/prompts/greet/versions/2/run", e.Admin, vars)
	if m := r.JSON(t); m["code"] != "no_provider" || !strings.Contains(string(r.Body), `\"azure-eu_2\" is not configured`) {
		t.Errorf("run naming an unconfigured provider: %s", r.Body)
	}

	// Other fields leave it alone; "" removes it (the default answers).
	v = e.Must(200, "PATCH", "/v1/prompts/greet/versions/2", e.Admin, map[string]any{"model": "gpt-next"}).JSON(t)["version"].(map[string]any)
	if v["provider"] != "azure-eu_2" || v["model"] != "gpt-next" {
		t.Errorf("a model edit changed the provider: %v", v)
	}
	v = e.Must(200, "PATCH", "/v1/prompts/greet/versions/2", e.Admin, map[string]any{"provider": ""}).JSON(t)["version"].(map[string]any)
	if _, ok := v["provider"]; ok {
		t.Errorf("provider after removing it: %v", v)
	}
	if run := e.Must(200, "POST", "/v1/prompts/greet/versions/2/run", e.Admin, vars).JSON(t)["run"].(map[string]any); run["provider"] != "local" {
		t.Errorf("run after removing the provider: %v", run)
	}

	for _, bad := range []any{"has space", "-dash-first", "a/b", strings.Repeat("p", 64), 7, "ü"} {
		r := e.Must(400, "PATCH", "/v1/prompts/greet/versions/2", e.Admin, map[string]any{"provider": bad})
		if m := r.JSON(t); m["code"] != "invalid" {
			t.Errorf("provider %v: %s", bad, r.Body)
		}
	}
	if v := e.Must(200, "GET", "/v1/prompts/greet/versions/2", e.Admin, nil).JSON(t)["version"].(map[string]any); v["provider"] != nil {
		t.Errorf("a refused edit changed the provider: %v", v)
	}

}
