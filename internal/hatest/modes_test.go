package hatest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quire/quire/internal/redistest"
)

// TestServeRedisModes: quire serve's Redis flags, end to end. For each
// way of naming a Redis (a Cluster by its seeds, Sentinel by URL, Sentinel
// by flags) two nodes on one data root share sessions and see each
// other's writes: a login on one works on the other, a prompt published
// on one renders on the other, a logout on one ends the session on both.
func TestServeRedisModes(t *testing.T) {
	bin := quireBinary(t)
	redistest.Binary(t)
	modes := map[string]func(t *testing.T) []string{
		"cluster": func(t *testing.T) []string {
			return []string{"--redis-cluster", strings.Join(redistest.StartCluster(t, 3).Addrs(), ",")}
		},
		"sentinel url": func(t *testing.T) []string {
			r := redistest.StartSentinel(t, "qm", 1, 1, 5*time.Second)
			return []string{"--redis", "redis+sentinel://" + strings.Join(r.SentinelAddrs(), ",") + "/qm"}
		},
		"sentinel flags": func(t *testing.T) []string {
			r := redistest.StartSentinel(t, "qm", 1, 1, 5*time.Second)
			return []string{"--redis-sentinel-master", "qm", "--redis-sentinel-addrs", strings.Join(r.SentinelAddrs(), ",")}
		},
	}
	for name, redisArgs := range modes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := redisArgs(t)
			root := filepath.Join(t.TempDir(), "data")
			os.MkdirAll(root, 0o755)
			var nodes []*node
			for i := range 2 {
				n := newNode(fmt.Sprintf("node%d", i), bin, append([]string{"--data", root, "--redis-prefix", "modes:"}, args...),
					[]string{"QUIRE_ADMIN_EMAIL=" + adminEmail, "QUIRE_ADMIN_PASSWORD=" + adminPassword})
				if err := n.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(n.Kill)
				nodes = append(nodes, n)
			}
			mode := strings.Fields(name)[0]
			if !strings.Contains(nodes[0].Logs().String(), `"redis_mode":"`+mode+`"`) {
				t.Fatalf("quire did not start in %s mode:\n%s", mode, nodes[0].Logs().Tail(2000))
			}
			lb := newBalancer(nodes)
			a, b := nodes[0], nodes[1]
			var login struct{ Token string }
			decode(t, lb.At(a, "POST", "/v1/auth/login", "", map[string]string{"email": adminEmail, "password": adminPassword}), 200, &login)
			tok := login.Token
			decode(t, lb.At(b, "GET", "/v1/auth/me", tok, nil), 200, nil)
			var p struct{ Project struct{ ID string } }
			decode(t, lb.At(a, "POST", "/v1/projects", tok, map[string]string{"name": "Modes"}), 201, &p)
			var pr struct{ Prompt struct{ ID string } }
			decode(t, lb.At(b, "POST", "/v1/projects/"+p.Project.ID+"/prompts", tok, map[string]string{"name": "Hi"}), 201, &pr)
			decode(t, lb.At(a, "POST", "/v1/prompts/"+pr.Prompt.ID+"/versions", tok, map[string]string{"template": "Hi {{name}}"}), 201, nil)
			decode(t, lb.At(a, "POST", "/v1/prompts/"+pr.Prompt.ID+"/versions/1/publish", tok, nil), 200, nil)
			var out struct{ Rendered string }
			for _, n := range []*node{b, a, b} {
				decode(t, lb.At(n, "POST", "/v1/prompts/"+pr.Prompt.ID+"/render", tok, map[string]any{"variables": map[string]string{"name": "Ada"}}), 200, &out)
				if out.Rendered != "Hi Ada" {
					t.Fatalf("render on %s: %q", n.Name, out.Rendered)
				}
			}
			if rep := lb.At(b, "DELETE", "/v1/auth/session", tok, nil); rep.Status != 204 {
				t.Fatalf("logout: %s", rep)
			}
			for _, n := range nodes {
				if rep := lb.At(n, "GET", "/v1/auth/me", tok, nil); rep.Status != 401 {
					t.Fatalf("the session after logout, on %s: %s", n.Name, rep)
				}
				if rep := lb.At(n, "GET", "/readyz", "", nil); rep.Status != 200 {
					t.Fatalf("/readyz on %s: %s", n.Name, rep)
				}
			}
		})
	}
}
