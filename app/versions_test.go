package app

import (
	"testing"

	"github.com/quire/quire"
)

func TestPrecondition(t *testing.T) {
	for in, want := range map[string]string{"": "", "*": "", "abc": "abc"} {
		if got := precondition(in); got != want {
			t.Errorf("precondition(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCompilePromptTemplates(t *testing.T) {
	good, bad := "Hello {{name}}", "Hello {{#open}}"
	if _, err := compile(&quire.PromptContent{Template: &good}); err != nil {
		t.Fatalf("good template: %v", err)
	}
	if _, err := compile(&quire.PromptContent{Template: &bad}); err == nil {
		t.Fatal("unclosed section parsed")
	}
	_, err := compile(&quire.PromptContent{Messages: []quire.Message{{Content: good}, {Content: bad}}})
	if quire.ErrorCode(err) != quire.EUNPROCESSABLE || quire.ErrorMessage(err)[:12] != "messages[1]:" {
		t.Fatalf("bad message: %v", err)
	}
}
