package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/quire/quire/internal/bench"
	"github.com/quire/quire/llm"
)

// evalsSection measures an evaluation of 200 payloads × 2 versions (the
// draft against the live version: 400 calls) against the same 400 calls
// made directly with openai-go at the same concurrency, both to one local
// OpenAI-compatible server that answers after a fixed delay (a model's
// latency); then the same evaluation again, every output cached. Goals:
// at most 1.2x the direct calls' wall time; the cached re-evaluation
// under 1 s. Then the review page of a prompt review with an evaluation
// of 50 cases (reviewPage).
func evalsSection(ctx context.Context, c *config, r *report) error {
	const payloads, concurrency = 200, 4
	delay := 20 * time.Millisecond
	if c.upserts < 50 { // -quick
		delay = time.Millisecond
	}
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var body struct {
			Model    string              `json:"model"`
			Messages []map[string]string `json:"messages"`
		}
		if json.Unmarshal(b, &body) != nil || len(body.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		time.Sleep(delay)
		out := "echo: " + body.Messages[len(body.Messages)-1]["content"]
		if strings.HasPrefix(body.Messages[len(body.Messages)-1]["content"], "Describe ") {
			out = describeAnswer(body.Messages[len(body.Messages)-1]["content"]) // the review page's prompt
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "c", "object": "chat.completion", "created": 1, "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": out}}},
			"usage":   map[string]any{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
		})
	}))
	defer model.Close()
	q, err := bench.Start(ctx, bench.Options{RedisURL: c.redis, LLM: llm.Config{
		Providers: []llm.Provider{{Name: "local", BaseURL: model.URL + "/v1"}}, Concurrency: concurrency}})
	if err != nil {
		return err
	}
	defer q.Close()
	call := func(method, path string, body, out any) error { return q.Call(method, path, q.Admin, body, out) }
	if err := call("POST", "/v1/projects/"+q.ProjectID+"/prompts", map[string]string{"name": "Evals", "slug": "evals"}, nil); err != nil {
		return err
	}
	for _, step := range []struct {
		path string
		body any
	}{
		{"/v1/prompts/evals/versions", map[string]any{"template": "Hello {{name}}", "model": "m"}},
		{"/v1/prompts/evals/versions/1/publish", nil},
		{"/v1/prompts/evals/versions", map[string]any{"template": "Hi {{name}}", "model": "m"}},
	} {
		if err := call("POST", step.path, step.body, nil); err != nil {
			return err
		}
	}
	for i := range payloads {
		if err := call("POST", "/v1/prompts/evals/payloads", map[string]any{"name": fmt.Sprint(i), "variables": map[string]string{"name": fmt.Sprintf("P%d", i)},
			"assertions": []map[string]any{{"type": "contains", "value": "P"}}}, nil); err != nil {
			return err
		}
	}

	// The baseline: the same 400 calls, direct, at the same concurrency.
	oc := openai.NewClient(option.WithBaseURL(model.URL+"/v1"), option.WithAPIKey("bench"), option.WithMaxRetries(0))
	jobs := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var callErr error
	t0 := time.Now()
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for text := range jobs {
				_, err := oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}})
				if err != nil {
					mu.Lock()
					callErr = err
					mu.Unlock()
				}
			}
		}()
	}
	for i := range payloads {
		jobs <- fmt.Sprintf("Hello P%d", i)
		jobs <- fmt.Sprintf("Hi P%d", i)
	}
	close(jobs)
	wg.Wait()
	direct := time.Since(t0)
	if callErr != nil {
		return callErr
	}

	evaluate := func() (time.Duration, int, error) {
		t0 := time.Now()
		var started struct{ Evaluation struct{ ID string } }
		if err := call("POST", "/v1/prompts/evals/versions/2/evaluations", map[string]any{"against": "live"}, &started); err != nil {
			return 0, 0, err
		}
		for {
			var v struct {
				Evaluation struct {
					State  string
					Counts map[string]int
					Usage  map[string]int
				}
			}
			if err := call("GET", "/v1/prompts/evals/versions/2/evaluations/"+started.Evaluation.ID, nil, &v); err != nil {
				return 0, 0, err
			}
			switch v.Evaluation.State {
			case "completed":
				if v.Evaluation.Counts["passed"] != payloads {
					return 0, 0, fmt.Errorf("evaluation counts %v", v.Evaluation.Counts)
				}
				return time.Since(t0), v.Evaluation.Usage["cached_calls"], nil
			case "failed", "canceled":
				return 0, 0, fmt.Errorf("evaluation %s", v.Evaluation.State)
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
	full, _, err := evaluate()
	if err != nil {
		return err
	}
	cached, hits, err := evaluate()
	if err != nil {
		return err
	}
	r.section("Evaluations", fmt.Sprintf(`
An evaluation of %d payloads × 2 versions (a draft against the live
version: %d calls, a contains assertion each), from POST to the GET that
reads it completed (polled every 25 ms), against the same %d calls made
directly with openai-go at the same concurrency (%d, quire's
--llm-concurrency), both to a local OpenAI-compatible server answering
after %s. Then the same evaluation again: every output cached (%d
cached calls). Goals: at most 1.20x the direct calls; the cached
re-evaluation under 1 s.`, payloads, 2*payloads, 2*payloads, concurrency, delay, hits))
	r.table("direct openai-go calls", []row{
		{figure: fmt.Sprintf("evaluation, %d × 2", payloads), quire: ms(full), baseline: ms(direct), ratio: ratio(full, direct), goal: "≤ 1.20x", pass: full <= direct*12/10},
		{figure: fmt.Sprintf("cached re-evaluation, %d × 2", payloads), quire: ms(cached), baseline: ms(direct), ratio: ratio(cached, direct), goal: "< 1 s", pass: cached < time.Second},
	})
	return reviewPage(ctx, c, r, q)
}
