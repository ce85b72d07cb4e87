package client

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/quire/quire"
)

// The prompt cache's event subscription (WithEvents): one Server-Sent
// Events stream per project (GET /v1/projects/{p}/events), and every
// event that can change what a cached prompt reads -- a publish, a
// promotion, an archive, a label move, a deletion -- revalidates that
// prompt's entries at once instead of after their TTL. The TTL still
// applies: the stream is a shortcut, not what correctness rests on, so a
// stream that drops (and reconnects, resuming with Last-Event-ID) or a
// server without the events capability (404) only brings back the TTL's
// delay.

// EventNotified is the metrics event of a revalidation an event started.
const EventNotified CacheEvent = "notified"

// WithEvents subscribes the cache to the event stream of each project it
// reads prompts of, so a publish is seen within a round trip rather than
// a TTL.
func WithEvents() CacheOption { return func(pc *PromptCache) { pc.events = true } }

// refreshTypes are the events that can change a prompt's live, pinned or
// labelled read.
var refreshTypes = []quire.EventType{
	quire.EventVersionPublished, quire.EventVersionPromoted, quire.EventVersionArchived, quire.EventVersionDeleted,
	quire.EventLabelMoved, quire.EventLabelDeleted, quire.EventAssetDeleted,
}

// subscribe starts the stream of key's project, once.
func (pc *PromptCache) subscribe(key string) {
	project, _, _ := strings.Cut(key, "/")
	pc.mu.Lock()
	if pc.subscribed[project] || pc.ctx.Err() != nil {
		pc.mu.Unlock()
		return
	}
	pc.subscribed[project] = true
	pc.wg.Add(1)
	pc.mu.Unlock()
	go func() {
		defer pc.wg.Done()
		pc.follow(project)
	}()
}

// follow reads project's stream until Close, reconnecting with a backoff
// (1 s doubling to 30 s). A 4xx answer (no events capability, no access)
// ends it: the TTL alone applies then.
func (pc *PromptCache) follow(project string) {
	last := ""
	wait := time.Second
	for pc.ctx.Err() == nil {
		connected, err := pc.stream(project, &last)
		var ae *APIError
		if errors.As(err, &ae) && ae.Status < 500 {
			return
		}
		if connected {
			wait = time.Second
		}
		select {
		case <-pc.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// stream reads one connection of project's stream; last is the id of the
// last event seen, sent as Last-Event-ID to resume.
func (pc *PromptCache) stream(project string, last *string) (connected bool, err error) {
	u := *pc.c.base
	u.Path = pc.c.base.Path + "/v1/projects/" + url.PathEscape(project) + "/events"
	types := make([]string, len(refreshTypes))
	for i, t := range refreshTypes {
		types[i] = string(t)
	}
	u.RawQuery = url.Values{"types": {strings.Join(types, ",")}}.Encode()
	req, err := http.NewRequestWithContext(pc.ctx, "GET", u.String(), nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("User-Agent", pc.c.ua)
	if pc.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+pc.c.token)
	}
	if *last != "" {
		req.Header.Set("Last-Event-ID", *last)
	}
	// The SDK's client has a whole-request timeout; a stream has none.
	hc := &http.Client{Transport: pc.c.http.Transport, Jar: pc.c.http.Jar}
	res, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return false, &APIError{Status: res.StatusCode, Message: res.Status}
	}
	// Events may have been missed between the entries' fetch (or the last
	// connection) and now: revalidate the project's entries once.
	pc.notify(project, "")
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() > 0 {
				var ev quire.Event
				if json.Unmarshal([]byte(data.String()), &ev) == nil && ev.Asset != nil && ev.Asset.Kind == quire.KindPrompt {
					pc.notify(project, ev.Asset.ID)
				}
				data.Reset()
			}
		case strings.HasPrefix(line, "id:"):
			*last = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		case strings.HasPrefix(line, "data:"):
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	return true, sc.Err()
}

// notify revalidates now the entries of prompt id in project ("": every
// entry of the project).
func (pc *PromptCache) notify(project, id string) {
	pc.mu.RLock()
	var due []cacheKey
	var olds []*entry
	for k, e := range pc.entries {
		p, _, _ := strings.Cut(k.key, "/")
		if p == project && !e.fallback && (id == "" || e.promptID == id) {
			due, olds = append(due, k), append(olds, e)
		}
	}
	pc.mu.RUnlock()
	for i, k := range due {
		if id != "" {
			pc.event(k.key, EventNotified)
		}
		pc.revalidate(k, olds[i])
	}
}
