package quire_test

import (
	"strings"
	"testing"

	"github.com/quire/quire"
)

// config.json's optional provider is read and written back, so an edit
// through the API keeps the provider a push set.
func TestPromptConfigProvider(t *testing.T) {
	c, err := quire.ParsePromptFiles(map[string][]byte{
		"prompt.txt":  []byte("Hi {{name}}"),
		"config.json": []byte(`{"model": "m", "model_params": {"temperature": 0.5}, "provider": "local"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider != "local" || c.Model != "m" {
		t.Fatalf("parsed %+v", c)
	}
	files, err := quire.PromptFiles(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Path == quire.PromptConfigFile && !strings.Contains(string(f.Content), `"provider": "local"`) {
			t.Errorf("config.json written as %s", f.Content)
		}
	}
	c.Provider = ""
	files, _ = quire.PromptFiles(c)
	for _, f := range files {
		if f.Path == quire.PromptConfigFile && strings.Contains(string(f.Content), "provider") {
			t.Errorf("config.json without a provider written as %s", f.Content)
		}
	}
}
