package crashtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// eventReceiver is a webhook receiver on 127.0.0.1 that, while down,
// holds each request without an answer (so no attempt ends and no retry
// budget is spent before the kill), and otherwise keeps the asset ids of
// the asset.created events it gets.
type eventReceiver struct {
	srv  *httptest.Server
	down atomic.Bool
	mu   sync.Mutex
	got  map[string]int // asset id → deliveries
}

func newEventReceiver(t *testing.T) *eventReceiver {
	rc := &eventReceiver{got: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if rc.down.Load() {
			<-r.Context().Done() // the server died, or gave up
			return
		}
		var ev struct {
			Type  string
			Asset struct{ ID string }
		}
		if json.Unmarshal(body, &ev) == nil && ev.Type == "asset.created" {
			rc.mu.Lock()
			rc.got[ev.Asset.ID]++
			rc.mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *eventReceiver) has(id string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.got[id] > 0
}

// webhookEnv lets the server's webhooks reach the receiver on 127.0.0.1
// and retry at once.
var webhookEnv = []string{"env", "QUIRE_WEBHOOK_ALLOW_PRIVATE=true", "QUIRE_WEBHOOK_RETRY_SCHEDULE=20ms,20ms,20ms", "QUIRE_WEBHOOK_TIMEOUT=5m"}

// TestCrashEventsDelivered: every write the server acknowledged before a
// SIGKILL has its event delivered once the server is back, although the
// receiver was down until the kill, so none could be delivered before it;
// so has every skill found in git after the restart, acknowledged or not,
// and a write killed after it landed in git but before its event was
// recorded (the event log's lock held by the test to stop it there).
func TestCrashEventsDelivered(t *testing.T) {
	bin := quireBinary(t)
	root := t.TempDir()
	rc := newEventReceiver(t)
	rc.down.Store(true)

	srv, err := startWrapped(t, webhookEnv, bin, root, false, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if srv != nil {
			srv.kill()
		}
	}()
	c := newClient(srv.URL, "")
	defer c.close()
	r, err := c.call("POST", "/v1/auth/login", map[string]string{"email": adminEmail, "password": adminPassword})
	if err != nil || expect(r, 200, "login") != nil {
		t.Fatalf("login: %v %v", err, r)
	}
	var login struct{ Token string }
	r.decode(&login)
	c = c.with(login.Token)
	r, err = c.call("POST", "/v1/projects", map[string]string{"name": "Events", "slug": "events"})
	if err != nil || expect(r, 201, "project") != nil {
		t.Fatalf("project: %v %s", err, r.body)
	}
	var pr struct{ Project struct{ ID string } }
	r.decode(&pr)
	r, err = c.call("POST", "/v1/projects/"+pr.Project.ID+"/webhooks", map[string]any{"url": rc.srv.URL, "events": []string{"asset.created"}})
	if err != nil || expect(r, 201, "webhook") != nil {
		t.Fatalf("webhook: %v %s", err, r.body)
	}

	// Writers create skills until the kill; what got a 201 was acknowledged.
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r, err := c.call("POST", "/v1/projects/"+pr.Project.ID+"/skills", map[string]string{"name": fmt.Sprintf("s%d-%d", w, i), "slug": fmt.Sprintf("s%d-%d", w, i)})
				if err != nil {
					return // the server died
				}
				if r.status == 201 {
					var sk struct{ Skill struct{ ID string } }
					r.decode(&sk)
					mu.Lock()
					acked = append(acked, sk.Skill.ID)
					mu.Unlock()
				}
			}
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	srv.kill()
	close(stop)
	wg.Wait()
	srv = nil
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged before the kill")
	}
	for _, id := range acked {
		if rc.has(id) {
			t.Fatalf("event of %s delivered while the receiver was down", id)
		}
	}

	rc.down.Store(false)
	srv, err = startWrapped(t, webhookEnv, bin, root, false, true)
	if err != nil {
		t.Fatal(err)
	}
	c = newClient(srv.URL, "")
	defer c.close()
	r, err = c.call("POST", "/v1/auth/login", map[string]string{"email": adminEmail, "password": adminPassword})
	if err != nil || expect(r, 200, "login") != nil {
		t.Fatalf("login: %v %v", err, r)
	}
	r.decode(&login) // sessions of a killed server are gone
	c = c.with(login.Token)
	// Every skill in git has its event delivered: the acknowledged ones,
	// and any whose write landed just before the kill, unacknowledged.
	waitDelivered(t, srv, rc, acked, "acknowledged")
	waitDelivered(t, srv, rc, skillIDs(t, c, pr.Project.ID), "in git")
	t.Logf("%d acknowledged writes, every event delivered after the restart", len(acked))

	// The window itself: the event log's lock is held, so a write lands
	// in git and waits for its event; the server is killed right there.
	// Its event must come after the restart (an intent recorded before
	// the write says what to look for).
	release := flockFile(t, filepath.Join(root, "_events", pr.Project.ID, "events.lock"))
	go c.call("POST", "/v1/projects/"+pr.Project.ID+"/skills", map[string]string{"name": "Held", "slug": "held"})
	var held string
	deadline = time.Now().Add(30 * time.Second)
	for held == "" {
		if time.Now().After(deadline) {
			t.Fatalf("the held write never landed in git\n%s", srv.logs.Tail(3000))
		}
		r, err := c.call("GET", "/v1/skills/held", nil)
		if err == nil && r.status == 200 {
			var sk struct{ Skill struct{ ID string } }
			r.decode(&sk)
			held = sk.Skill.ID
		}
		time.Sleep(5 * time.Millisecond)
	}
	srv.kill()
	srv = nil
	release()
	if rc.has(held) {
		t.Fatal("the held write's event was delivered before it was recorded")
	}
	srv, err = startWrapped(t, webhookEnv, bin, root, false, true)
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, srv, rc, []string{held}, "in git, killed before its event")
	if err := srv.stop(); err != nil {
		t.Error(err)
	}
	srv = nil
}

// waitDelivered waits until the receiver has the asset.created event of
// every skill in ids.
func waitDelivered(t *testing.T, srv *server, rc *eventReceiver, ids []string, what string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range ids {
		for !rc.has(id) {
			if time.Now().After(deadline) {
				t.Fatalf("after the restart, the event of skill %s (%s) never arrived\n%s", id, what, srv.logs.Tail(3000))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// skillIDs lists the ids of every skill of the project.
func skillIDs(t *testing.T, c *client, pid string) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for {
		r, err := c.call("GET", "/v1/projects/"+pid+"/skills?limit=500&cursor="+cursor, nil)
		if err != nil || expect(r, 200, "list skills") != nil {
			t.Fatalf("list skills: %v %v", err, r)
		}
		var page struct {
			Skills     []struct{ ID string }
			NextCursor string `json:"next_cursor"`
		}
		r.decode(&page)
		for _, s := range page.Skills {
			ids = append(ids, s.ID)
		}
		if cursor = page.NextCursor; cursor == "" {
			return ids
		}
	}
}

// flockFile takes the flock(2) lock of path, as a quire process would,
// and returns its release.
func flockFile(t *testing.T, path string) func() {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}
