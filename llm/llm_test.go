package llm_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/llm"
)

// completion answers a chat completion after delay, counting the calls in
// flight at once.
func completion(delay time.Duration, inFlight, most *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "ok"}}}})
	}
}

// Concurrency bounds a provider's calls in flight; the others wait.
func TestConcurrencyPerProvider(t *testing.T) {
	var inFlight, most atomic.Int32
	srv := httptest.NewServer(completion(50*time.Millisecond, &inFlight, &most))
	defer srv.Close()
	c, err := llm.New(llm.Config{Providers: []llm.Provider{{Name: "p", BaseURL: srv.URL}}, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if _, err := c.Complete(context.Background(), "", quire.Completion{Model: "m", Messages: []quire.Message{{Role: "user", Content: "hi"}}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if most.Load() != 2 {
		t.Errorf("at most %d calls in flight, want 2", most.Load())
	}
}

// A provider's long error message is cut; a configuration naming an
// unknown default is refused.
func TestProviderErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": strings.Repeat("x", 5000)}})
	}))
	defer srv.Close()
	c, err := llm.New(llm.Config{Providers: []llm.Provider{{Name: "p", BaseURL: srv.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), "p", quire.Completion{Model: "m", Messages: []quire.Message{{Role: "user", Content: "hi"}}})
	d := quire.ErrorDetails(err)
	if quire.ErrorCode(err) != quire.EPROVIDER || d["status"] != 400 || len(d["message"].(string)) > 1100 {
		t.Errorf("err = %v, details %v", err, d)
	}
	if _, err := c.Complete(context.Background(), "p", quire.Completion{Model: "m", Params: json.RawMessage(`{"stream": true}`)}); quire.ErrorCode(err) != quire.EUNPROCESSABLE {
		t.Errorf("stream in model_params: %v", err)
	}
	if _, err := llm.New(llm.Config{Providers: []llm.Provider{{Name: "p", BaseURL: srv.URL}}, Default: "q"}); err == nil {
		t.Error("an unknown default was accepted")
	}
}
