package httpapi_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/quire/quire/internal/testenv"
	"github.com/quire/quire/llm"
)

// sentLog counts the prompts a model server was sent (judges aside).
type sentLog struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *sentLog) reply(content string) string {
	l.mu.Lock()
	l.n[content]++
	l.mu.Unlock()
	return "echo: " + content
}

// reset forgets what was sent and returns it: how many prompts, how
// many calls, and how many calls sent a prompt again.
func (l *sentLog) reset() (prompts, calls, again int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.n {
		prompts++
		calls += n
		again += n - 1
	}
	l.n = map[string]int{}
	return
}

// Two nodes on one data root (two servers, one Redis, as a cluster
// runs): an evaluation runs on exactly one of them. The node that starts
// it runs it; the other, starting meanwhile, leaves it alone (each
// prompt is sent once). A cancel asked on the other node reaches the
// job: it answers within a second, once the job has stopped, and nothing
// is sent after. When the running node stops, the other takes the
// evaluation up from its stored cases and completes it.
func TestEvaluationOnTwoNodes(t *testing.T) {
	m := newModelServer(t)
	sent := &sentLog{n: map[string]int{}}
	m.reply = sent.reply
	mr := miniredis.RunT(t)
	root := t.TempDir()
	opts := testenv.Options{Root: root, RedisURL: "redis://" + mr.Addr(), Prefix: "nodes:", LLM: llm.Config{
		Providers: []llm.Provider{{Name: "local", BaseURL: m.URL + "/v1", APIKey: runKey}},
		Timeout:   5 * time.Second, Backoff: 10 * time.Millisecond, MaxBackoff: time.Second, Concurrency: 2,
	}}
	a := testenv.NewWith(t, opts)
	project := a.CreateProject(a.Admin, "nodes")
	a.CreatePrompt(a.Admin, project, "greet")
	a.Must(201, "POST", "/v1/prompts/greet/versions", a.Admin, obj{"template": "Hello {{name}}", "model": "gpt-test"})
	a.Must(200, "POST", "/v1/prompts/greet/versions/1/publish", a.Admin, nil)
	a.Must(201, "POST", "/v1/prompts/greet/versions", a.Admin, obj{"template": "Hi {{name}}!", "model": "gpt-test"})
	const payloads = 24
	for i := range payloads {
		a.Must(201, "POST", "/v1/prompts/greet/payloads", a.Admin, obj{"name": fmt.Sprint("p", i), "variables": obj{"name": fmt.Sprint("N", i)}})
	}
	m.delay.Store(int64(80 * time.Millisecond))
	start := func(e *testenv.Env) string {
		t.Helper()
		var out evaluation
		e.Must(202, "POST", "/v1/prompts/greet/versions/2/evaluations", e.Admin, obj{"against": "live", "fresh": true}).Decode(t, &out)
		return out.Evaluation.ID
	}
	read := func(e *testenv.Env, id string) evaluation {
		t.Helper()
		var out evaluation
		e.Must(200, "GET", "/v1/prompts/greet/versions/2/evaluations/"+id, e.Admin, nil).Decode(t, &out)
		return out
	}
	// underway waits until evaluation id has a case stored.
	underway := func(e *testenv.Env, id string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for len(read(e, id).Cases) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("evaluation %s stored no case", id)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	wait := func(e *testenv.Env, id string, within time.Duration) evaluation {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			out := read(e, id)
			if s := out.Evaluation.State; s == "completed" || s == "failed" || s == "canceled" {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("evaluation %s still %s with %d cases after %s", id, out.Evaluation.State, len(out.Cases), within)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// 1. Node b starts while a runs an evaluation: its start-up resumes
	// pending evaluations, and leaves a's to a.
	id := start(a)
	time.Sleep(150 * time.Millisecond)
	b := testenv.NewWith(t, opts)
	got := wait(b, id, 20*time.Second)
	if got.Evaluation.State != "completed" || len(got.Cases) != payloads {
		t.Fatalf("evaluation on node a, read on b: %s with %d cases", got.Evaluation.State, len(got.Cases))
	}
	if prompts, calls, again := sent.reset(); prompts != 2*payloads || again != 0 {
		t.Fatalf("%d prompts sent in %d calls, %d of them again: both nodes ran the evaluation", prompts, calls, again)
	}

	// 2. A cancel on b reaches the job on a.
	id = start(a)
	underway(b, id)
	t0 := time.Now()
	r := b.Must(200, "POST", "/v1/prompts/greet/versions/2/evaluations/"+id+"/cancel", b.Admin, nil)
	if d := time.Since(t0); d > time.Second {
		t.Errorf("a cancel on another node took %s", d)
	}
	if s := r.JSON(t)["evaluation"].(map[string]any)["state"]; s != "canceled" {
		t.Errorf("canceled on b: %s", r.Body)
	}
	calls := m.calls.Load()
	time.Sleep(400 * time.Millisecond)
	if n := m.calls.Load(); n != calls {
		t.Errorf("%d calls after the cancel answered", n-calls)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := a.App.EvaluationsIdle(ctx); err != nil {
		t.Errorf("the job on node a still runs after the cancel: %v", err)
	}
	if got := read(a, id); got.Evaluation.State != "canceled" || len(got.Cases) == 0 || len(got.Cases) >= payloads {
		t.Errorf("canceled evaluation, read on a: %s with %d cases", got.Evaluation.State, len(got.Cases))
	}
	b.Must(409, "POST", "/v1/prompts/greet/versions/2/evaluations/"+id+"/cancel", b.Admin, nil)
	sent.reset()

	// 3. Node a stops its evaluations (as it does when it stops): b
	// takes the evaluation up from its stored cases and completes it.
	id = start(a)
	underway(a, id)
	a.App.StopEvaluations()
	before := len(read(b, id).Cases)
	got = wait(b, id, 20*time.Second)
	if got.Evaluation.State != "completed" || len(got.Cases) != payloads {
		t.Fatalf("evaluation left by node a, completed on b: %s with %d cases", got.Evaluation.State, len(got.Cases))
	}
	prompts, calls2, again := sent.reset()
	t.Logf("node a stored %d of %d cases before it stopped; %d prompts sent in %d calls, %d of them again", before, payloads, prompts, calls2, again)
	if before == 0 || before == payloads {
		t.Errorf("node a stored %d of %d cases before it stopped: the test did not stop it mid-evaluation", before, payloads)
	}
	// Only the cases cut short by the stop are sent again (at most the
	// 16 cases an evaluation has sent and not stored).
	if prompts != 2*payloads || again > 2*16 {
		t.Errorf("%d prompts sent in %d calls, %d of them again", prompts, calls2, again)
	}
}
