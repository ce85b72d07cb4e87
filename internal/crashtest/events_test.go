package crashtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
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
// receiver was down until the kill, so none could be delivered before it.
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
	deadline = time.Now().Add(60 * time.Second)
	for _, id := range acked {
		for !rc.has(id) {
			if time.Now().After(deadline) {
				t.Fatalf("after the restart, the event of acknowledged skill %s never arrived (%d acknowledged)\n%s", id, len(acked), srv.logs.Tail(3000))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Logf("%d acknowledged writes, every event delivered after the restart", len(acked))
	if err := srv.stop(); err != nil {
		t.Error(err)
	}
	srv = nil
}
