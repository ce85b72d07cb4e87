package crashtest

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire/internal/cluster"
)

// TestCrashEvaluation SIGKILLs quire twice while it runs an acknowledged
// evaluation of 80 payloads against a local OpenAI-compatible server,
// and checks that after the restarts the evaluation finished by itself
// with every case stored once, that no case stored on
// refs/evaluations/<id> at a kill (read from the repository with git
// between the kill and the restart) was sent to the provider again, that
// the cases sent twice are no more than could have been in flight, and
// that every repository passes git fsck --strict.
func TestCrashEvaluation(t *testing.T) {
	bin := quireBinary(t)
	root := t.TempDir()

	var (
		mu    sync.Mutex
		sent  = map[string]int{} // the rendered prompt → requests
		when  = map[string][]time.Time{}
		kills []time.Time
	)
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct {
			Model    string              `json:"model"`
			Messages []map[string]string `json:"messages"`
		}
		if json.Unmarshal(b, &body) != nil || len(body.Messages) == 0 {
			http.Error(w, "not a chat completion", http.StatusBadRequest)
			return
		}
		content := body.Messages[len(body.Messages)-1]["content"]
		mu.Lock()
		sent[content]++
		when[content] = append(when[content], time.Now())
		mu.Unlock()
		select {
		case <-time.After(40 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "c", "object": "chat.completion", "created": 1, "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "echo: " + content}}},
			"usage":   map[string]any{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
		})
	}))
	defer model.Close()
	const concurrency = 4
	start := func() *server {
		t.Helper()
		p, err := cluster.Start([]string{bin, "serve", "--data", root, "--addr", "127.0.0.1:0", "--fsync",
			"--llm", "local=" + model.URL + "/v1", "--llm-concurrency", fmt.Sprint(concurrency)},
			[]string{"QUIRE_ADMIN_EMAIL=" + adminEmail, "QUIRE_ADMIN_PASSWORD=" + adminPassword, "QUIRE_LLM_LOCAL_API_KEY=sk-crash"}, true)
		if err != nil {
			t.Fatal(err)
		}
		return &server{Proc: p, logs: p.Logs}
	}
	srv := start()
	defer func() {
		if srv != nil {
			srv.kill()
		}
	}()
	c := newClient(srv.URL, "")
	defer c.close()
	step := func(method, path string, body any, want int) *reply {
		t.Helper()
		r, err := c.call(method, path, body)
		if err != nil {
			t.Fatal(err)
		}
		if err := expect(r, want, method+" "+path); err != nil {
			t.Fatal(err)
		}
		return r
	}
	var login struct{ Token string }
	step("POST", "/v1/auth/login", map[string]string{"email": adminEmail, "password": adminPassword}, 200).decode(&login)
	c = c.with(login.Token)
	var key struct{ Token string }
	step("POST", "/v1/api-keys", map[string]string{"name": "evals", "scope": "admin"}, 201).decode(&key)
	c = c.with(key.Token)
	var project struct{ Project struct{ ID string } }
	step("POST", "/v1/projects", map[string]string{"name": "Crash", "slug": "crash"}, 201).decode(&project)
	var prompt struct{ Prompt struct{ ID string } }
	step("POST", "/v1/projects/crash/prompts", map[string]string{"name": "Greet", "slug": "greet"}, 201).decode(&prompt)
	step("POST", "/v1/prompts/greet/versions", map[string]any{"template": "Hello {{name}}", "model": "m"}, 201)
	const payloads = 80
	names := map[string]string{} // payload id → rendered prompt
	for i := range payloads {
		var pl struct{ Payload struct{ ID string } }
		step("POST", "/v1/prompts/greet/payloads", map[string]any{"name": fmt.Sprint(i), "variables": map[string]string{"name": fmt.Sprintf("P%d", i)},
			"assertions": []map[string]any{{"type": "contains", "value": "Hello"}}}, 201).decode(&pl)
		names[pl.Payload.ID] = fmt.Sprintf("Hello P%d", i)
	}
	var ev struct{ Evaluation struct{ ID string } }
	step("POST", "/v1/prompts/greet/versions/1/evaluations", nil, 202).decode(&ev)
	id := ev.Evaluation.ID
	repo := filepath.Join(root, project.Project.ID, "prompts", prompt.Prompt.ID+".git")
	evalPath := "/v1/prompts/greet/versions/1/evaluations/" + id

	type view struct {
		Evaluation struct {
			State  string
			Counts map[string]int
		}
		Cases []struct {
			PayloadID string `json:"payload_id"`
			Head      struct{ Output string }
		}
	}
	read := func() view {
		t.Helper()
		var v view
		step("GET", evalPath, nil, 200).decode(&v)
		return v
	}
	// storedCases reads the cases on the evaluation's ref with git.
	storedCases := func() map[string]bool {
		t.Helper()
		out, err := exec.Command("git", "--git-dir", repo, "ls-tree", "--name-only", "refs/evaluations/"+id+":cases").CombinedOutput()
		if err != nil {
			t.Fatalf("git ls-tree: %v\n%s", err, out)
		}
		got := map[string]bool{}
		for _, f := range strings.Fields(string(out)) {
			got[strings.TrimSuffix(strings.TrimSuffix(f, ".json"), "-1")] = true
		}
		return got
	}

	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 33))
	t.Logf("seed %d", seed)
	stored := map[string]int{} // cases on the ref at a kill → the first such kill
	var sentAtKills map[string]int
	for round := range 2 {
		want := len(stored) + 8 + rng.IntN(16)
		deadline := time.Now().Add(30 * time.Second)
		for len(read().Cases) < want {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the evaluation did not reach %d cases", round, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
		srv.kill()
		mu.Lock()
		kills = append(kills, time.Now())
		mu.Unlock()
		for k := range storedCases() {
			if _, ok := stored[k]; !ok {
				stored[k] = round
			}
		}
		mu.Lock()
		sentAtKills = map[string]int{}
		for k, n := range sent {
			sentAtKills[k] = n
		}
		mu.Unlock()
		if rep, err := checkDisk(root); err != nil {
			t.Fatalf("round %d, after SIGKILL: %v", round, err)
		} else if len(rep.refLocks) > 0 {
			t.Fatalf("round %d: lock files under refs/: %v", round, rep.refLocks)
		}
		t.Logf("round %d: killed with %d of %d cases stored, %d prompts sent", round, len(stored), payloads, len(sentAtKills))
		srv = start()
		c = newClient(srv.URL, key.Token)
	}
	var final view
	deadline := time.Now().Add(60 * time.Second)
	for final = read(); final.Evaluation.State != "completed"; final = read() {
		if time.Now().After(deadline) || final.Evaluation.State == "failed" || final.Evaluation.State == "canceled" {
			t.Fatalf("the resumed evaluation is %s with %d cases", final.Evaluation.State, len(final.Cases))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(final.Cases) != payloads || final.Evaluation.Counts["cases"] != payloads || final.Evaluation.Counts["passed"] != payloads {
		t.Fatalf("completed with %d cases, counts %v", len(final.Cases), final.Evaluation.Counts)
	}
	seen := map[string]bool{}
	for _, cs := range final.Cases {
		if seen[cs.PayloadID] {
			t.Errorf("case %s stored twice", cs.PayloadID)
		}
		seen[cs.PayloadID] = true
		if cs.Head.Output != "echo: "+names[cs.PayloadID] {
			t.Errorf("case %s output %q", cs.PayloadID, cs.Head.Output)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	storedAt := func(pid string) bool { _, ok := stored[pid]; return ok }
	// What a kill can cost: the cases sent and not yet stored, at most 16
	// (app's evalWorkers) at any time. A case may go out once more after
	// each kill that found it in flight, so one in flight at both kills
	// is sent three times; a case stored before a kill is never sent
	// after it.
	resent := 0
	for pid, prompt := range names {
		n := sent[prompt]
		allowed := 1 + len(kills)
		if storedAt(pid) {
			allowed = 1 + stored[pid]
		}
		switch {
		case n == 0:
			t.Errorf("payload %s was never sent", pid)
		case storedAt(pid) && when[prompt][n-1].After(kills[stored[pid]]):
			t.Errorf("payload %s was stored before kill %d and sent after it: at %v, kills at %v", pid, stored[pid], when[prompt], kills)
		case n > allowed:
			t.Errorf("payload %s sent %d times over %d kills", pid, n, len(kills))
		}
		resent += n - 1
	}
	if resent > len(kills)*16 {
		t.Errorf("%d cases sent again over %d kills", resent, len(kills))
	}
	if t.Failed() {
		out, _ := exec.Command("git", "--git-dir", repo, "log", "--format=%s", "--name-status", "refs/evaluations/"+id).CombinedOutput()
		t.Logf("git log:\n%s\nlogs:\n%s", out, srv.logs)
	}
	t.Logf("%d cases stored before the kills were not sent again; %d sends repeated a case in flight at a kill", len(stored), resent)

	// The event is recorded just after the completed state is stored
	// (app.finishEvaluation): on a loaded machine the state can be read
	// first.
	evs := ""
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		evs = string(step("GET", "/v1/projects/crash/events?limit=500", nil, 200).body)
		if strings.Contains(evs, `"evaluation.completed"`) || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(evs, `"evaluation.completed"`) {
		t.Errorf("no evaluation.completed event:\n%.2000s", evs)
	}
	if err := srv.stop(); err != nil {
		t.Error(err)
	}
	srv = nil
	if _, err := checkDisk(root); err != nil {
		t.Fatal(err)
	}
}
