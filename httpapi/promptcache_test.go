package httpapi_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/quire/quire/internal/testenv"
)

func TestLiveETag(t *testing.T) {
	e := testenv.New(t)
	id := newPrompt(e, "etag")
	reader := e.CreateKey(e.Admin, "read")
	e.Must(404, "GET", "/v1/prompts/"+id+"/live", reader, nil)
	_, c1 := publishTemplate(e, id, "one {{x}}")

	r := e.Must(200, "GET", "/v1/prompts/"+id+"/live", reader, nil)
	if et := r.Header.Get("ETag"); et != `"`+c1+`"` {
		t.Fatalf("ETag %q, want commit %s", et, c1)
	}
	m := r.JSON(t)
	if str(t, m, "version", "template") != "one {{x}}" || field(t, m, "version", "live") != true || field(t, m, "version", "version") != 1.0 {
		t.Fatalf("live: %v", m)
	}
	for _, inm := range []string{`"` + c1 + `"`, `W/"` + c1 + `"`, `"other", "` + c1 + `"`, `*`} {
		r = e.Must(304, "GET", "/v1/prompts/"+id+"/live", reader, nil, "If-None-Match: "+inm)
		if len(r.Body) != 0 || r.Header.Get("ETag") != `"`+c1+`"` {
			t.Fatalf("304 with body %q / etag %q", r.Body, r.Header.Get("ETag"))
		}
	}
	_, c2 := publishTemplate(e, id, "two {{x}}")
	r = e.Must(200, "GET", "/v1/prompts/"+id+"/live", reader, nil, `If-None-Match: "`+c1+`"`)
	if r.Header.Get("ETag") != `"`+c2+`"` || str(t, r.JSON(t), "version", "template") != "two {{x}}" {
		t.Fatalf("after publish: %s %s", r.Header.Get("ETag"), r.Body)
	}
	e.Must(304, "GET", "/v1/prompts/"+id+"/live", reader, nil, `If-None-Match: "`+c2+`"`)
}

// liveRender renders the live version and returns the version number.
func liveRender(e *testenv.Env, path, token string) int {
	e.T.Helper()
	r := e.Must(200, "POST", path, token, obj{"variables": obj{"x": "1"}}).JSON(e.T)
	return int(r["version"].(float64))
}

func TestCacheInvalidation(t *testing.T) {
	e := testenv.New(t)
	pid := e.CreateProject(e.Admin, "inv")
	id := e.CreatePrompt(e.Admin, pid, "inv")
	reader := e.CreateKey(e.Admin, "read")
	path := "/v1/prompts/" + id + "/render"
	publishTemplate(e, id, "v1 {{x}}")
	for range 3 {
		if v := liveRender(e, path, reader); v != 1 {
			t.Fatalf("version %d", v)
		}
	}
	if st := e.Prompts.Stats(); st.LocalHits < 2 || st.Loads != 1 {
		t.Fatalf("cache not used: %+v", st)
	}

	steps := []struct {
		name   string
		change func()
		want   int
	}{
		{"publish", func() { publishTemplate(e, id, "v2 {{x}}") }, 2},
		{"promote (rollback)", func() { e.Must(200, "POST", "/v1/prompts/"+id+"/versions/1/promote", e.Admin, nil) }, 1},
		{"promote forward", func() { e.Must(200, "POST", "/v1/prompts/"+id+"/versions/2/promote", e.Admin, nil) }, 2},
		{"archive a non-live version", func() { e.Must(200, "POST", "/v1/prompts/"+id+"/versions/1/archive", e.Admin, nil) }, 2},
		{"open, edit and delete a draft", func() {
			e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, obj{"template": "draft {{x}}"})
			e.Must(200, "PATCH", "/v1/prompts/"+id+"/versions/3", e.Admin, obj{"template": "draft2 {{x}}"})
			e.Must(204, "DELETE", "/v1/prompts/"+id+"/versions/3", e.Admin, nil)
		}, 2},
		{"publish again", func() { publishTemplate(e, id, "v4 {{x}}") }, 4},
		{"purge one", func() { e.Must(200, "POST", "/v1/prompts/"+id+"/cache/purge", e.Admin, nil) }, 4},
		{"purge all", func() { e.Must(200, "POST", "/v1/cache/purge", e.Admin, nil) }, 4},
	}
	for _, st := range steps {
		st.change()
		if v := liveRender(e, path, reader); v != st.want {
			t.Fatalf("after %s: version %d, want %d", st.name, v, st.want)
		}
		if r := e.Must(200, "GET", "/v1/prompts/"+id+"/live", reader, nil).JSON(t); field(t, r, "version", "version") != float64(st.want) {
			t.Fatalf("after %s: live %v", st.name, r)
		}
	}

	// Prompt update: a new slug reaches it, the old one does not.
	e.Must(200, "PATCH", "/v1/prompts/"+id, e.Admin, obj{"slug": "renamed"})
	e.Must(200, "POST", "/v1/projects/inv/prompts/renamed/render", reader, obj{"variables": obj{"x": 1}})
	e.Must(404, "POST", "/v1/projects/inv/prompts/inv/render", reader, obj{"variables": obj{"x": 1}})

	// Purging is for admins; a read key may not.
	e.Must(403, "POST", "/v1/prompts/"+id+"/cache/purge", reader, nil)
	e.Must(403, "POST", "/v1/cache/purge", reader, nil)
	_, member := e.CreateUser("m@example.com")
	e.Must(403, "POST", "/v1/cache/purge", member, nil)

	// Delete: gone at once.
	e.Must(204, "DELETE", "/v1/prompts/"+id, e.Admin, nil)
	e.Must(404, "POST", path, reader, obj{"variables": obj{"x": 1}})
	e.Must(404, "GET", "/v1/prompts/"+id+"/live", reader, nil)
}

// TestTwoProcesses runs two quire servers on one data root and one real
// Redis: a change on either is seen by the other on the very next request.
func TestTwoProcesses(t *testing.T) {
	a, b := twoServers(t)
	id := newPrompt(a, "two")
	keyA := a.CreateKey(a.Admin, "write")
	path := "/v1/prompts/" + id + "/render"
	publishTemplate(a, id, "v1 {{x}}")
	for i := range 3 { // warm both in-process tiers
		liveRender(a, path, keyA)
		if v := liveRender(b, path, keyA); v != 1 {
			t.Fatalf("round %d: b sees %d", i, v)
		}
	}
	if st := b.Prompts.Stats(); st.RedisHits == 0 || st.LocalHits == 0 {
		t.Fatalf("b did not use the shared and local tiers: %+v", st)
	}
	for n := 2; n <= 12; n++ {
		on, other := a, b
		if n%2 == 1 {
			on, other = b, a
		}
		on.Must(201, "POST", "/v1/prompts/"+id+"/versions", keyA, obj{"template": fmt.Sprintf("v%d {{x}}", n)})
		on.Must(200, "POST", fmt.Sprintf("/v1/prompts/%s/versions/%d/publish", id, n), keyA, nil)
		if v := liveRender(other, path, keyA); v != n {
			t.Fatalf("publish of v%d: the other process rendered v%d", n, v)
		}
		if v := liveRender(on, path, keyA); v != n {
			t.Fatalf("publish of v%d: the same process rendered v%d", n, v)
		}
	}
	a.Must(200, "POST", "/v1/prompts/"+id+"/versions/3/promote", keyA, nil)
	if v := liveRender(b, path, keyA); v != 3 {
		t.Fatalf("rollback on a: b rendered v%d", v)
	}
	// The pub/sub message reaches b too (it is not what correctness rests on).
	deadline := time.Now().Add(5 * time.Second)
	for b.Prompts.Stats().Invalidations == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if b.Prompts.Stats().Invalidations == 0 {
		t.Fatal("b received no invalidation")
	}
}

// redisServer is a redis-server of the test's own on a spare port.
type redisServer struct {
	t    *testing.T
	port int
	cmd  *exec.Cmd
}

func startRedis(t *testing.T, port int) *redisServer {
	t.Helper()
	if port == 0 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
	}
	cmd := exec.Command("/usr/bin/redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rs := &redisServer{t: t, port: port, cmd: cmd}
	t.Cleanup(rs.stop)
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, err := net.Dial("tcp", rs.addr())
		if err == nil {
			c.Close()
			return rs
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %d did not start", port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (rs *redisServer) addr() string { return "127.0.0.1:" + strconv.Itoa(rs.port) }

// stop kills this test's own redis-server (never the shared one).
func (rs *redisServer) stop() {
	if rs.cmd.Process != nil && rs.cmd.ProcessState == nil {
		rs.cmd.Process.Kill()
		rs.cmd.Wait()
	}
}

// TestRedisOutage stops the test's own Redis mid-run: reads keep answering
// 200 from the in-process tier and git, a publish during the outage is
// seen, and the shared tier and pub/sub work again once Redis is back.
func TestRedisOutage(t *testing.T) {
	if _, err := os.Stat("/usr/bin/redis-server"); err != nil {
		t.Skip("no /usr/bin/redis-server")
	}
	rs := startRedis(t, 0)
	url := "redis://" + rs.addr()
	root := t.TempDir()
	a := testenv.NewWith(t, testenv.Options{Root: root, RedisURL: url, Prefix: "outage:"})
	id := newPrompt(a, "out")
	writer := a.CreateKey(a.Admin, "write") // keys live in git, sessions in Redis
	admin := a.CreateKey(a.Admin, "admin")
	path := "/v1/prompts/" + id + "/render"
	publishTemplate(a, id, "v1 {{x}}")
	liveRender(a, path, writer)

	rs.stop()
	for range 5 {
		if v := liveRender(a, path, writer); v != 1 {
			t.Fatalf("during outage: v%d", v)
		}
	}
	a.Must(201, "POST", "/v1/prompts/"+id+"/versions", writer, obj{"template": "v2 {{x}}"})
	a.Must(200, "POST", "/v1/prompts/"+id+"/versions/2/publish", writer, nil)
	for range 5 {
		if v := liveRender(a, path, writer); v != 2 {
			t.Fatalf("publish during outage: rendered v%d", v)
		}
		a.Must(200, "GET", "/v1/prompts/"+id+"/live", writer, nil)
	}
	if a.Prompts.Stats().RedisErrors == 0 {
		t.Fatal("no Redis error counted during the outage")
	}

	startRedis(t, rs.port)
	// The cache leaves Redis alone for a second after a failure.
	for deadline := time.Now().Add(10 * time.Second); !a.Prompts.RedisUp(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the prompt cache did not try Redis again")
		}
	}
	a.Must(201, "POST", "/v1/prompts/"+id+"/versions", writer, obj{"template": "v3 {{x}}"})
	a.Must(200, "POST", "/v1/prompts/"+id+"/versions/3/publish", writer, nil)
	if v := liveRender(a, path, writer); v != 3 {
		t.Fatalf("after recovery: v%d", v)
	}
	// A second process on the same Redis is answered by the shared tier
	// that a filled, and hears a's invalidations.
	b := testenv.NewWith(t, testenv.Options{Root: root, RedisURL: url, Prefix: "outage:"})
	if v := liveRender(b, path, writer); v != 3 {
		t.Fatalf("b: v%d", v)
	}
	if st := b.Prompts.Stats(); st.RedisHits != 1 || st.Loads != 0 {
		t.Fatalf("b not served by Redis after recovery: %+v", st)
	}
	before := b.Prompts.Stats().Invalidations
	deadline := time.Now().Add(5 * time.Second)
	for b.Prompts.Stats().Invalidations == before && time.Now().Before(deadline) {
		a.Must(200, "POST", "/v1/prompts/"+id+"/cache/purge", admin, nil)
		time.Sleep(50 * time.Millisecond)
	}
	if b.Prompts.Stats().Invalidations == before {
		t.Fatal("b hears no invalidation after Redis came back")
	}
	before = a.Prompts.Stats().Invalidations
	deadline = time.Now().Add(5 * time.Second)
	for a.Prompts.Stats().Invalidations == before && time.Now().Before(deadline) {
		b.Must(200, "POST", "/v1/prompts/"+id+"/cache/purge", admin, nil)
		time.Sleep(50 * time.Millisecond)
	}
	if a.Prompts.Stats().Invalidations == before {
		t.Fatal("a's subscription did not come back with Redis")
	}
}
