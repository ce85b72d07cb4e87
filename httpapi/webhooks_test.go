package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/quire/quire/internal/server"
	"github.com/quire/quire/internal/testenv"
)

// receiver is a webhook receiver on 127.0.0.1 that keeps every request.
// answer, when set, chooses the answer to the nth request (from 1).
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{t: t, answer: answer}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{header: r.Header.Clone(), body: body})
		n := len(rc.got)
		rc.mu.Unlock()
		if rc.answer != nil {
			rc.answer(n, w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// events are the envelopes received, in order, duplicates included.
func (rc *receiver) events() []map[string]any {
	var out []map[string]any
	for _, r := range rc.requests() {
		var m map[string]any
		if err := json.Unmarshal(r.body, &m); err != nil {
			rc.t.Fatalf("receiver got a body that is not JSON: %q", r.body)
		}
		out = append(out, m)
	}
	return out
}

// types are the event types received, in order.
func (rc *receiver) types() []string {
	var out []string
	for _, ev := range rc.events() {
		out = append(out, ev["type"].(string))
	}
	return out
}

// waitUntil polls cond until it holds or 15 seconds pass.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// webhookEnv is a server whose webhooks may reach 127.0.0.1, retrying on
// schedule.
func webhookEnv(t *testing.T, schedule ...time.Duration) *testenv.Env {
	if schedule == nil {
		schedule = []time.Duration{}
	}
	return newEnv(t, testenv.Options{Webhooks: server.WebhookOptions{AllowPrivate: true, RetrySchedule: schedule, Timeout: 2 * time.Second}})
}

// createWebhook subscribes url to events in project pid and returns the
// webhook id and secret.
func createWebhook(t *testing.T, e *testenv.Env, pid, url string, events ...string) (id, secret string) {
	t.Helper()
	r := e.Must(201, "POST", "/v1/projects/"+pid+"/webhooks", e.Admin, map[string]any{"url": url, "events": events})
	m := r.JSON(t)
	return str(t, m, "webhook", "id"), str(t, m, "secret")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestWebhookDelivery follows a skill's life through a webhook: every
// change arrives once, in order, in the documented envelope, signed so
// that the Standard Webhooks reference library verifies it; a burst of
// edits to a draft arrives as at most one version.updated a second, the
// last carrying the draft's head.
func TestWebhookDelivery(t *testing.T) {
	e := webhookEnv(t)
	rc := newReceiver(t, nil)
	pid := e.CreateProject(e.Admin, "hooks")
	hid, secret := createWebhook(t, e, pid, rc.srv.URL+"/hook", "*")
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q lacks whsec_", secret)
	}

	// The secret is shown once: never in a read.
	for _, path := range []string{"/webhooks", "/webhooks/" + hid} {
		r := e.Must(200, "GET", "/v1/projects/"+pid+path, e.Admin, nil)
		if strings.Contains(string(r.Body), "secret") || strings.Contains(string(r.Body), strings.TrimPrefix(secret, "whsec_")) {
			t.Errorf("GET %s shows the secret: %s", path, r.Body)
		}
	}
	got := e.Must(200, "GET", "/v1/projects/"+pid+"/webhooks/"+hid, e.Admin, nil).JSON(t)
	if str(t, got, "webhook", "url") != rc.srv.URL+"/hook" || get(t, got, "webhook", "active") != true {
		t.Errorf("webhook read back: %v", got)
	}

	sid := e.CreateSkill(e.Admin, pid, "pdf")
	s := &skill{e: e, projectID: pid, id: sid, slug: "pdf"}
	n := s.draft(t, nil)
	var head string
	for i := range 5 { // a burst: coalesced
		head = str(t, s.put(t, n, "notes.md", fmt.Sprintf("edit %d\n", i)), "version", "commit")
	}
	pub := s.publish(t, n)
	pubCommit := str(t, pub, "version", "commit")

	waitUntil(t, "version.published", func() bool { return contains(rc.types(), "version.published") })
	types := rc.types()
	if types[0] != "asset.created" || types[1] != "version.created" || types[len(types)-1] != "version.published" {
		t.Errorf("event order: %v", types)
	}
	updates := 0
	for _, ty := range types {
		if ty == "version.updated" {
			updates++
		}
	}
	// Six writes (five edits and SKILL.md) within about a second: one
	// event at once, and at most one trailing event per window.
	if updates < 1 || updates > 3 {
		t.Errorf("%d version.updated events for a burst of 6 edits, want 1 to 3: %v", updates, types)
	}

	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rc.requests() {
		if err := wh.Verify(r.body, r.header); err != nil {
			t.Errorf("signature of %s does not verify: %v", r.body, err)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		var ev map[string]any
		json.Unmarshal(r.body, &ev)
		if id := r.header.Get("webhook-id"); id != ev["id"] {
			t.Errorf("webhook-id %q, event id %v", id, ev["id"])
		}
		if seen[ev["id"].(string)] {
			t.Errorf("event %v delivered twice", ev["id"])
		}
		seen[ev["id"].(string)] = true
	}

	// The envelope.
	evs := rc.events()
	last := evs[len(evs)-1]
	if last["project_id"] != pid || get(t, last, "asset", "kind") != "skill" || get(t, last, "asset", "id") != sid ||
		get(t, last, "asset", "slug") != "pdf" || num(t, last, "version") != n || get(t, last, "data", "commit") != pubCommit ||
		get(t, last, "actor", "type") != "user" || get(t, last, "actor", "email") != testenv.AdminEmail {
		t.Errorf("version.published envelope: %v", last)
	}
	if _, err := time.Parse(time.RFC3339Nano, last["occurred_at"].(string)); err != nil {
		t.Errorf("occurred_at: %v", err)
	}
	// The last version.updated carries the draft's head before publish
	// wrote SKILL.md, or SKILL.md's commit, which is the published one.
	var lastUpdate map[string]any
	for _, ev := range evs {
		if ev["type"] == "version.updated" {
			lastUpdate = ev
		}
	}
	if c := get(t, lastUpdate, "data", "commit"); c != pubCommit && c != head {
		for _, ev := range evs {
			t.Logf("%v %v", ev["type"], ev["data"])
		}
		t.Errorf("last version.updated at %v, want the draft's head %s (or %s)", c, pubCommit, head)
	}
	// Ids sort by time.
	for i := 1; i < len(evs); i++ {
		if evs[i]["id"].(string) <= evs[i-1]["id"].(string) {
			t.Errorf("event ids out of order: %v then %v", evs[i-1]["id"], evs[i]["id"])
		}
	}

	// Deliveries: one row per attempt, newest first. A row is written
	// once the receiver has answered, so the last may come just after
	// the receiver saw its request.
	var ds []any
	waitUntil(t, "a delivery row for each request", func() bool {
		ds = arr(t, e.Must(200, "GET", "/v1/projects/"+pid+"/webhooks/"+hid+"/deliveries", e.Admin, nil).JSON(t), "deliveries")
		return len(ds) >= len(evs)
	})
	if len(ds) != len(evs) {
		t.Fatalf("%d delivery rows for %d requests", len(ds), len(evs))
	}
	if d := ds[0].(map[string]any); d["event_type"] != "version.published" || num(t, d, "status_code") != 204 || num(t, d, "attempt") != 1 {
		t.Errorf("newest delivery: %v", d)
	}

	// Filters: a webhook on another asset only, and one on a type only,
	// hear nothing of pdf's changes but their own.
	rc2 := newReceiver(t, nil)
	createWebhook(t, e, pid, rc2.srv.URL, "version.deleted")
	n2 := s.draft(t, nil)
	e.Must(204, "DELETE", s.vurl(n2), e.Admin, nil)
	waitUntil(t, "version.deleted", func() bool { return len(rc2.requests()) == 1 })
	if ty := rc2.types(); ty[0] != "version.deleted" {
		t.Errorf("filtered webhook got %v", ty)
	}
}

// TestWebhookRetries: a receiver answering 500 gets the same event again
// on the retry schedule until it answers 2xx; every attempt is a row.
func TestWebhookRetries(t *testing.T) {
	e := webhookEnv(t, time.Millisecond, 2*time.Millisecond, 4*time.Millisecond)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n <= 2 {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	pid := e.CreateProject(e.Admin, "retry")
	hid, _ := createWebhook(t, e, pid, rc.srv.URL, "asset.created")
	e.CreateSkill(e.Admin, pid, "pdf")
	waitUntil(t, "three attempts", func() bool { return len(rc.requests()) >= 3 })
	reqs := rc.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d attempts, want 3", len(reqs))
	}
	for _, r := range reqs {
		if r.header.Get("webhook-id") != reqs[0].header.Get("webhook-id") {
			t.Errorf("retries carry different webhook-ids")
		}
	}
	var ds []any
	waitUntil(t, "three delivery rows", func() bool {
		ds = arr(t, e.Must(200, "GET", "/v1/projects/"+pid+"/webhooks/"+hid+"/deliveries", e.Admin, nil).JSON(t), "deliveries")
		return len(ds) == 3
	})
	for i, want := range []int{200, 500, 500} {
		d := ds[i].(map[string]any)
		if num(t, d, "status_code") != want || num(t, d, "attempt") != 3-i {
			t.Errorf("delivery %d: %v", i, d)
		}
	}
	if d := ds[2].(map[string]any); d["next_retry_at"] == nil || d["error"] == "" {
		t.Errorf("a failed attempt names its next retry and error: %v", d)
	}
	// A page of one, then the next.
	p1 := e.Must(200, "GET", "/v1/projects/"+pid+"/webhooks/"+hid+"/deliveries?limit=1", e.Admin, nil).JSON(t)
	cur := str(t, p1, "next_cursor")
	p2 := e.Must(200, "GET", "/v1/projects/"+pid+"/webhooks/"+hid+"/deliveries?limit=1&cursor="+cur, e.Admin, nil).JSON(t)
	if str(t, arr(t, p2, "deliveries")[0], "id") != str(t, ds[1], "id") {
		t.Errorf("second page: %v", p2)
	}

	// Redeliver the first attempt's event, and ping.
	e.Must(202, "POST", "/v1/projects/"+pid+"/webhooks/"+hid+"/deliveries/"+str(t, ds[2], "id")+"/redeliver", e.Admin, nil)
	waitUntil(t, "the redelivery", func() bool { return len(rc.requests()) == 4 })
	if rc.requests()[3].header.Get("webhook-id") != reqs[0].header.Get("webhook-id") {
		t.Errorf("redelivery is another event")
	}
	e.Must(202, "POST", "/v1/projects/"+pid+"/webhooks/"+hid+"/ping", e.Admin, nil)
	waitUntil(t, "the ping", func() bool { return len(rc.requests()) == 5 })
	if ty := rc.types()[4]; ty != "ping" {
		t.Errorf("ping arrived as %q", ty)
	}
	wantError(t, e.Do("POST", "/v1/projects/"+pid+"/webhooks/"+hid+"/deliveries/nope/redeliver", e.Admin, nil), 404)
}

// TestWebhookRetriesGiveUp: after the last retry the event is given up,
// and the webhook keeps delivering later events.
func TestWebhookRetriesGiveUp(t *testing.T) {
	e := webhookEnv(t, time.Millisecond)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	pid := e.CreateProject(e.Admin, "giveup")
	createWebhook(t, e, pid, rc.srv.URL, "asset.created")
	e.CreateSkill(e.Admin, pid, "one")
	waitUntil(t, "two attempts", func() bool { return len(rc.requests()) == 2 })
	e.CreateSkill(e.Admin, pid, "two")
	waitUntil(t, "the next event", func() bool { return len(rc.requests()) == 3 })
	if slug := rc.events()[2]["asset"].(map[string]any)["slug"]; slug != "two" {
		t.Errorf("third request is about %v", slug)
	}
}

// TestWebhookBadReceivers: a receiver that answers slowly, redirects,
// resets the connection, or sends a 100 MB body is a failed attempt on
// record; none stalls the others or the API.
func TestWebhookBadReceivers(t *testing.T) {
	e := newEnv(t, testenv.Options{Webhooks: server.WebhookOptions{AllowPrivate: true, RetrySchedule: []time.Duration{}, Timeout: 300 * time.Millisecond}})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var sent sync.Map // receiver → bytes of its 100 MB answer it got to write
	huge := func(name string, status int) func(n int, w http.ResponseWriter, r *http.Request) {
		return func(n int, w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			chunk := make([]byte, 1<<20)
			total := 0
			defer func() { sent.Store(name, total) }()
			for range 100 {
				k, err := w.Write(chunk)
				total += k
				if err != nil {
					return
				}
			}
		}
	}
	bad := map[string]func(n int, w http.ResponseWriter, r *http.Request){
		"slow": func(n int, w http.ResponseWriter, r *http.Request) { // past the timeout
			select {
			case <-release:
			case <-r.Context().Done():
			}
		},
		"redirect": func(n int, w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusFound)
		},
		"5xx": func(n int, w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		},
		"reset": func(n int, w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
			}
		},
		"huge": huge("huge", http.StatusInternalServerError),
	}
	pid := e.CreateProject(e.Admin, "bad")
	hooks := map[string]string{}
	for name, answer := range bad {
		rc := newReceiver(t, answer)
		hooks[name], _ = createWebhook(t, e, pid, rc.srv.URL, "asset.created")
	}
	// A 2xx with a 100 MB body is a success, read no further than needed.
	hugeOK := newReceiver(t, huge("huge 2xx", http.StatusOK))
	hooks["huge 2xx"], _ = createWebhook(t, e, pid, hugeOK.srv.URL, "asset.created")
	good := newReceiver(t, nil)
	createWebhook(t, e, pid, good.srv.URL, "asset.created")
	e.CreateSkill(e.Admin, pid, "pdf")
	waitUntil(t, "the good receiver", func() bool { return len(good.requests()) == 1 })
	// The queues go on: a second event gets its attempt everywhere.
	e.CreateSkill(e.Admin, pid, "two")
	waitUntil(t, "the good receiver's second event", func() bool { return len(good.requests()) == 2 })
	for name, hid := range hooks {
		var ds []any
		waitUntil(t, name+"'s attempts on record", func() bool {
			ds = arr(t, e.Must(200, "GET", "/v1/projects/"+pid+"/webhooks/"+hid+"/deliveries", e.Admin, nil).JSON(t), "deliveries")
			return len(ds) == 2
		})
		for _, d := range ds {
			d := d.(map[string]any)
			switch code := num(t, d, "status_code"); {
			case name == "huge 2xx":
				if code != 200 || d["error"] != "" {
					t.Errorf("%s: attempt recorded as %v", name, d)
				}
			case d["error"] == "" || code/100 == 2:
				t.Errorf("%s: attempt recorded as %v", name, d)
			case name == "redirect" && code != 302, name == "5xx" && code != 503, name == "huge" && code != 500:
				t.Errorf("%s recorded as %v", name, d)
			case (name == "slow" || name == "reset") && code != 0:
				t.Errorf("%s recorded as %v", name, d)
			}
		}
	}
	for _, name := range []string{"huge", "huge 2xx"} {
		waitUntil(t, name+"'s answer to end", func() bool { _, ok := sent.Load(name); return ok })
		if n, _ := sent.Load(name); n.(int) >= 100<<20 {
			t.Errorf("%s: all %d bytes of the answer were read", name, n)
		}
	}
}

// TestWebhookSSRF: URLs a server must not reach are refused at creation
// (422), unless --webhook-allow-private; bad subscriptions are 422 too.
func TestWebhookSSRF(t *testing.T) {
	e := newEnv(t)
	pid := e.CreateProject(e.Admin, "ssrf")
	for _, tc := range []struct{ url, msg string }{
		{"http://127.0.0.1:8080/hook", "loopback"},
		{"http://localhost/hook", "loopback"},
		{"http://[::1]/", "loopback"},
		{"http://[::ffff:127.0.0.1]/", "loopback"},
		{"http://10.1.2.3/", "private"},
		{"http://172.16.0.1/", "private"},
		{"http://192.168.1.1/", "private"},
		{"http://[fd00:ec2::254]/", "private"},
		{"http://169.254.169.254/latest/meta-data/", "link-local"},
		{"http://[fe80::1]/", "link-local"},
		{"http://100.100.100.200/", "reserved"},
		{"http://0.0.0.0/", "unspecified"},
		{"http://224.0.0.1/", "multicast"},
		{"ftp://example.com/", "absolute http"},
		{"/relative/path", "absolute http"},
		{"not a url", "absolute http"},
		{"http://user:pw@example.com/", "credentials"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			r := e.Do("POST", "/v1/projects/"+pid+"/webhooks", e.Admin, map[string]any{"url": tc.url, "events": []string{"*"}})
			wantError(t, r, 422, tc.msg)
		})
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		msg  string
	}{
		{"unknown types", map[string]any{"url": "http://192.0.2.1/", "events": []string{"version.published", "version.exploded", "nope"}}, "version.exploded"},
		{"no events", map[string]any{"url": "http://192.0.2.1/", "events": []string{}}, "at least one"},
		{"missing url", map[string]any{"events": []string{"*"}}, "url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.Do("POST", "/v1/projects/"+pid+"/webhooks", e.Admin, tc.body), 422, tc.msg)
		})
	}
	wantError(t, e.Do("POST", "/v1/projects/"+pid+"/webhooks", e.Admin, `{"url": 5}`), 400)
	// A public address is accepted, and PATCH checks the same rules.
	r := e.Must(201, "POST", "/v1/projects/"+pid+"/webhooks", e.Admin, map[string]any{"url": "http://192.0.2.1/hook", "events": []string{"*"}})
	hid := str(t, r.JSON(t), "webhook", "id")
	wantError(t, e.Do("PATCH", "/v1/projects/"+pid+"/webhooks/"+hid, e.Admin, map[string]any{"url": "http://127.0.0.1/"}), 422, "loopback")
	wantError(t, e.Do("PATCH", "/v1/projects/"+pid+"/webhooks/"+hid, e.Admin, map[string]any{"url": "ftp://example.com/"}), 422, "absolute http")
	wantError(t, e.Do("PATCH", "/v1/projects/"+pid+"/webhooks/"+hid, e.Admin, map[string]any{"url": "example.com/hook"}), 422, "absolute http")
	wantError(t, e.Do("PATCH", "/v1/projects/"+pid+"/webhooks/"+hid, e.Admin, map[string]any{"events": []string{"*", "label.exploded"}}), 422, "label.exploded")
	wantError(t, e.Do("GET", "/v1/projects/"+pid+"/events?types=version.published,bogus.type", e.Admin, nil, "Accept: text/event-stream"), 422, "bogus.type")
	up := e.Must(200, "PATCH", "/v1/projects/"+pid+"/webhooks/"+hid, e.Admin, map[string]any{"active": false, "description": "off"}).JSON(t)
	if get(t, up, "webhook", "active") != false || str(t, up, "webhook", "description") != "off" {
		t.Errorf("PATCH: %v", up)
	}
	e.Must(204, "DELETE", "/v1/projects/"+pid+"/webhooks/"+hid, e.Admin, nil)
	wantError(t, e.Do("GET", "/v1/projects/"+pid+"/webhooks/"+hid, e.Admin, nil), 404)

	// Only project owners manage webhooks; others may not see them.
	_, member := e.CreateUser("editor@example.com")
	e.Must(200, "POST", "/v1/projects/"+pid+"/members", e.Admin, map[string]string{"email": "editor@example.com", "role": "editor"})
	wantError(t, e.Do("GET", "/v1/projects/"+pid+"/webhooks", member, nil), 403)
	wantError(t, e.Do("POST", "/v1/projects/"+pid+"/webhooks", member, map[string]any{"url": "http://192.0.2.1/", "events": []string{"*"}}), 403)
}

// TestWebhookRotateSecret: after a rotation both secrets sign, so a
// receiver still on the old one verifies, and one on the new one too.
func TestWebhookRotateSecret(t *testing.T) {
	e := webhookEnv(t)
	rc := newReceiver(t, nil)
	pid := e.CreateProject(e.Admin, "rotate")
	hid, old := createWebhook(t, e, pid, rc.srv.URL, "asset.created")
	r := e.Must(200, "POST", "/v1/projects/"+pid+"/webhooks/"+hid+"/rotate-secret", e.Admin, nil).JSON(t)
	fresh := str(t, r, "secret")
	if fresh == old || !strings.HasPrefix(fresh, "whsec_") {
		t.Fatalf("rotated secret %q", fresh)
	}
	e.CreateSkill(e.Admin, pid, "pdf")
	waitUntil(t, "delivery", func() bool { return len(rc.requests()) == 1 })
	req := rc.requests()[0]
	if sigs := strings.Fields(req.header.Get("webhook-signature")); len(sigs) != 2 {
		t.Errorf("signatures after a rotation: %v", sigs)
	}
	for _, secret := range []string{old, fresh} {
		wh, _ := standardwebhooks.NewWebhook(secret)
		if err := wh.Verify(req.body, req.header); err != nil {
			t.Errorf("secret %s…: %v", secret[:10], err)
		}
	}
	other, _ := standardwebhooks.NewWebhook("whsec_" + strings.Repeat("A", 43) + "=")
	if other.Verify(req.body, req.header) == nil {
		t.Error("a wrong secret verifies")
	}
}

// TestEventsPolling: GET …/events answers the project's events in
// ascending order after an id, filtered; read access suffices.
func TestEventsPolling(t *testing.T) {
	e := newEnv(t)
	s := newSkill(t, e, "pdf")
	n := s.draft(t, nil)
	s.publish(t, n)
	reader := e.CreateKey(e.Admin, "read", s.projectID)
	all := arr(t, e.Must(200, "GET", "/v1/projects/"+s.projectID+"/events", reader, nil, "Accept: application/json").JSON(t), "events")
	var types []string
	for _, ev := range all {
		types = append(types, str(t, ev, "type"))
	}
	if len(types) < 4 || types[0] != "asset.created" || types[1] != "version.created" || types[len(types)-1] != "version.published" {
		t.Fatalf("events: %v", types)
	}
	first := str(t, all[0], "id")
	after := arr(t, e.Must(200, "GET", "/v1/projects/"+s.projectID+"/events?after="+first+"&limit=1", reader, nil).JSON(t), "events")
	if len(after) != 1 || str(t, after[0], "id") != str(t, all[1], "id") {
		t.Errorf("after=%s&limit=1: %v", first, after)
	}
	pubs := arr(t, e.Must(200, "GET", "/v1/projects/"+s.projectID+"/events?types=version.published&assets=pdf&limit=10", reader, nil).JSON(t), "events")
	if len(pubs) != 1 || str(t, pubs[0], "type") != "version.published" {
		t.Errorf("types filter: %v", pubs)
	}
	wantError(t, e.Do("GET", "/v1/projects/"+s.projectID+"/events?types=nope,version.created", reader, nil, "Accept: application/json"), 422, "nope")
	wantError(t, e.Do("GET", "/v1/projects/"+s.projectID+"/events?limit=0", reader, nil), 400)
	_, stranger := e.CreateUser("stranger@example.com")
	wantError(t, e.Do("GET", "/v1/projects/"+s.projectID+"/events?limit=5", stranger, nil), 404)
}

// sseEvent is one event of a Server-Sent Events stream.
type sseEvent struct{ id, event, data string }

// readSSE reads events from a stream into ch until it ends.
func readSSE(body io.Reader, ch chan<- sseEvent) {
	defer close(ch)
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.event != "" {
				ch <- cur
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		}
	}
}

func openStream(t *testing.T, e *testenv.Env, path, token string, header ...string) (chan sseEvent, func()) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("stream: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	ch := make(chan sseEvent, 100)
	go readSSE(resp.Body, ch)
	return ch, func() { resp.Body.Close() }
}

func next(t *testing.T, ch chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("stream ended")
		}
		return ev
	case <-time.After(15 * time.Second):
		t.Fatal("no event on the stream")
	}
	return sseEvent{}
}

// TestEventStream: the live stream sends each change as id, event and
// data (the envelope), honours filters, and Last-Event-ID resumes.
func TestEventStream(t *testing.T) {
	e := newEnv(t)
	s := newSkill(t, e, "pdf")
	reader := e.CreateKey(e.Admin, "read", s.projectID)
	ch, stop := openStream(t, e, "/v1/projects/"+s.projectID+"/events", reader)
	defer stop()
	pubs, stopPubs := openStream(t, e, "/v1/projects/"+s.projectID+"/events?types=version.published", reader)
	defer stopPubs()

	n := s.draft(t, nil)
	ev := next(t, ch)
	if ev.event != "version.created" || ev.id == "" {
		t.Fatalf("first streamed event: %+v", ev)
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(ev.data), &env); err != nil || env["id"] != ev.id || num(t, env, "version") != n {
		t.Fatalf("data: %s (%v)", ev.data, err)
	}
	s.publish(t, n)
	var last sseEvent
	for last.event != "version.published" {
		last = next(t, ch)
	}
	if p := next(t, pubs); p.event != "version.published" || p.id != last.id {
		t.Errorf("filtered stream: %+v, want %s", p, last.id)
	}

	// Resume after the first event: the rest again, in order.
	resumed, stopResumed := openStream(t, e, "/v1/projects/"+s.projectID+"/events", reader, "Last-Event-ID", ev.id)
	defer stopResumed()
	var again []string
	for {
		r := next(t, resumed)
		again = append(again, r.event)
		if r.id == last.id {
			break
		}
	}
	if again[len(again)-1] != "version.published" || contains(again, "version.created") {
		t.Errorf("resumed stream: %v", again)
	}
}

// TestGitPushEvents: a push to a draft produces version.updated, as the
// API's edits do, with data.commit the pushed head.
func TestGitPushEvents(t *testing.T) {
	f := newGitFixture(t)
	e, g := f.e, f.g
	cur := arr(t, e.Must(200, "GET", "/v1/projects/"+f.pid+"/events?limit=500", e.Admin, nil).JSON(t), "events")
	lastID := str(t, cur[len(cur)-1], "id")
	w := f.clone(e.Admin, "-b", "draft/2")
	tip := g.commitFile(w, "docs/guide.md", "# Guide\n")
	g.must(w, "push", "-q", "origin", "draft/2")
	var evs []any
	waitUntil(t, "the push's event", func() bool {
		evs = arr(t, e.Must(200, "GET", "/v1/projects/"+f.pid+"/events?after="+lastID, e.Admin, nil).JSON(t), "events")
		for _, ev := range evs {
			if get(t, ev, "data", "commit") == tip {
				return true
			}
		}
		return false
	})
	for _, ev := range evs {
		if get(t, ev, "data", "commit") == tip {
			if str(t, ev, "type") != "version.updated" || num(t, ev, "version") != 2 || get(t, ev, "asset", "slug") != "pdf" || get(t, ev, "actor", "type") != "user" {
				t.Errorf("push event: %v", ev)
			}
		}
	}
}

// TestWebhookDisabled: a webhook failing for longer than DisableAfter is
// turned off, says why, and the project gets a webhook.disabled event.
func TestWebhookDisabled(t *testing.T) {
	e := newEnv(t, testenv.Options{Webhooks: server.WebhookOptions{AllowPrivate: true, DisableAfter: 50 * time.Millisecond,
		RetrySchedule: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond, 100 * time.Millisecond}}})
	var failing atomic.Bool
	failing.Store(true)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusBadGateway)
		}
	})
	pid := e.CreateProject(e.Admin, "disable")
	hid, _ := createWebhook(t, e, pid, rc.srv.URL, "*")
	e.CreateSkill(e.Admin, pid, "pdf")
	var w map[string]any
	waitUntil(t, "the webhook to be disabled", func() bool {
		w = e.Must(200, "GET", "/v1/projects/"+pid+"/webhooks/"+hid, e.Admin, nil).JSON(t)
		return get(t, w, "webhook", "active") == false
	})
	if !strings.Contains(str(t, w, "webhook", "disabled_reason"), "failed since") {
		t.Errorf("disabled webhook: %v", w)
	}
	var evs []any // recorded just after the webhook is turned off
	waitUntil(t, "the webhook.disabled event", func() bool {
		evs = arr(t, e.Must(200, "GET", "/v1/projects/"+pid+"/events?types=webhook.disabled&limit=10", e.Admin, nil).JSON(t), "events")
		return len(evs) > 0
	})
	if len(evs) != 1 || get(t, evs[0], "data", "webhook_id") != hid || get(t, evs[0], "actor", "type") != "system" {
		t.Errorf("webhook.disabled events: %v", evs)
	}
	// Turned on again, it delivers.
	failing.Store(false)
	e.Must(200, "PATCH", "/v1/projects/"+pid+"/webhooks/"+hid, e.Admin, map[string]any{"active": true})
	e.CreateSkill(e.Admin, pid, "two")
	waitUntil(t, "delivery after re-enabling", func() bool {
		for _, ev := range rc.events() {
			if as, ok := ev["asset"].(map[string]any); ok && as["slug"] == "two" {
				return true
			}
		}
		return false
	})
}

// TestPromptEvents: prompts produce the same life-cycle events as skills.
func TestPromptEvents(t *testing.T) {
	e := newEnv(t)
	pid := e.CreateProject(e.Admin, "prompts")
	id := e.CreatePrompt(e.Admin, pid, "greet")
	v := e.Must(201, "POST", "/v1/prompts/"+id+"/versions", e.Admin, map[string]any{"template": "Hi {{name}}", "model": "m"}).JSON(t)
	e.Must(200, "PATCH", "/v1/prompts/"+id+"/versions/1", e.Admin, map[string]any{"template": "Hello {{name}}"})
	pub := e.Must(200, "POST", "/v1/prompts/"+id+"/versions/1/publish", e.Admin, nil).JSON(t)
	e.Must(204, "DELETE", "/v1/prompts/"+id, e.Admin, nil)
	evs := arr(t, e.Must(200, "GET", "/v1/projects/"+pid+"/events?limit=50", e.Admin, nil).JSON(t), "events")
	var types []string
	for _, ev := range evs {
		types = append(types, str(t, ev, "type"))
		if get(t, ev, "asset", "kind") != "prompt" || get(t, ev, "asset", "slug") != "greet" {
			t.Errorf("event about %v", get(t, ev, "asset"))
		}
	}
	if strings.Join(types, ",") != "asset.created,version.created,version.updated,version.published,asset.deleted" {
		t.Errorf("prompt events: %v", types)
	}
	if get(t, evs[1], "data", "commit") != str(t, v, "version", "commit") || get(t, evs[3], "data", "commit") != str(t, pub, "version", "commit") {
		t.Errorf("commits: %v / %v", evs[1], evs[3])
	}
}

// TestReviewLabelEvents: review actions and label moves are events too,
// naming the review's number or the label.
func TestReviewLabelEvents(t *testing.T) {
	e := newEnv(t)
	s := newSkill(t, e, "pdf")
	n := s.draft(t, nil)
	e.Must(201, "POST", fmt.Sprintf("/v1/skills/%s/versions/%d/reviews", s.id, n), e.Admin, map[string]string{"title": "first"})
	e.Must(201, "POST", "/v1/skills/"+s.id+"/reviews/1/comments", e.Admin, map[string]string{"body": "looks fine"})
	s.publish(t, n)
	e.Must(200, "PUT", "/v1/skills/"+s.id+"/labels/staging", e.Admin, map[string]any{"version": n})
	e.Must(204, "DELETE", "/v1/skills/"+s.id+"/labels/staging", e.Admin, nil)
	evs := arr(t, e.Must(200, "GET", "/v1/projects/"+s.projectID+"/events?types=review.opened,review.commented,review.merged,label.moved,label.deleted&limit=50", e.Admin, nil).JSON(t), "events")
	var got []string
	for _, ev := range evs {
		m := ev.(map[string]any)
		desc := str(t, ev, "type")
		if r, ok := m["review"]; ok {
			desc += fmt.Sprintf(" #%v", r)
		}
		if l, ok := m["label"]; ok {
			desc += " " + l.(string)
		}
		if get(t, ev, "asset", "slug") != "pdf" {
			t.Errorf("event about %v", get(t, ev, "asset"))
		}
		got = append(got, desc)
	}
	want := "review.opened #1,review.commented #1,review.merged #1,label.moved staging,label.deleted staging"
	if strings.Join(got, ",") != want {
		t.Errorf("events:\n got %v\nwant %v", strings.Join(got, ","), want)
	}
}
