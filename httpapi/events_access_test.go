package httpapi_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire/quire/internal/server"
	"github.com/quire/quire/internal/testenv"
)

// rawStream opens an event stream and sends its lines on the returned
// channel until it ends, when the channel closes.
func rawStream(t *testing.T, e *testenv.Env, path, token string, header ...string) <-chan string {
	t.Helper()
	req, _ := http.NewRequest("GET", e.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	ch := make(chan string, 1000)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// waitEnd reads the stream's lines until it ends, failing after within.
func waitEnd(t *testing.T, ch <-chan string, within time.Duration) []string {
	t.Helper()
	var lines []string
	deadline := time.After(within)
	for {
		select {
		case l, ok := <-ch:
			if !ok {
				return lines
			}
			lines = append(lines, l)
		case <-deadline:
			t.Fatalf("stream still open after %v: %q", within, lines)
		}
	}
}

// TestEventStreamAccessEnds: an open event stream ends soon after its
// caller loses access: removed from the project, disabled, their session
// revoked, their API key deleted or rotated. Each change is made through
// this server, which re-checks every open stream at once.
func TestEventStreamAccessEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pid := e.CreateProject(e.Admin, "watched")
	type setup struct {
		token  string
		revoke func()
	}
	member := func(email string) (string, string) {
		uid, tok := e.CreateUser(email)
		e.Must(200, "POST", "/v1/projects/"+pid+"/members", e.Admin, obj{"email": email, "role": "viewer"})
		return uid, tok
	}
	cases := map[string]func() setup{
		"member removed": func() setup {
			uid, tok := member("removed@example.com")
			return setup{tok, func() { e.Must(204, "DELETE", "/v1/projects/"+pid+"/members/"+uid, e.Admin, nil) }}
		},
		"user disabled": func() setup {
			uid, tok := member("disabled@example.com")
			return setup{tok, func() { e.Must(200, "PATCH", "/v1/users/"+uid, e.Admin, obj{"disabled": true}) }}
		},
		"session revoked": func() setup {
			_, tok := member("revoked@example.com")
			sid := str(t, e.Must(200, "GET", "/v1/auth/me", tok, nil).JSON(t), "session_id")
			return setup{tok, func() { e.Must(204, "DELETE", "/v1/auth/sessions/"+sid, e.Admin, nil) }}
		},
		"key deleted": func() setup {
			_, tok := member("keyed@example.com")
			key := e.CreateKey(tok, "read")
			kid := str(t, e.Must(200, "GET", "/v1/auth/me", key, nil).JSON(t), "api_key", "id")
			return setup{key, func() { e.Must(204, "DELETE", "/v1/api-keys/"+kid, tok, nil) }}
		},
		"key rotated": func() setup {
			_, tok := member("rotated@example.com")
			key := e.CreateKey(tok, "read")
			kid := str(t, e.Must(200, "GET", "/v1/auth/me", key, nil).JSON(t), "api_key", "id")
			return setup{key, func() { e.Must(200, "POST", "/v1/api-keys/"+kid+"/rotate", tok, nil) }}
		},
	}
	var mu sync.Mutex // the cases share one server: one at a time
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			mu.Lock()
			defer mu.Unlock()
			s := mk()
			ch := rawStream(t, e, "/v1/projects/"+pid+"/events", s.token)
			if l := <-ch; !strings.HasPrefix(l, "retry: ") {
				t.Errorf("stream opens with %q, want a retry: hint", l)
			}
			s.revoke()
			waitEnd(t, ch, 10*time.Second)
			if r := e.Do("GET", "/v1/projects/"+pid+"/events?limit=1", s.token, nil); r.Status != 401 && r.Status != 404 {
				t.Errorf("after the change the events answer %d, want 401 or 404", r.Status)
			}
		})
	}
	// The admin's own stream is untouched by all of it.
	ch := rawStream(t, e, "/v1/projects/"+pid+"/events", e.Admin)
	e.CreateSkill(e.Admin, pid, "after")
	for l := range ch {
		if strings.HasPrefix(l, "event: asset.created") {
			return
		}
	}
	t.Fatal("the admin's stream ended")
}

// TestEventStreamRecheck: a change this server did not make (here a
// session that expires by the clock) still ends the stream, at the next
// periodic re-check (every 30 s by default; shortened here).
func TestEventStreamRecheck(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	e := newEnv(t, testenv.Options{Clock: clock, Webhooks: server.WebhookOptions{Recheck: 100 * time.Millisecond}})
	pid := e.CreateProject(e.Admin, "expiring")
	_, tok := e.CreateUser("expiring@example.com")
	e.Must(200, "POST", "/v1/projects/"+pid+"/members", e.Admin, obj{"email": "expiring@example.com", "role": "viewer"})
	ch := rawStream(t, e, "/v1/projects/"+pid+"/events", tok)
	<-ch
	mu.Lock()
	now = now.Add(365 * 24 * time.Hour)
	mu.Unlock()
	waitEnd(t, ch, 10*time.Second)
}

// TestEventStreamMaxDuration: a stream ends by itself after its maximum
// duration, with a retry: hint and the id to resume from, so an
// EventSource reconnects with Last-Event-ID and misses nothing.
func TestEventStreamMaxDuration(t *testing.T) {
	t.Parallel()
	e := newEnv(t, testenv.Options{Webhooks: server.WebhookOptions{StreamMax: 500 * time.Millisecond}})
	pid := e.CreateProject(e.Admin, "bounded")
	ch := rawStream(t, e, "/v1/projects/"+pid+"/events", e.Admin)
	e.CreateSkill(e.Admin, pid, "one")
	lines := waitEnd(t, ch, 10*time.Second)
	var lastID string
	retry := false
	for _, l := range lines {
		if id, ok := strings.CutPrefix(l, "id: "); ok {
			lastID, retry = id, false
		}
		retry = retry || strings.HasPrefix(l, "retry: ")
	}
	if lastID == "" || !retry {
		t.Fatalf("stream ended with %q, want an id and a retry: hint", lines)
	}
	// Resuming from that id gets what came after, and nothing before.
	e.CreateSkill(e.Admin, pid, "two")
	ch = rawStream(t, e, "/v1/projects/"+pid+"/events", e.Admin, "Last-Event-ID", lastID)
	for l := range ch {
		if strings.HasPrefix(l, "data: ") {
			if !strings.Contains(l, `"two"`) {
				t.Fatalf("resumed stream sent %s first", l)
			}
			return
		}
	}
	t.Fatal("resumed stream ended before the event")
}
