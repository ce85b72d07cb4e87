package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/eventlog"
	"github.com/quire/quire/internal/server"
	"github.com/quire/quire/internal/testenv"
)

// TestEventStreamHeartbeat: an idle stream sends a ": heartbeat" comment
// every interval (15 s by default; shortened here), and keeps sending.
func TestEventStreamHeartbeat(t *testing.T) {
	e := newEnv(t, testenv.Options{Webhooks: server.WebhookOptions{Heartbeat: 20 * time.Millisecond}})
	pid := e.CreateProject(e.Admin, "beat")
	req, _ := http.NewRequest("GET", e.URL+"/v1/projects/"+pid+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+e.Admin)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	beats := 0
	for beats < 3 && sc.Scan() {
		lines = append(lines, sc.Text())
		if sc.Text() == ": heartbeat" {
			beats++
		}
	}
	if beats < 3 {
		t.Fatalf("stream ended after %q (%v)", lines, sc.Err())
	}
	if lines[0] != "retry: 2000" || lines[1] != ": stream of project events" {
		t.Errorf("stream opens with %q", lines[:2])
	}
	for _, l := range lines[1:] {
		if l != "" && !strings.HasPrefix(l, ": ") {
			t.Errorf("an idle stream sent %q", l)
		}
	}
}

// TestEventStreamOverflow: a subscriber that stops reading while events
// flood in, beyond the retained window, does not hold up the writers or
// another subscriber, who gets every event; when it reads again it gets
// what was sent to it, then a final "event: overflow" naming the last id
// it got (resume_after), and the stream ends.
func TestEventStreamOverflow(t *testing.T) {
	root := t.TempDir()
	keep := server.WebhookOptions{Keep: 10, KeepFor: time.Nanosecond}
	e := newEnv(t, testenv.Options{Root: root, Webhooks: keep})
	pid := e.CreateProject(e.Admin, "flood")
	e.CreateSkill(e.Admin, pid, "pdf") // the project's log exists
	fast, stopFast := openStream(t, e, "/v1/projects/"+pid+"/events", e.Admin)
	defer stopFast()

	// The slow subscriber: a small receive buffer, and no reading for now.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/projects/%s/events HTTP/1.1\r\nHost: quire\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n", pid, e.Admin)
	slow := bufio.NewReader(conn)
	resp, err := http.ReadResponse(slow, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("slow stream: %v %v", resp, err)
	}
	body := bufio.NewReader(resp.Body)
	if l, _ := body.ReadString('\n'); l != "retry: 2000\n" {
		t.Fatalf("slow stream opens with %q", l)
	}
	if l, _ := body.ReadString('\n'); l != ": stream of project events\n" {
		t.Fatalf("slow stream's second line %q", l)
	}

	// Another process sharing the data root writes big events, a few at
	// a time: the fast subscriber gets each round before the next, so it
	// never falls out of the window; the slow one's writes block.
	other, err := eventlog.Open(eventlog.Options{Root: filepath.Join(root, "_events"), Keep: keep.Keep, KeepFor: keep.KeepFor})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	pad := strings.Repeat("x", 256<<10)
	var last string
	for range 8 {
		var evs []*quire.Event
		for range 5 {
			evs = append(evs, &quire.Event{Type: quire.EventVersionUpdated, OccurredAt: time.Now().UTC(), ProjectID: pid, Actor: quire.EventActor{Type: "system", ID: "quire"}, Data: map[string]any{"pad": pad}})
		}
		if err := other.Append(context.Background(), pid, evs...); err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			for {
				got := next(t, fast)
				if got.event == "overflow" {
					t.Fatalf("the fast subscriber overflowed: %s", got.data)
				}
				if got.id == ev.ID {
					break
				}
			}
			last = ev.ID
		}
	}

	// The slow one reads again: what was sent to it, then the overflow.
	ch := make(chan sseEvent, 100)
	go readSSE(body, ch)
	var seen string
	var overflow sseEvent
	for overflow.event == "" {
		ev := next(t, ch)
		switch ev.event {
		case "overflow":
			overflow = ev
		case "version.updated":
			if ev.id <= seen {
				t.Fatalf("slow stream: %s after %s", ev.id, seen)
			}
			seen = ev.id
		}
	}
	var o struct {
		ResumeAfter string `json:"resume_after"`
	}
	if err := json.Unmarshal([]byte(overflow.data), &o); err != nil || o.ResumeAfter == "" {
		t.Fatalf("overflow data %q: %v", overflow.data, err)
	}
	if o.ResumeAfter != seen || seen >= last {
		t.Errorf("overflow resumes after %s; the slow subscriber saw up to %s, the log is at %s", o.ResumeAfter, seen, last)
	}
	if _, ok := <-ch; ok {
		t.Error("the stream goes on after the overflow")
	}
	// The id is good to resume from: what follows it was dropped, so a
	// poll after it starts with the oldest retained event.
	evs := arr(t, e.Must(200, "GET", "/v1/projects/"+pid+"/events?after="+o.ResumeAfter+"&limit=500", e.Admin, nil).JSON(t), "events")
	if len(evs) == 0 || str(t, evs[len(evs)-1], "id") != last {
		t.Errorf("resuming after %s: %d events", o.ResumeAfter, len(evs))
	}
}
