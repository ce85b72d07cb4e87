package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEventsMeasured measures what issue 18 asks of events (figures in
// docs/events.md): (1) one change fanned out to 1,000 stream subscribers
// of a project, (2) 1,000 events produced in a burst, delivered to a
// loopback receiver. It is a measurement, not a check of behaviour, so
// it runs only with QUIRE_EVENTS_MEASURE=1:
//
//	QUIRE_EVENTS_MEASURE=1 go test -run TestEventsMeasured -v ./httpapi
func TestEventsMeasured(t *testing.T) {
	if os.Getenv("QUIRE_EVENTS_MEASURE") != "1" {
		t.Skip("set QUIRE_EVENTS_MEASURE=1 to measure")
	}
	t.Run("fanout", measureFanout)
	t.Run("burst", measureBurst)
}

func pct(ds []time.Duration, p float64) time.Duration {
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(float64(len(ds))*p))]
}

func measureFanout(t *testing.T) {
	e := webhookEnv(t)
	pid := e.CreateProject(e.Admin, "fanout")
	const subs = 1000
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: subs}}
	var ready, got sync.WaitGroup
	ready.Add(subs)
	got.Add(subs)
	arrived := make([]time.Time, subs)
	var bodies []io.Closer
	var mu sync.Mutex
	for i := range subs {
		go func() {
			req, _ := http.NewRequest("GET", e.URL+"/v1/projects/"+pid+"/events", nil)
			req.Header.Set("Authorization", "Bearer "+e.Admin)
			resp, err := hc.Do(req)
			if err != nil {
				t.Error(err)
				ready.Done()
				got.Done()
				return
			}
			mu.Lock()
			bodies = append(bodies, resp.Body)
			mu.Unlock()
			r := bufio.NewReader(resp.Body)
			r.ReadString('\n') // the opening comment: subscribed
			ready.Done()
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					got.Done()
					return
				}
				if strings.HasPrefix(line, "event: ") {
					arrived[i] = time.Now()
					got.Done()
					io.Copy(io.Discard, r)
					return
				}
			}
		}()
	}
	ready.Wait()
	start := time.Now()
	e.CreateSkill(e.Admin, pid, "pdf") // acknowledged: its event is in the log
	got.Wait()
	var lat []time.Duration
	for _, at := range arrived {
		if !at.IsZero() {
			lat = append(lat, at.Sub(start))
		}
	}
	mu.Lock()
	for _, b := range bodies {
		b.Close()
	}
	mu.Unlock()
	if len(lat) != subs {
		t.Fatalf("%d of %d subscribers got the event", len(lat), subs)
	}
	t.Logf("fan-out to %d subscribers, from the write's request to each subscriber: p50 %s, p99 %s, max %s",
		subs, pct(lat, 0.5), pct(lat, 0.99), pct(lat, 1))
}

func measureBurst(t *testing.T) {
	e := webhookEnv(t, time.Second)
	var mu sync.Mutex
	lag := map[string]time.Duration{}
	var rc *receiver
	rc = newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		var ev struct {
			ID         string
			OccurredAt time.Time `json:"occurred_at"`
		}
		rc.mu.Lock()
		body := rc.got[n-1].body
		rc.mu.Unlock()
		json.Unmarshal(body, &ev)
		mu.Lock()
		if _, dup := lag[ev.ID]; !dup {
			lag[ev.ID] = time.Since(ev.OccurredAt)
		}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	pid := e.CreateProject(e.Admin, "burst")
	createWebhook(t, e, pid, rc.srv.URL, "asset.created")
	const events, writers = 1000, 8
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < events; i += writers {
				e.CreateSkill(e.Admin, pid, fmt.Sprintf("s-%d", i))
			}
		}()
	}
	wg.Wait()
	produced := time.Since(start)
	waitUntil(t, "every event delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(lag) == events
	})
	all := time.Since(start)
	var ds []time.Duration
	for _, d := range lag {
		ds = append(ds, d)
	}
	t.Logf("burst of %d events (%d writers, produced in %s, all delivered %s after the first write): event to delivery p50 %s, p99 %s, max %s",
		events, writers, produced.Round(time.Millisecond), all.Round(time.Millisecond), pct(ds, 0.5), pct(ds, 0.99), pct(ds, 1))
}
