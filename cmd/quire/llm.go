package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/quire/quire/llm"
	"github.com/quire/quire/valid"
)

// LLMFlags are the model providers prompt runs call (docs/runs.md). Keys
// come from the environment only, so they never show in a process list.
type LLMFlags struct {
	// Providers are NAME=BASE_URL, from --llm (repeatable) or QUIRE_LLM
	// (comma-separated).
	Providers   llmList
	Default     string
	Concurrency int
}

// llmList is a repeatable flag of NAME=BASE_URL.
type llmList []string

func (l *llmList) String() string { return strings.Join(*l, ",") }

func (l *llmList) Set(v string) error {
	*l = append(*l, splitList(v)...)
	return nil
}

// llmFlags adds the provider flags, each with its QUIRE_* variable.
func llmFlags(fs *flag.FlagSet, f *LLMFlags) error {
	if v := os.Getenv("QUIRE_LLM"); v != "" {
		f.Providers = splitList(v)
	}
	fs.Var(&f.Providers, "llm", "a model provider for prompt runs, NAME=BASE_URL of an OpenAI-compatible API (repeatable); its key is read from $QUIRE_LLM_<NAME>_API_KEY ($QUIRE_LLM, comma-separated)")
	if v := os.Getenv("QUIRE_LLM_DEFAULT"); v != "" {
		f.Default = v
	}
	fs.StringVar(&f.Default, "llm-default", f.Default, "the provider of a run whose prompt names none; the only one when one is given ($QUIRE_LLM_DEFAULT)")
	if v := os.Getenv("QUIRE_LLM_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("QUIRE_LLM_CONCURRENCY: %w", err)
		}
		f.Concurrency = n
	}
	fs.IntVar(&f.Concurrency, "llm-concurrency", f.Concurrency, "most calls in flight to each provider ($QUIRE_LLM_CONCURRENCY)")
	return nil
}

// config is the llm.Config of f, each key read with getenv from
// QUIRE_LLM_<NAME>_API_KEY (NAME upper-cased, - as _).
func (f *LLMFlags) config(getenv func(string) string) (llm.Config, error) {
	if f.Concurrency <= 0 {
		return llm.Config{}, fmt.Errorf("--llm-concurrency must be positive")
	}
	cfg := llm.Config{Default: f.Default, Concurrency: f.Concurrency}
	for _, spec := range f.Providers {
		name, base, ok := strings.Cut(spec, "=")
		if !ok || valid.ProviderName(name) != nil || !(strings.HasPrefix(base, "http://") || strings.HasPrefix(base, "https://")) {
			return llm.Config{}, fmt.Errorf("--llm %q: want NAME=BASE_URL, NAME of letters, digits, - and _, BASE_URL http:// or https://", spec)
		}
		env := "QUIRE_LLM_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_API_KEY"
		cfg.Providers = append(cfg.Providers, llm.Provider{Name: name, BaseURL: base, APIKey: getenv(env)})
	}
	if len(cfg.Providers) == 0 && f.Default != "" {
		return llm.Config{}, fmt.Errorf("--llm-default %q names no --llm provider", f.Default)
	}
	return cfg, nil
}
