package app

import (
	"context"
	"sync"
	"time"

	"github.com/quire/quire"
)

// Events: every use case that changes a project records one event per
// change in the project's event log (quire.EventLog) before it returns,
// so an acknowledged change has its event on disk (docs/events.md). The
// delivery worker (delivery.go) and the live stream read the log.
//
// A use case that changes something runs its write through write
// (write.go), which announces the event before the write and records it
// after; reviews record theirs in reviewDone, and the few events that are
// not a write's (a webhook's test ping) call emit directly.

// emit records ev in its project's log and wakes the stream and the
// delivery worker. Without an event log (an App built for a test of
// something else) it does nothing. An error means the change happened but
// its event is not recorded: the caller fails the request, so nothing
// unrecorded is acknowledged.
func (a *App) emit(ctx context.Context, evs ...*quire.Event) error {
	if a.events == nil || len(evs) == 0 {
		return nil
	}
	for _, ev := range evs {
		if ev.Asset != nil && ev.Version > 0 && ev.Type != quire.EventVersionUpdated {
			a.flushUpdate(ev.ProjectID, updateKey(ev.Asset.ID, ev.Version))
		}
	}
	var err error
	if p := pendingIntent(ctx); p != nil && p.fulfils(evs) {
		p.settled = true // on an error, it stays unsettled on disk: the next start settles it
		err = a.events.Fulfil(context.WithoutCancel(ctx), evs[0].ProjectID, p.in.ID, evs...)
	} else {
		err = a.events.Append(context.WithoutCancel(ctx), evs[0].ProjectID, evs...)
	}
	if err != nil {
		return &quire.Error{Code: quire.EINTERNAL, Message: "the change was saved, but its event could not be recorded", Err: err}
	}
	a.bus.notify(evs[0].ProjectID)
	return nil
}

// assetEvent is an event of type t about version n (0: none) of as, made
// by by; commit, when set, is data.commit.
func (a *App) assetEvent(t quire.EventType, by quire.Actor, as *quire.Asset, n int, commit string) *quire.Event {
	ev := &quire.Event{
		Type: t, OccurredAt: a.now().UTC(), ProjectID: as.ProjectID,
		Asset:   &quire.EventAsset{Kind: as.Kind, ID: as.ID, Slug: as.Slug},
		Version: n, Actor: quire.ActorOf(by), Data: map[string]any{},
	}
	if commit != "" {
		ev.Data["commit"] = commit
	}
	return ev
}

// versionEvent is assetEvent for version v.
func (a *App) versionEvent(t quire.EventType, by quire.Actor, as *quire.Asset, v *quire.Version) *quire.Event {
	ev := a.assetEvent(t, by, as, v.Number, v.Commit)
	ev.Data["state"] = v.State
	ev.Data["live"] = v.Live
	return ev
}

// updateWindow is the shortest time between two version.updated events of
// one draft: a burst of edits (an agent saving file after file) makes one
// event a second, the last carrying the draft's head.
const updateWindow = time.Second

// coalescer holds the version.updated events of drafts that changed again
// within updateWindow of their last event.
type coalescer struct {
	mu     sync.Mutex
	last   map[string]time.Time   // key → when its last event was recorded
	timers map[string]*time.Timer // key → the release of its held event
	closed bool                   // StopEvents ran: hold, release nothing more
}

// StopEvents stops the releases of held version.updated events, waiting
// for one under way: the server calls it on Close, before the event log
// closes, so no timer writes to the data root after it. What is still
// held stays on disk and the next start releases it (releaseHeld).
func (a *App) StopEvents() {
	c := &a.coalesce
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for k, t := range c.timers {
		t.Stop()
		delete(c.timers, k)
	}
}

// emitUpdate records ev, a version.updated of a draft: now if
// the draft's last one is a window old, else as the held trailing event
// of the burst, released when the window ends. Held events are on disk
// before the write is acknowledged, and a restart releases them.
func (a *App) emitUpdate(ctx context.Context, ev *quire.Event) error {
	if a.events == nil {
		return nil
	}
	as := ev.Asset
	key := updateKey(as.ID, ev.Version)
	a.draftMoved(ctx, ev)
	c := &a.coalesce
	c.mu.Lock()
	now := time.Now()
	last, seen := c.last[key]
	if _, pending := c.timers[key]; !pending && (!seen || now.Sub(last) >= updateWindow) {
		c.last[key] = now
		if len(c.last) > 4096 {
			for k, t := range c.last {
				if now.Sub(t) >= updateWindow {
					delete(c.last, k)
				}
			}
		}
		c.mu.Unlock()
		return a.emit(ctx, ev)
	}
	defer c.mu.Unlock()
	intent := ""
	if p := pendingIntent(ctx); p != nil && p.fulfils([]*quire.Event{ev}) {
		p.settled, intent = true, p.in.ID
	}
	if err := a.events.Hold(context.WithoutCancel(ctx), ev.ProjectID, key, intent, ev); err != nil {
		return &quire.Error{Code: quire.EINTERNAL, Message: "the change was saved, but its event could not be recorded", Err: err}
	}
	if _, pending := c.timers[key]; !pending && !c.closed {
		project := ev.ProjectID
		c.timers[key] = time.AfterFunc(last.Add(updateWindow).Sub(now), func() {
			a.release(project, key)
		})
	}
	return nil
}

// updateKey is the coalescing key of version n of asset id.
func updateKey(id string, n int) string {
	return string(quire.EventVersionUpdated) + "/" + id + "/" + itoa(n)
}

// flushUpdate releases key's held update now, if one waits: another
// event about the version (published, deleted) must come after it.
func (a *App) flushUpdate(project, key string) {
	c := &a.coalesce
	c.mu.Lock()
	t := c.timers[key]
	c.mu.Unlock()
	if t != nil {
		t.Stop()
		a.release(project, key)
	}
}

// release turns key's held event into an event.
func (a *App) release(project, key string) {
	c := &a.coalesce
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return // the next start releases it
	}
	delete(c.timers, key)
	ev, err := a.events.Release(context.Background(), project, key)
	if err != nil {
		a.logError("release held event", err)
		return // Held finds it again on the next start
	}
	if ev != nil {
		c.last[key] = time.Now()
		a.bus.notify(project)
	}
}

// releaseHeld releases what a previous run held and never released.
func (a *App) releaseHeld(ctx context.Context) error {
	held, err := a.events.Held(ctx)
	if err != nil {
		return err
	}
	for project, keys := range held {
		for _, k := range keys {
			a.release(project, k)
		}
	}
	return nil
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			break
		}
	}
	return string(b[i:])
}

// bus wakes readers of a project's log (stream subscribers, the delivery
// worker) when this process appends to it: each project has a channel
// that is closed, and replaced, on every append, so one append wakes
// every waiter at once and a slow waiter holds nobody up. Appends by
// other processes sharing the data root are found by polling.
type bus struct {
	mu  sync.Mutex
	chs map[string]chan struct{}
	any chan struct{}
}

func (b *bus) init() {
	b.chs = map[string]chan struct{}{}
	b.any = make(chan struct{})
}

// wait returns a channel closed at the project's next append ("" for
// any project).
func (b *bus) wait(project string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if project == "" {
		return b.any
	}
	ch := b.chs[project]
	if ch == nil {
		ch = make(chan struct{})
		b.chs[project] = ch
	}
	return ch
}

func (b *bus) notify(project string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ch := b.chs[project]; ch != nil {
		close(ch)
		delete(b.chs, project)
	}
	close(b.any)
	b.any = make(chan struct{})
}

// EventQuery is a read of a project's events.
type EventQuery struct {
	After  string // an event id; "" from the oldest retained
	Limit  int
	Filter quire.EventFilter
}

// checkEventFilter refuses unknown event types, naming them.
func checkEventTypes(types []quire.EventType) error {
	var unknown []string
	for _, t := range types {
		if !t.Known() {
			unknown = append(unknown, string(t))
		}
	}
	if len(unknown) > 0 {
		return quire.Errorf(quire.EUNPROCESSABLE, "unknown event types: %v", unknown).WithDetail("unknown_types", unknown)
	}
	return nil
}

// eventQuery is the start of every read of a project's events: read
// access to the project, then the query's types checked.
func (h *ProjectHandle) eventQuery(in EventQuery) error {
	if err := h.need(quire.AccessRead); err != nil {
		return err
	}
	if err := checkEventTypes(in.Filter.Types); err != nil {
		return err
	}
	if h.app.events == nil {
		return quire.Errorf(quire.EUNAVAILABLE, "events are not kept by this server")
	}
	return nil
}

// Events lists the project's events after q.After, ascending, for
// polling clients. Read access suffices.
func (h *ProjectHandle) Events(ctx context.Context, q EventQuery) ([]*quire.Event, error) {
	if err := h.eventQuery(q); err != nil {
		return nil, err
	}
	out, _, err := h.app.readEvents(ctx, h.Project.ID, q.After, q.Limit, q.Filter)
	return out, err
}

// readEvents reads up to limit events matching f after after; next is
// the id the next read starts after (the last event looked at, matching
// or not), gone is true when after fell out of the retained window.
func (a *App) readEvents(ctx context.Context, project, after string, limit int, f quire.EventFilter) (out []*quire.Event, next string, err error) {
	out = []*quire.Event{}
	next = after
	for len(out) < limit {
		evs, _, err := a.events.Events(ctx, project, next, 500)
		if err != nil {
			return nil, "", err
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			next = ev.ID
			if f.Match(ev) {
				out = append(out, ev)
				if len(out) == limit {
					break
				}
			}
		}
	}
	return out, next, nil
}

// Subscription is a live read of a project's events (the event stream).
// It checks its caller again every EventsConfig.Recheck, and at once
// when this process changes a credential or a membership, so access
// taken away ends the stream too.
type Subscription struct {
	a       *App
	project string
	cursor  string
	filter  quire.EventFilter
	p       *quire.Principal
	token   string
	checkAt time.Time
	changed <-chan struct{} // closed when access may have changed
}

// Subscribe starts a live read of the project's events after after ("":
// from now on). Read access suffices. token is the credential p was
// authenticated from ("" for an anonymous reader), authenticated anew at
// each re-check.
func (h *ProjectHandle) Subscribe(ctx context.Context, token string, in EventQuery) (*Subscription, error) {
	a, p := h.app, h.P
	changed := a.access.wait("")
	if err := h.eventQuery(in); err != nil {
		return nil, err
	}
	// Read the project again now that a change of access wakes this
	// subscription: one made since the handle was opened is seen here.
	pr, err := a.Project(ctx, p, h.Project.ID, quire.AccessRead)
	if err != nil {
		return nil, err
	}
	s := &Subscription{a: a, project: pr.ID, cursor: in.After, filter: in.Filter, p: p, token: token,
		checkAt: time.Now().Add(a.recheckEvery()), changed: changed}
	if s.cursor == "" { // from now on: skip what is there
		for {
			evs, _, err := a.events.Events(ctx, pr.ID, s.cursor, 10000)
			if err != nil {
				return nil, err
			}
			if len(evs) == 0 {
				break
			}
			s.cursor = evs[len(evs)-1].ID
		}
	}
	return s, nil
}

// Cursor is the id of the last event the subscription looked at.
func (s *Subscription) Cursor() string { return s.cursor }

// pollEvery is how often a waiting subscriber looks for appends made by
// other processes sharing the data root.
const pollEvery = time.Second

// recheckEvery is EventsConfig.Recheck, 30 s when unset.
func (a *App) recheckEvery() time.Duration {
	if a.ev.Recheck > 0 {
		return a.ev.Recheck
	}
	return 30 * time.Second
}

// accessChanged wakes every open stream of this process to check its
// caller again: a credential, a user or a membership changed.
func (a *App) accessChanged() { a.access.notify("") }

// recheck authenticates the subscriber's credential anew and checks its
// read access to the project again, in a fresh read scope so it sees
// every change committed since the stream opened. Any failure ends the
// stream (a store that is down too: the client reconnects and is told).
func (s *Subscription) recheck(ctx context.Context) error {
	ctx = quire.WithReadScope(ctx)
	p := s.p
	if !p.IsAnonymous() {
		var err error
		if p, err = s.a.Authenticate(ctx, s.token); err != nil {
			return err
		}
	}
	if _, err := s.a.Project(ctx, p, s.project, quire.AccessRead); err != nil {
		return err
	}
	s.checkAt = time.Now().Add(s.a.recheckEvery())
	return nil
}

// Next waits up to wait for events and returns them (none when wait
// passed: time for a heartbeat). overflow is set, with the id to resume
// after, when events the subscriber had not seen were dropped from the
// retained window before it read them. An error from the re-check of
// the caller (EUNAUTHORIZED, ENOTFOUND, ...) means access ended.
func (s *Subscription) Next(ctx context.Context, wait time.Duration) (evs []*quire.Event, overflow string, err error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.changed:
			s.changed = s.a.access.wait("")
			s.checkAt = time.Time{}
		default:
		}
		if !time.Now().Before(s.checkAt) {
			if err := s.recheck(ctx); err != nil {
				return nil, "", err
			}
		}
		woken := s.a.bus.wait(s.project)
		if s.cursor != "" {
			_, oldest, err := s.a.events.Events(ctx, s.project, s.cursor, 1)
			if err != nil {
				return nil, "", err
			}
			if oldest != "" && oldest > s.cursor {
				return nil, s.cursor, nil
			}
		}
		evs, next, err := s.a.readEvents(ctx, s.project, s.cursor, 500, s.filter)
		if err != nil {
			return nil, "", err
		}
		s.cursor = next
		if len(evs) > 0 {
			return evs, "", nil
		}
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-deadline.C:
			return nil, "", nil
		case <-s.changed:
		case <-woken:
		case <-tick.C:
		}
	}
}

// PushEvents returns what a git push into as by p calls around its ref
// updates: moving records an intent for each draft about to move, moved
// records version.updated for each that moved (coalesced like API edits),
// so a push produces the events the API would, and a crash between the
// two loses none.
func (a *App) PushEvents(p *quire.Principal, as *quire.Asset) (moving func(context.Context, []quire.DraftMove) error, moved func(context.Context, []quire.DraftMove, error) error) {
	var mu sync.Mutex
	planned := map[int]context.Context{} // draft → the context of its intent
	event := func(m quire.DraftMove) *quire.Event {
		return a.versionEvent(quire.EventVersionUpdated, p.Actor(), as, &quire.Version{Number: m.Version, State: quire.StateDraft, Commit: m.New})
	}
	moving = func(ctx context.Context, moves []quire.DraftMove) error {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range moves {
			ictx, err := a.intend(ctx, event(m))
			if err != nil {
				for n, c := range planned { // nothing moved yet
					a.void(c)
					delete(planned, n)
				}
				return err
			}
			planned[m.Version] = ictx
		}
		return nil
	}
	moved = func(ctx context.Context, moves []quire.DraftMove, failed error) error {
		mu.Lock()
		defer mu.Unlock()
		var first error
		for _, m := range moves {
			ictx := planned[m.Version]
			if ictx == nil {
				ictx = ctx
			}
			delete(planned, m.Version)
			if err := a.emitUpdate(ictx, event(m)); err != nil && first == nil {
				first = err
			}
		}
		for n, c := range planned { // refused, or cut short by failed
			if failed != nil {
				a.abandon(c, &quire.Error{Code: quire.EINTERNAL, Message: "push failed", Err: failed})
			} else {
				a.void(c)
			}
			delete(planned, n)
		}
		return first
	}
	return moving, moved
}
