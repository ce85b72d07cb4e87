package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/bench"
	"github.com/quire/quire/internal/server"
	"github.com/quire/quire/telemetry"
	"golang.org/x/crypto/bcrypt"
)

// eventsSection measures events against a quire server child on its own
// data root (so it can be killed): (1) one publish fanned out to 1,000
// live stream subscribers, against the same publish seen by one
// subscriber; (2) 1,000 events made in a burst by 8 writers, each
// delivered to a webhook receiver on 127.0.0.1, from the event's
// occurred_at to its arrival, against the writes' own latency; (3) the
// same burst with the server SIGKILLed a third of the way in and started
// again: every version in git must have its event delivered, at least
// once. Goals: (1) p99 ≤ 500 ms, (2) p99 ≤ 2 s, (3) none lost.
func eventsSection(ctx context.Context, c *config, r *report) error {
	subs, events, writers := 1000, 1000, 8
	if c.upserts < 100 { // -quick
		subs, events = 50, 64
	}
	root, err := os.MkdirTemp("", "quire-bench-events-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	rc := &hookReceiver{}
	rcURL, stopRC, err := bench.Serve(rc)
	if err != nil {
		return err
	}
	defer stopRC()
	srv, err := startEventsChild(root)
	if err != nil {
		return err
	}
	defer func() { srv.stop() }()
	api := &eventsAPI{url: srv.target.URL, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	if err := api.login(); err != nil {
		return err
	}
	var proj struct{ Project struct{ ID string } }
	if err := api.call("POST", "/v1/projects", map[string]string{"name": "Events", "slug": "events"}, &proj); err != nil {
		return err
	}
	pid := proj.Project.ID
	if err := api.call("POST", "/v1/projects/"+pid+"/webhooks", map[string]any{"url": rcURL, "events": []string{"version.created"}}, nil); err != nil {
		return err
	}

	// (1) Fan-out.
	var skill struct{ Skill struct{ ID string } }
	if err := api.call("POST", "/v1/projects/"+pid+"/skills", map[string]string{"name": "Fanout", "slug": "fanout"}, &skill); err != nil {
		return err
	}
	sk := "/v1/skills/" + skill.Skill.ID
	if err := api.call("POST", sk+"/versions", map[string]any{"from": "empty"}, nil); err != nil {
		return err
	}
	if err := api.call("POST", sk+"/versions/1/files", map[string]string{"file_path": "SKILL.md", "content": "---\nname: fanout\ndescription: A benchmark skill.\n---\n# fanout\n"}, nil); err != nil {
		return err
	}
	version := 1
	publish := func(n int) (time.Duration, []time.Duration, error) {
		if version > 1 {
			if err := api.call("POST", sk+"/versions", nil, nil); err != nil { // a draft of live
				return 0, nil, err
			}
		}
		lat, err := fanout(api, pid, n, func() error { return api.call("POST", fmt.Sprintf("%s/versions/%d/publish", sk, version), nil, nil) })
		version++
		if err != nil {
			return 0, nil, err
		}
		return slices.Max(lat), lat, nil
	}
	var one []time.Duration
	for range 5 {
		d, _, err := publish(1)
		if err != nil {
			return err
		}
		one = append(one, d)
	}
	all, lat, err := publish(subs)
	if err != nil {
		return err
	}
	base := bench.MedianDuration(one)
	fan := []row{
		{figure: fmt.Sprintf("publish to %d subscribers: p50", subs), quire: ms(pctl(lat, 50)), baseline: ms(base), ratio: ratio(pctl(lat, 50), base)},
		{figure: fmt.Sprintf("publish to %d subscribers: p99", subs), quire: ms(pctl(lat, 99)), baseline: ms(base), ratio: ratio(pctl(lat, 99), base), goal: "≤ 500 ms", pass: pctl(lat, 99) <= 500*time.Millisecond},
		{figure: fmt.Sprintf("publish to %d subscribers: all", subs), quire: ms(all), baseline: ms(base), ratio: ratio(all, base)},
	}

	// (2) A burst to a webhook.
	var ids []string
	for w := range writers {
		var s struct{ Skill struct{ ID string } }
		if err := api.call("POST", "/v1/projects/"+pid+"/skills", map[string]string{"name": fmt.Sprintf("Burst %d", w), "slug": fmt.Sprintf("burst-%d", w)}, &s); err != nil {
			return err
		}
		ids = append(ids, s.Skill.ID)
	}
	rc.reset()
	acks, _ := burst(api, ids, events, nil)
	if len(acks) != events {
		return fmt.Errorf("burst: %d of %d writes acknowledged", len(acks), events)
	}
	if err := rc.await(events, 2*time.Minute); err != nil {
		return err
	}
	lags := rc.lags()
	ack99 := pctl(acks, 99)
	burstRows := []row{
		{figure: fmt.Sprintf("%d events, commit to delivery: p50", events), quire: ms(pctl(lags, 50)), baseline: ms(pctl(acks, 50)), ratio: ratio(pctl(lags, 50), pctl(acks, 50))},
		{figure: fmt.Sprintf("%d events, commit to delivery: p99", events), quire: ms(pctl(lags, 99)), baseline: ms(ack99), ratio: ratio(pctl(lags, 99), ack99), goal: "≤ 2 s", pass: pctl(lags, 99) <= 2*time.Second},
	}

	// (3) The same burst, SIGKILLed midway and started again.
	versions := func(id string) ([]int, error) {
		var vs struct{ Versions []struct{ Version int } }
		err := api.call("GET", "/v1/skills/"+id+"/versions?limit=500", nil, &vs)
		var out []int
		for _, v := range vs.Versions {
			out = append(out, v.Version)
		}
		return out, err
	}
	before := map[string]int{} // skill → its newest version before the burst
	for _, id := range ids {
		vs, err := versions(id)
		if err != nil {
			return err
		}
		before[id] = slices.Max(vs)
	}
	rc.reset()
	acked, _ := burst(api, ids, events, func(done int) bool {
		if done == events/3 {
			srv.kill()
			return true
		}
		return false
	})
	srv.stop()
	if srv, err = startEventsChild(root); err != nil {
		return err
	}
	api.url = srv.target.URL
	if err := api.login(); err != nil { // the killed server's sessions went with it
		return err
	}
	inGit := 0
	for _, id := range ids {
		vs, err := versions(id)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if v > before[id] {
				rc.want(id, v)
				inGit++
			}
		}
	}
	lost := rc.awaitWanted(2 * time.Minute)
	delivered, dups := rc.counts()
	r.section("Events", fmt.Sprintf(`
Events against a quire server child on its own data root, embedded
Redis. (1) One publish (a version.published) fanned out to %d live
stream subscribers of its project (Server-Sent Events, one connection
each, filtered to version.published), from sending the publish to each
subscriber reading the event; baseline: the same publish with one
subscriber (median of 5). (2) %d events (version.created: %d writers,
each opening drafts of its own skill) to a webhook receiver on 127.0.0.1,
from the event's occurred_at (its commit) to its arrival; baseline: the
writes' own latency, request to answer. (3) The same burst again, the
server SIGKILLed once %d writes were acknowledged, then started on the
same data root: every version in git must have its event delivered at
least once. Goals: (1) p99 ≤ 500 ms, (2) p99 ≤ 2 s, (3) none lost.`, subs, events, writers, events/3))
	r.table("baseline", append(fan, burstRows...))
	r.table("in git", []row{{
		figure:   fmt.Sprintf("SIGKILL mid-burst: versions with their event delivered (%d acknowledged, %d duplicate deliveries)", len(acked), dups),
		quire:    fmt.Sprintf("%d", delivered),
		baseline: fmt.Sprintf("%d", inGit),
		ratio:    float64(delivered) / float64(max(inGit, 1)),
		goal:     "none lost", pass: lost == 0 && inGit >= len(acked),
	}})
	return nil
}

func pctl(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(max(b, 1)) }

// fanout opens n streams of the project's version.published events,
// runs write once all are subscribed, and returns how long after the
// write started each stream read the event.
func fanout(api *eventsAPI, pid string, n int, write func() error) ([]time.Duration, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer hc.CloseIdleConnections()
	var ready, got sync.WaitGroup
	ready.Add(n)
	got.Add(n)
	arrived := make([]time.Time, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var failed atomic.Value
	for i := range n {
		go func() {
			defer got.Done()
			subscribed := false
			defer func() {
				if !subscribed {
					ready.Done()
				}
			}()
			req, _ := http.NewRequestWithContext(ctx, "GET", api.url+"/v1/projects/"+pid+"/events?types=version.published", nil)
			req.Header.Set("Authorization", "Bearer "+api.token)
			resp, err := hc.Do(req)
			if err != nil {
				failed.Store(err)
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			br.ReadString('\n') // the opening comment: subscribed
			subscribed = true
			ready.Done()
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if strings.HasPrefix(line, "event: ") {
					arrived[i] = time.Now()
					return
				}
			}
		}()
	}
	ready.Wait()
	if err, _ := failed.Load().(error); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := write(); err != nil {
		return nil, err
	}
	wait := make(chan struct{})
	go func() { got.Wait(); close(wait) }()
	select {
	case <-wait:
	case <-time.After(time.Minute):
		cancel()
		<-wait
	}
	var lat []time.Duration
	for _, at := range arrived {
		if !at.IsZero() {
			lat = append(lat, at.Sub(start))
		}
	}
	if len(lat) != n {
		return nil, fmt.Errorf("%d of %d subscribers got the event", len(lat), n)
	}
	return lat, nil
}

// burst opens events drafts across the skills ids, a writer per skill,
// and returns the latency of each acknowledged write. stop, when set,
// hears the count of acknowledged writes after each, and ends the burst
// when it returns true (it killed the server).
func burst(api *eventsAPI, ids []string, events int, stop func(done int) bool) ([]time.Duration, error) {
	var mu sync.Mutex
	var acks []time.Duration
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for w, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < events && !stopped.Load(); i += len(ids) {
				t0 := time.Now()
				if err := api.call("POST", "/v1/skills/"+id+"/versions", map[string]any{"from": "empty"}, nil); err != nil {
					return // the server died
				}
				d := time.Since(t0)
				mu.Lock()
				acks = append(acks, d)
				if stop != nil && !stopped.Load() && stop(len(acks)) {
					stopped.Store(true)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return acks, nil
}

// eventsAPI calls the server child as its admin.
type eventsAPI struct {
	url, token string
	client     *http.Client
}

func (a *eventsAPI) login() error {
	var login struct{ Token string }
	if err := a.call("POST", "/v1/auth/login", map[string]string{"email": bench.AdminEmail, "password": bench.AdminPassword}, &login); err != nil {
		return err
	}
	a.token = login.Token
	return nil
}

func (a *eventsAPI) call(method, path string, body, out any) error {
	return bench.CallJSON(a.client, method, a.url+path, a.token, body, out)
}

// hookReceiver is the webhook receiver: it answers 204 at once and keeps,
// per event, its first arrival and its delivery count.
type hookReceiver struct {
	mu      sync.Mutex
	lag     map[string]time.Duration // event id → occurred_at to first arrival
	count   map[string]int           // event id → deliveries
	version map[string]bool          // asset id/version → delivered
	wanted  map[string]bool          // asset id/version → to be delivered
}

func (h *hookReceiver) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lag, h.count, h.version, h.wanted = map[string]time.Duration{}, map[string]int{}, map[string]bool{}, map[string]bool{}
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	now := time.Now()
	var ev quire.Event
	if json.Unmarshal(body, &ev) == nil && ev.Type == quire.EventVersionCreated && ev.Asset != nil {
		h.mu.Lock()
		if h.count != nil {
			if h.count[ev.ID] == 0 {
				h.lag[ev.ID] = now.Sub(ev.OccurredAt)
			}
			h.count[ev.ID]++
			h.version[fmt.Sprintf("%s/%d", ev.Asset.ID, ev.Version)] = true
		}
		h.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *hookReceiver) want(asset string, version int) {
	h.mu.Lock()
	h.wanted[fmt.Sprintf("%s/%d", asset, version)] = true
	h.mu.Unlock()
}

// await waits until n distinct events arrived.
func (h *hookReceiver) await(n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		h.mu.Lock()
		got := len(h.count)
		h.mu.Unlock()
		if got >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d events delivered after %s", got, n, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// awaitWanted waits until every wanted version's event arrived, or limit
// passed, and returns how many never did.
func (h *hookReceiver) awaitWanted(limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		h.mu.Lock()
		missing := 0
		for v := range h.wanted {
			if !h.version[v] {
				missing++
			}
		}
		h.mu.Unlock()
		if missing == 0 || time.Now().After(deadline) {
			return missing
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *hookReceiver) lags() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []time.Duration
	for _, d := range h.lag {
		out = append(out, d)
	}
	return out
}

// counts are the wanted versions delivered, and the deliveries beyond
// the first of any event.
func (h *hookReceiver) counts() (delivered, dups int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for v := range h.wanted {
		if h.version[v] {
			delivered++
		}
	}
	for _, n := range h.count {
		dups += n - 1
	}
	return delivered, dups
}

// eventsDataEnv names the data root of an "events" server child.
const eventsDataEnv = "QUIRE_BENCH_EVENTS_DATA"

// eventsChild is a quire server child on a data root of its own.
type eventsChild struct{ *child }

func startEventsChild(root string) (*eventsChild, error) {
	os.Setenv(eventsDataEnv, root)
	defer os.Unsetenv(eventsDataEnv)
	c, err := startChild("events", "", "")
	if err != nil {
		return nil, err
	}
	return &eventsChild{c}, nil
}

// kill ends the child with SIGKILL.
func (c *eventsChild) kill() { c.cmd.Process.Kill() }

// serveEvents is the "events" child: quire on the data root eventsDataEnv
// names (the admin made on first start), with webhooks allowed to reach
// 127.0.0.1 and retried within seconds.
func serveEvents(ctx context.Context) (target, func(), error) {
	root := os.Getenv(eventsDataEnv)
	if root == "" {
		return target{}, nil, errors.New(eventsDataEnv + " is not set")
	}
	s, err := server.Build(ctx, server.Config{
		Data: root, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Version: "bench",
		Tracing:    telemetry.TracingOptions{ServiceName: "quire", Getenv: func(string) string { return "" }},
		BcryptCost: bcrypt.MinCost,
		Webhooks: server.WebhookOptions{AllowPrivate: true,
			RetrySchedule: []time.Duration{100 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second}},
	})
	if err != nil {
		return target{}, nil, err
	}
	if _, err := s.Store.UserByEmail(ctx, bench.AdminEmail); quire.ErrorCode(err) == quire.ENOTFOUND {
		hash, _ := bcrypt.GenerateFromPassword([]byte(bench.AdminPassword), bcrypt.MinCost)
		u := &quire.User{Email: bench.AdminEmail, Name: "Bench", Role: quire.RoleAdmin, PasswordHash: string(hash)}
		if err := s.Store.CreateUser(ctx, quire.Actor{Name: "bench"}, u); err != nil {
			s.Close()
			return target{}, nil, err
		}
	}
	url, stop, err := bench.Serve(s.API)
	if err != nil {
		s.Close()
		return target{}, nil, err
	}
	return target{URL: url}, func() {
		s.API.StopStreams()
		stop()
		s.Close()
	}, nil
}
