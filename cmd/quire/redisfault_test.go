package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/cluster"
	"golang.org/x/crypto/bcrypt"
)

// redisServer is a private redis-server on a spare port; the test stops
// and restarts only this one, never a shared Redis.
type redisServer struct {
	t    *testing.T
	port int
	cmd  *exec.Cmd
}

func startRedisServer(t *testing.T, port int) *redisServer {
	t.Helper()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--protected-mode", "yes")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &redisServer{t: t, port: port, cmd: cmd}
	t.Cleanup(r.stop)
	// Readiness poll, not a timing assertion: the bound only stops a hang.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", r.addr())
		if err == nil {
			fmt.Fprint(c, "PING\r\n")
			buf := make([]byte, 7)
			n, _ := c.Read(buf)
			c.Close()
			if string(buf[:n]) == "+PONG\r\n" {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer", r.addr())
		}
	}
}

func (r *redisServer) addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// stop kills the server (as a crash would) and waits for it to exit.
func (r *redisServer) stop() {
	if r.cmd.ProcessState != nil {
		return
	}
	r.cmd.Process.Kill()
	r.cmd.Wait()
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestRedisOutage kills Redis under load and brings it back. While it is
// down, API keys (kept in git) and cached prompt reads keep working,
// session checks answer 503, and nothing else fails; once it is back,
// everything works again without restarting quire.
func TestRedisOutage(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not on PATH")
	}
	port := freePort(t)
	rs := startRedisServer(t, port)

	out := &cluster.Log{}
	m := NewMain(out)
	m.Config.Addr, m.Config.Data, m.Config.Redis = "127.0.0.1:0", t.TempDir(), "redis://"+rs.addr()
	m.Config.BcryptCost = bcrypt.MinCost
	m.Config.AdminEmail, m.Config.AdminPassword = adminEmail, adminPassword
	// A request limit nobody reaches: its checks run, and must fail open.
	m.Config.RateLimits.Request = quire.Limit{Rate: 100_000, Period: time.Second}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := &runningServer{t: t, m: m, out: out, url: "http://" + m.Addr()}
	t.Cleanup(func() { s.close() })

	admin := s.login(adminEmail, adminPassword)
	pid := field(s.must(201, "POST", "/v1/projects", admin, map[string]string{"name": "Outage", "slug": "outage"}), "project", "id")
	skill := field(s.must(201, "POST", "/v1/projects/"+pid+"/skills", admin, map[string]string{"name": "Tool", "slug": "tool"}), "skill", "id")
	prompt := field(s.must(201, "POST", "/v1/projects/"+pid+"/prompts", admin, map[string]string{"name": "Greet", "slug": "greet"}), "prompt", "id")
	s.must(201, "POST", "/v1/prompts/"+prompt+"/versions", admin, map[string]string{"template": "Hello {{name}}!"})
	s.must(200, "POST", "/v1/prompts/"+prompt+"/versions/1/publish", admin, nil)
	key := s.must(201, "POST", "/v1/api-keys", admin, map[string]string{"name": "app", "scope": "write"})["token"].(string)

	render := func() string {
		st, body, raw := s.do("POST", "/v1/prompts/"+prompt+"/render", key, map[string]any{"variables": map[string]string{"name": "Ann"}})
		if st != 200 {
			t.Errorf("render with an API key: %d %s", st, raw)
		}
		r, _ := body["rendered"].(string)
		return r
	}
	if got := render(); got != "Hello Ann!" {
		t.Fatalf("render: %q", got)
	}

	// Load from a few clients for the whole test: API-key requests must
	// always succeed; session requests may only succeed, be 503 (Redis
	// down) or 401 (the restarted Redis lost the session).
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var keyOK, sessionDown atomic.Int64
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, path := range []string{"/v1/skills/" + skill, "/v1/prompts/" + prompt + "/live"} {
					if st, _, raw := s.do("GET", path, key, nil); st != 200 {
						t.Errorf("GET %s with an API key: %d %s", path, st, raw)
					} else {
						keyOK.Add(1)
					}
				}
				render()
				switch st, body, raw := s.do("GET", "/v1/auth/me", admin, nil); st {
				case 200, 401:
				case 503:
					if body["code"] != string(quire.EUNAVAILABLE) {
						t.Errorf("session check with Redis down: %s", raw)
					}
					sessionDown.Add(1)
				default:
					t.Errorf("session check: %d %s", st, raw)
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		// A bound only against a hang; the test never depends on speed.
		for deadline := time.Now().Add(60 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting: %s", what)
			}
		}
	}
	waitFor("load running", func() bool { return keyOK.Load() > 10 })

	rs.stop()
	downAt := time.Now()
	waitFor("a session check answered 503 under load", func() bool { return sessionDown.Load() > 0 })

	// Redis is down. Checked one by one, besides the load:
	for range 3 {
		s.must(200, "GET", "/v1/skills/"+skill, key, nil)
		if got := render(); got != "Hello Ann!" {
			t.Fatalf("cached render with Redis down: %q", got)
		}
	}
	if out, err := exec.Command("git", "ls-remote", "http://x:"+key+"@"+m.Addr()+"/git/outage/skills/tool.git").CombinedOutput(); err != nil {
		t.Fatalf("git ls-remote with an API key, Redis down: %v\n%s", err, out)
	}
	// A new live version, published with the key, is what renders next.
	s.must(201, "POST", "/v1/prompts/"+prompt+"/versions", key, map[string]string{"template": "Hi {{name}}."})
	s.must(200, "POST", "/v1/prompts/"+prompt+"/versions/2/publish", key, nil)
	if got := render(); got != "Hi Ann." {
		t.Fatalf("render after a publish with Redis down: %q", got)
	}
	for _, tc := range []struct{ method, path, token string }{
		{"GET", "/v1/auth/me", admin},
		{"GET", "/v1/projects", admin},
		{"POST", "/v1/auth/login", ""},
		{"GET", "/readyz", ""},
	} {
		var body any
		if tc.path == "/v1/auth/login" {
			body = map[string]string{"email": adminEmail, "password": adminPassword}
		}
		st, m, raw := s.do(tc.method, tc.path, tc.token, body)
		if st != 503 || m["code"] != string(quire.EUNAVAILABLE) || m["error"] == "" {
			t.Fatalf("%s %s with Redis down: %d %s; want a 503 APIError", tc.method, tc.path, st, raw)
		}
		if strings.Contains(string(raw), "sess_") || strings.Contains(string(raw), "127.0.0.1:"+strconv.Itoa(port)) {
			t.Fatalf("%s %s: the error leaks internals: %s", tc.method, tc.path, raw)
		}
	}

	// Redis comes back, empty: quire reconnects by itself.
	startRedisServer(t, port) // stopped by its cleanup
	// Each lost count is a warning, but at most one every 10s is written.
	outage := time.Since(downAt)
	if n := strings.Count(out.String(), "render not counted"); n > 2+int(outage/(10*time.Second)) {
		t.Errorf("%d warnings about uncounted renders in a %v outage: the log is flooded", n, outage)
	}
	// The client probes a refused Redis about once a second: poll until
	// a new session works end to end.
	var fresh string
	waitFor("logins and session checks work again", func() bool {
		st, body, _ := s.do("POST", "/v1/auth/login", "", map[string]string{"email": adminEmail, "password": adminPassword})
		if st != 200 {
			return false
		}
		fresh = body["token"].(string)
		st, _, _ = s.do("GET", "/v1/auth/me", fresh, nil)
		return st == 200
	})
	for range 5 {
		s.must(200, "GET", "/v1/auth/me", fresh, nil)
	}
	s.must(200, "GET", "/readyz", "", nil)
	if got := render(); got != "Hi Ann." {
		t.Fatalf("render after Redis is back: %q", got)
	}
	// The old session lived only in the Redis that was lost.
	s.must(401, "GET", "/v1/auth/me", admin, nil)
	s.must(200, "GET", "/v1/prompts/"+prompt+"/usage", key, nil)

	close(stop)
	wg.Wait()
	stop = make(chan struct{}) // for the deferred close
	if t.Failed() {
		return
	}
	if n := strings.Count(out.String(), `"status":500`); n > 0 {
		t.Fatalf("quire answered 500 %d times:\n%s", n, out)
	}
}
