package hatest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/quire/quire/internal/testenv"
)

// TestCoherenceAcrossHosts: two servers on one data root, each through a
// path of its own (a symlink, as two hosts mount it where they will),
// that share no change counter, as servers on two hosts of a network
// file system share none (a mapped page is not coherent between NFS
// clients), learn
// of each other's writes through Redis pub/sub. Each round one server
// publishes a prompt version and creates a project, and the other, which
// has just read the old state (so it remembers it), must answer with the
// new one well within the one-second bound that holds when a message is
// lost: the message, not the bound, brought it.
func TestCoherenceAcrossHosts(t *testing.T) {
	m := miniredis.RunT(t)
	root := t.TempDir()
	var envs []*testenv.Env
	for i := range 2 {
		// Each host mounts the file system at a path of its own.
		view := filepath.Join(t.TempDir(), fmt.Sprintf("host%d", i))
		if err := os.Symlink(root, view); err != nil {
			t.Fatal(err)
		}
		envs = append(envs, testenv.NewWith(t, testenv.Options{
			Root: view, RedisURL: "redis://" + m.Addr(), Prefix: "hosts:",
			HostCounter: filepath.Join(t.TempDir(), "refgen"),
		}))
	}
	tok := envs[0].Admin // sessions live in the shared Redis
	project := envs[0].CreateProject(tok, "hosts")
	prompt := envs[0].CreatePrompt(tok, project, "greet")
	render := func(e *testenv.Env) int {
		res := e.Do("POST", "/v1/prompts/"+prompt+"/render", tok, map[string]any{"variables": map[string]string{"name": "x"}})
		if res.Status == 404 {
			return 0 // nothing live yet
		}
		if res.Status != 200 {
			t.Fatalf("render: %d %s", res.Status, res.Body)
		}
		return int(res.JSON(t)["version"].(float64))
	}
	var worst time.Duration
	for n := 1; n <= 8; n++ {
		w, r := envs[n%2], envs[(n+1)%2]
		render(r) // remembered
		w.Must(201, "POST", "/v1/prompts/"+prompt+"/versions", tok, map[string]string{"template": fmt.Sprintf("v%d {{name}}", n)})
		w.Must(200, "POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", prompt, n), tok, nil)
		slug := fmt.Sprintf("p%d", n)
		pid := w.CreateProject(tok, slug)
		acked := time.Now()
		for render(r) != n || r.Do("GET", "/v1/projects/"+pid, tok, nil).Status != 200 {
			if time.Since(acked) > 2*time.Second {
				t.Fatalf("round %d: the other server still answers with the old state %s after the write", n, time.Since(acked))
			}
			time.Sleep(time.Millisecond)
		}
		worst = max(worst, time.Since(acked))
	}
	t.Logf("slowest round: the other host answered with the new state %s after the acknowledgement", worst)
	if worst > 300*time.Millisecond {
		t.Fatalf("a host answered with the new state only after %s: the change feed did not carry the writes (the bound when a message is lost is 1s)", worst)
	}
}
