package main

import (
	"io"
	"strings"
	"testing"
)

// --llm and QUIRE_LLM name providers; each key comes from its own
// variable, never from a flag.
func TestLLMFlags(t *testing.T) {
	t.Setenv("QUIRE_LLM", "openai=https://api.openai.com/v1, local-vllm=http://127.0.0.1:8000/v1")
	t.Setenv("QUIRE_LLM_LOCAL_VLLM_API_KEY", "sk-local")
	m := NewMain(io.Discard)
	if err := m.ParseFlags([]string{"--llm", "ollama=http://127.0.0.1:11434/v1", "--llm-default", "openai", "--llm-concurrency", "2"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := m.Config.LLM.config(func(k string) string {
		return map[string]string{"QUIRE_LLM_OPENAI_API_KEY": "sk-openai", "QUIRE_LLM_LOCAL_VLLM_API_KEY": "sk-local"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Providers) != 3 || cfg.Default != "openai" || cfg.Concurrency != 2 {
		t.Fatalf("config = %+v", cfg)
	}
	want := map[string]string{"openai": "sk-openai", "local-vllm": "sk-local", "ollama": ""}
	for _, p := range cfg.Providers {
		if k, ok := want[p.Name]; !ok || p.APIKey != k {
			t.Errorf("provider %s has key %q", p.Name, p.APIKey)
		}
	}
	if NewMain(io.Discard).Config.LLM.Concurrency != 4 {
		t.Error("default concurrency is not 4")
	}
	for _, bad := range []LLMFlags{
		{Providers: llmList{"nourl"}, Concurrency: 4},
		{Providers: llmList{"x=ftp://host"}, Concurrency: 4},
		{Providers: llmList{"bad name=http://h"}, Concurrency: 4},
		{Providers: llmList{"a=http://h"}, Concurrency: 0},
		{Default: "ghost", Concurrency: 4},
	} {
		if _, err := bad.config(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "llm") {
			t.Errorf("%+v: err = %v", bad, err)
		}
	}
}
