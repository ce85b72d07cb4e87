package app

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/quire/quire"
)

// The delivery worker: one goroutine per active webhook, so a slow or
// failing receiver delays only itself. Each reads its project's log after
// its cursor, posts what its filter matches, and keeps failures as pending
// retries on the schedule; the cursor and the retries are stored (durably)
// after each batch, so a crash repeats at most one batch: delivery is at
// least once. One process sharing the data root delivers at a time
// (WebhookStore.Lead).

// RunDeliveries releases events a previous run held, then delivers events
// to webhooks until ctx ends. internal/server.Build runs it and cancels
// it on Close, which waits for it: an attempt cut short by the shutdown
// is not recorded, so it is made again after the restart.
func (a *App) RunDeliveries(ctx context.Context) {
	if a.events == nil {
		return
	}
	if err := a.releaseHeld(ctx); err != nil {
		a.logError("release held events", err)
	}
	if a.webhooksOffered() != nil {
		return
	}
	for {
		release, ok := a.ev.Webhooks.Lead()
		if ok {
			a.deliver(ctx)
			release()
			return
		}
		select { // another process delivers; take over if it stops
		case <-ctx.Done():
			return
		case <-time.After(pollEvery):
		}
	}
}

// deliver keeps one worker running per active webhook.
func (a *App) deliver(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	running := map[string]context.CancelFunc{}
	done := make(chan string, 64)
	recoverAt := time.Now().Add(recoverEvery)
	for {
		if time.Now().After(recoverAt) { // writes of other processes that died
			if err := a.RecoverIntents(ctx); err != nil {
				a.logError("recover event intents", err)
			}
			recoverAt = time.Now().Add(recoverEvery)
		}
		woken := a.bus.wait("")
		seen := map[string]bool{}
		projects, err := a.events.Projects(ctx)
		if err != nil {
			a.logError("list projects with events", err)
		}
		for _, p := range projects {
			if a.meta != nil {
				if _, err := a.meta.Project(ctx, p); quire.ErrorCode(err) == quire.ENOTFOUND {
					// A deleted project's webhooks deliver nothing more;
					// its files go once idle (a project this process
					// does not see yet may be new).
					if err := a.events.RemoveProject(ctx, p, 10*time.Minute); err != nil {
						a.logError("remove a deleted project's events", err)
					}
					continue
				}
			}
			hooks, err := a.ev.Webhooks.Webhooks(ctx, p)
			if err != nil {
				a.logError("list webhooks", err)
				continue
			}
			for _, w := range hooks {
				key := p + "/" + w.ID
				if !w.Active {
					continue
				}
				seen[key] = true
				if running[key] != nil {
					continue
				}
				wctx, cancel := context.WithCancel(ctx)
				running[key] = cancel
				wg.Add(1)
				go func(project, id string) {
					defer wg.Done()
					a.deliverTo(wctx, project, id)
					select { // the manager may have stopped listening
					case done <- project + "/" + id:
					case <-ctx.Done():
					}
				}(p, w.ID)
			}
		}
		for key, cancel := range running {
			if !seen[key] {
				cancel()
			}
		}
		select {
		case <-ctx.Done():
			return
		case key := <-done:
			delete(running, key)
		case <-woken:
		case <-time.After(pollEvery):
		}
	}
}

// deliverTo is one webhook's worker: it returns when the webhook is gone,
// inactive, or ctx ends.
func (a *App) deliverTo(ctx context.Context, project, id string) {
	for {
		woken := a.bus.wait(project)
		next, err := a.deliverPass(ctx, project, id)
		if err != nil {
			if ctx.Err() != nil || quire.ErrorCode(err) == quire.ENOTFOUND {
				return
			}
			a.logError("deliver to webhook "+id, err)
			next = time.Now().Add(pollEvery)
		}
		if next.IsZero() {
			return // inactive
		}
		t := time.NewTimer(max(time.Until(next), time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-woken:
		case <-t.C:
		}
		t.Stop()
	}
}

// recoverEvery is how often the delivering process settles the intents
// of other processes sharing the data root that died (RecoverIntents).
const recoverEvery = 30 * time.Second

// maxBatch is how many new events one pass delivers before it stores the
// cursor: what a crash can make a receiver get twice.
const maxBatch = 100

// deliverPass delivers what is due to webhook id once. It returns when
// the next pass is due (zero: the webhook is inactive, stop).
func (a *App) deliverPass(ctx context.Context, project, id string) (time.Time, error) {
	w, err := a.ev.Webhooks.Webhook(ctx, project, id)
	if err != nil {
		return time.Time{}, err
	}
	if !w.Active {
		return time.Time{}, nil
	}
	var st quire.DeliveryState
	if err := a.ev.Webhooks.UpdateDeliveryState(ctx, project, id, func(s *quire.DeliveryState) error {
		st = *s
		return errNoChange
	}); err != nil && err != errNoChange {
		return time.Time{}, err
	}
	keys, err := a.signingKeys(w, time.Now())
	if err != nil {
		return time.Time{}, err
	}
	var ds []*quire.Delivery
	type outcome struct {
		ok      bool
		attempt int
		next    time.Time
	}
	results := map[string]outcome{} // pending event id → what its retry came to
	var failed []quire.Pending      // new events that failed
	succeeded := false
	failedAny := false

	// Retries and redeliveries that are due.
	now := time.Now()
	for _, p := range st.Pending {
		if p.NextAt.After(now) || p.Event == nil {
			continue
		}
		if _, done := results[p.Event.ID]; done {
			continue
		}
		d, ok := a.attempt(ctx, w, keys, p.Event, p.Attempt+1)
		if ctx.Err() != nil {
			return time.Time{}, ctx.Err()
		}
		o := outcome{ok: ok, attempt: p.Attempt + 1}
		if !ok {
			failedAny = true
			if nt, more := a.retryAt(o.attempt); more {
				o.next = nt
				d.NextRetryAt = &nt
			}
		} else {
			succeeded = true
		}
		results[p.Event.ID] = o
		ds = append(ds, d)
	}

	// New events after the cursor.
	evs, _, err := a.events.Events(ctx, project, st.Cursor, maxBatch)
	if err != nil {
		return time.Time{}, err
	}
	cursor := st.Cursor
	filter := w.Filter()
	for _, ev := range evs {
		if filter.Match(ev) {
			d, ok := a.attempt(ctx, w, keys, ev, 1)
			if ctx.Err() != nil {
				break // the cursor stays before ev
			}
			ds = append(ds, d)
			if ok {
				succeeded = true
			} else {
				failedAny = true
				nt, more := a.retryAt(1)
				if more {
					d.NextRetryAt = &nt
					failed = append(failed, quire.Pending{Event: ev, Attempt: 1, NextAt: nt})
				}
			}
		}
		cursor = ev.ID
	}
	if len(ds) == 0 && cursor == st.Cursor {
		return nextPass(st), nil // nothing done: nothing to store
	}
	if len(ds) > 0 {
		if err := a.ev.Webhooks.RecordDeliveries(context.WithoutCancel(ctx), project, ds...); err != nil {
			a.logError("record deliveries", err)
		}
	}
	var failingSince *time.Time
	err = a.ev.Webhooks.UpdateDeliveryState(context.WithoutCancel(ctx), project, id, func(s *quire.DeliveryState) error {
		if s.Cursor == st.Cursor {
			s.Cursor = cursor
		}
		kept := s.Pending[:0]
		for _, p := range s.Pending {
			if p.Event == nil {
				continue
			}
			if o, ok := results[p.Event.ID]; ok {
				delete(results, p.Event.ID) // one entry per result
				if o.ok || o.next.IsZero() {
					continue // delivered, or given up
				}
				p.Attempt, p.NextAt = o.attempt, o.next
			}
			kept = append(kept, p)
		}
		s.Pending = append(kept, failed...)
		switch {
		case succeeded:
			s.FailingSince = nil
		case failedAny && s.FailingSince == nil:
			t := now.UTC()
			s.FailingSince = &t
		}
		failingSince = s.FailingSince
		st = *s
		return nil
	})
	if err != nil {
		return time.Time{}, err
	}
	if failingSince != nil && time.Since(*failingSince) >= a.disableAfter() {
		return time.Time{}, a.disable(ctx, w, *failingSince)
	}
	if ctx.Err() != nil {
		return time.Time{}, ctx.Err()
	}
	if len(evs) == maxBatch {
		return time.Now(), nil // more to read
	}
	return nextPass(st), nil
}

// nextPass is when a worker in state st looks again: at its first due
// retry, or after pollEvery for events of other processes.
func nextPass(st quire.DeliveryState) time.Time {
	next := time.Now().Add(pollEvery)
	for _, p := range st.Pending {
		if p.NextAt.Before(next) {
			next = p.NextAt
		}
	}
	return next
}

// errNoChange ends an UpdateDeliveryState that only reads.
var errNoChange = fmt.Errorf("no change")

func (a *App) disableAfter() time.Duration {
	if a.ev.DisableAfter > 0 {
		return a.ev.DisableAfter
	}
	return 72 * time.Hour
}

func (a *App) schedule() []time.Duration {
	if a.ev.RetrySchedule != nil {
		return a.ev.RetrySchedule
	}
	return DefaultRetrySchedule
}

// retryAt is when the retry after attempt n is due, with up to 10%
// jitter so receivers back from an outage are not hit all at once; more
// is false when attempt n was the last.
func (a *App) retryAt(n int) (time.Time, bool) {
	s := a.schedule()
	if n > len(s) {
		return time.Time{}, false
	}
	d := s[n-1]
	if d > 0 {
		d += time.Duration(rand.Int64N(int64(d)/10 + 1))
	}
	return time.Now().Add(d), true
}

// attempt posts ev to w once, and returns the attempt's record.
func (a *App) attempt(ctx context.Context, w *quire.Webhook, keys [][]byte, ev *quire.Event, n int) (*quire.Delivery, bool) {
	body, _ := json.Marshal(ev)
	res := a.ev.Sender.Send(ctx, quire.WebhookRequest{URL: w.URL, MsgID: ev.ID, Secrets: keys, Body: body})
	id, _ := uuid.NewV7()
	d := &quire.Delivery{
		ID: id.String(), WebhookID: w.ID, EventID: ev.ID, EventType: ev.Type, Attempt: n,
		StatusCode: res.StatusCode, DurationMS: res.Duration.Milliseconds(), DeliveredAt: time.Now().UTC(),
	}
	ok := res.Err == nil && res.StatusCode/100 == 2
	switch {
	case res.Err != nil:
		d.Error = res.Err.Error()
	case !ok:
		d.Error = fmt.Sprintf("receiver answered %d", res.StatusCode)
	}
	if !ok && ctx.Err() == nil && a.ev.Logger != nil {
		a.ev.Logger.Warn("webhook delivery failed", "webhook_id", w.ID, "event_id", ev.ID, "event_type", string(ev.Type),
			"attempt", n, "receiver_status", res.StatusCode, "error", d.Error)
	}
	if a.ev.Delivered != nil && ctx.Err() == nil {
		a.ev.Delivered(d, time.Since(ev.OccurredAt))
	}
	return d, ok
}

// disable turns w off after failing since since, and records
// webhook.disabled.
func (a *App) disable(ctx context.Context, w *quire.Webhook, since time.Time) error {
	reason := fmt.Sprintf("every delivery failed since %s", since.Format(time.RFC3339))
	_, err := a.ev.Webhooks.UpdateWebhook(context.WithoutCancel(ctx), w.ProjectID, w.ID, func(w *quire.Webhook) error {
		w.Active, w.DisabledReason, w.UpdatedAt = false, reason, a.now().UTC()
		return nil
	})
	if err != nil {
		return err
	}
	return a.emit(ctx, &quire.Event{
		Type: quire.EventWebhookDisabled, OccurredAt: a.now().UTC(), ProjectID: w.ProjectID,
		Actor: quire.ActorOf(quire.Actor{}), Data: map[string]any{"webhook_id": w.ID, "url": w.URL, "reason": reason},
	})
}

func (a *App) logError(what string, err error) {
	if a.ev.Logger != nil {
		a.ev.Logger.Error(what, "error", err.Error())
	}
}

// Backlog counts the events owed to active webhooks (pending retries and
// events after their cursors) and the age of the oldest, for metrics.
func (a *App) Backlog(ctx context.Context) (n int, oldest time.Duration) {
	if a.webhooksOffered() != nil {
		return 0, 0
	}
	projects, _ := a.events.Projects(ctx)
	var first time.Time
	note := func(t time.Time) {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	for _, p := range projects {
		hooks, _ := a.ev.Webhooks.Webhooks(ctx, p)
		for _, w := range hooks {
			if !w.Active {
				continue
			}
			var st quire.DeliveryState
			a.ev.Webhooks.UpdateDeliveryState(ctx, p, w.ID, func(s *quire.DeliveryState) error {
				st = *s
				return errNoChange
			})
			for _, pe := range st.Pending {
				n++
				if pe.Event != nil {
					note(pe.Event.OccurredAt)
				}
			}
			evs, _, _ := a.events.Events(ctx, p, st.Cursor, 10000)
			f := w.Filter()
			for _, ev := range evs {
				if f.Match(ev) {
					n++
					note(ev.OccurredAt)
				}
			}
		}
	}
	if !first.IsZero() {
		oldest = time.Since(first)
	}
	return n, oldest
}
