package hatest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire/quire/internal/redistest"
)

// TestThroughputByNodes measures renders and upserts per second through
// the balancer with 1, 2 and 3 quire nodes on one data root and one
// Redis, for docs/deployment.md. It is a measurement, not a check, and
// runs only with QUIRE_HA_THROUGHPUT=1: on a 2-core machine more nodes
// share the same cores, so the figures show the cost of coordination,
// not a gain.
func TestThroughputByNodes(t *testing.T) {
	if os.Getenv("QUIRE_HA_THROUGHPUT") == "" {
		t.Skip("a measurement: QUIRE_HA_THROUGHPUT=1 runs it")
	}
	bin := quireBinary(t)
	rs := redistest.StartServer(t)
	root := filepath.Join(t.TempDir(), "data")
	os.MkdirAll(root, 0o755)
	var nodes []*node
	for i := range 3 {
		nodes = append(nodes, newNode(fmt.Sprintf("node%d", i), bin, []string{
			"--data", root, "--redis", "redis://" + rs.Addr, "--redis-prefix", "tput:",
			"--rate-limit", "0", "--login-limit", "0", "--login-address-limit", "0",
		}, []string{"QUIRE_ADMIN_EMAIL=" + adminEmail, "QUIRE_ADMIN_PASSWORD=" + adminPassword}))
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.kill()
		}
	})
	for _, n := range nodes {
		if err := n.start(); err != nil {
			t.Fatal(err)
		}
	}
	r := &run{t: t, lb: newBalancer(nodes), ops: map[string]int{}}
	s := r.setup(nodes)
	const clients = 8
	per := 5 * time.Second
	for k := 1; k <= 3; k++ {
		for i, n := range nodes {
			n.up.Store(i < k)
		}
		for _, op := range []string{"render", "upsert"} {
			var done, bad atomic.Int64
			stop := time.Now().Add(per)
			var wg sync.WaitGroup
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; time.Now().Before(stop); i++ {
						var rep reply
						want := 200
						if op == "render" {
							rep = r.lb.do("POST", "/v1/prompts/"+s.prompt+"/render", r.token, map[string]any{"variables": map[string]string{"name": "Ada"}})
						} else {
							rep = r.lb.do("POST", "/v1/skills/"+s.skills[c%2]+"/versions/1/files", r.token,
								map[string]string{"file_path": fmt.Sprintf("t/c%d-%d.txt", c, i%40), "content": fmt.Sprint(i)})
						}
						if rep.lost != nil || rep.status != want {
							bad.Add(1)
							continue
						}
						done.Add(1)
					}
				}()
			}
			wg.Wait()
			t.Logf("%d node(s), %d clients, %s: %.0f/s (%d failed)", k, clients, op, float64(done.Load())/per.Seconds(), bad.Load())
		}
	}
}
