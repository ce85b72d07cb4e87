package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// heartbeat is how often an idle event stream sends a comment, so
// proxies and clients see the connection is alive (unless
// app.EventsConfig.Heartbeat says otherwise).
const heartbeat = 15 * time.Second

// streamMax is how long one event stream lasts (unless
// app.EventsConfig.StreamMax says otherwise): its credential was checked
// when it opened and is re-checked while it runs, but a bounded stream
// also bounds what a connection holds, and the client's reconnect with
// Last-Event-ID loses nothing.
const streamMax = time.Hour

// retryMS is the reconnect delay the stream suggests to clients
// (EventSource's retry: field), sent when it opens and when it ends.
const retryMS = 2000

// eventQuery reads ?after=, ?limit=, ?types= and ?assets= (and, for the
// stream, Last-Event-ID).
func eventQuery(c *gin.Context, stream bool) (app.EventQuery, error) {
	q := app.EventQuery{After: c.Query("after"), Limit: 50}
	if stream && q.After == "" {
		q.After = c.GetHeader("Last-Event-ID")
	}
	if len(q.After) > 64 {
		return q, quire.Errorf(quire.EINVALID, "after must be an event id")
	}
	if l := c.Query("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 500 {
			return q, quire.Errorf(quire.EINVALID, "limit must be an integer from 1 to 500")
		}
		q.Limit = n
	}
	for _, t := range splitList(c.Query("types")) {
		q.Filter.Types = append(q.Filter.Types, quire.EventType(t))
	}
	q.Filter.Assets = splitList(c.Query("assets"))
	return q, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// wantsStream says whether the request asks for Server-Sent Events: not
// when it asks for JSON, or pages with after or limit.
func wantsStream(c *gin.Context) bool {
	if c.Query("after") != "" || c.Query("limit") != "" {
		return false
	}
	accept := c.GetHeader("Accept")
	return !strings.Contains(accept, "application/json") || strings.Contains(accept, "text/event-stream")
}

// projectEvents answers GET /v1/projects/{p}/events: a stream, or a page
// for polling clients.
func (s *Server) projectEvents(c *gin.Context) {
	ctx := c.Request.Context()
	ph, ok := s.openProject(c, quire.AccessRead)
	if !ok {
		return
	}
	q, err := eventQuery(c, wantsStream(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	if !wantsStream(c) {
		evs, err := ph.Events(ctx, q)
		if err != nil {
			s.fail(c, err)
			return
		}
		c.JSON(http.StatusOK, gin.H{"events": evs})
		return
	}
	p, token := principal(c), ""
	if !p.IsAnonymous() {
		token = bearer(c.Request)
	}
	sub, err := ph.Subscribe(ctx, token, q)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	maxed, endMax := context.WithTimeout(ctx, s.streams.max)
	defer endMax()
	unregister := s.streams.add(stop)
	defer unregister()

	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: pass each event on at once
	c.Status(http.StatusOK)
	w := c.Writer
	fmt.Fprintf(w, "retry: %d\n: stream of project events\n\n", retryMS)
	w.Flush()
	for {
		evs, overflow, err := sub.Next(maxed, s.streams.heartbeat)
		if err != nil {
			switch {
			case ctx.Err() != nil: // the client left, or the server stops
			case maxed.Err() != nil:
				// The stream's time is up: say where to resume and when.
				if id := sub.Cursor(); id != "" {
					fmt.Fprintf(w, "id: %s\n", id)
				}
				fmt.Fprintf(w, "retry: %d\n: stream ended after %s; reconnect with Last-Event-ID\n\n", retryMS, s.streams.max)
			default:
				// The credential or the access is gone (or could not be
				// checked): end the stream; a reconnect is told why.
				fmt.Fprint(w, ": stream ended: the credential or the access to the project was checked again and failed\n\n")
			}
			w.Flush()
			return
		}
		if overflow != "" {
			b, _ := json.Marshal(gin.H{"resume_after": overflow, "reason": "events were dropped from the retained window before this stream read them"})
			fmt.Fprintf(w, "event: overflow\ndata: %s\n\n", b)
			w.Flush()
			return
		}
		if len(evs) == 0 {
			fmt.Fprint(w, ": heartbeat\n\n")
		}
		for _, ev := range evs {
			b, _ := json.Marshal(ev)
			fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, b)
		}
		w.Flush()
		if ctx.Err() != nil {
			return
		}
	}
}

// streams are the open event streams, ended on StopStreams so a graceful
// shutdown does not wait for clients that never hang up.
type streams struct {
	heartbeat time.Duration
	max       time.Duration

	mu   sync.Mutex
	next int
	m    map[int]context.CancelFunc
	done bool
}

func (st *streams) add(stop context.CancelFunc) func() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		stop()
		return func() {}
	}
	if st.m == nil {
		st.m = map[int]context.CancelFunc{}
	}
	id := st.next
	st.next++
	st.m[id] = stop
	return func() {
		st.mu.Lock()
		delete(st.m, id)
		st.mu.Unlock()
	}
}

// StopStreams ends every open event stream, and any opened later.
func (s *Server) StopStreams() {
	st := &s.streams
	st.mu.Lock()
	defer st.mu.Unlock()
	st.done = true
	for _, stop := range st.m {
		stop()
	}
}
