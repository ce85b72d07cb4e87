package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/quire/quire"
)

// Intents close the crash window between a write and its event
// (docs/events.md): a use case calls intend with the event its write will
// make before the write, which reads the state the write changes and
// records both; the event emit records afterwards fulfils the intent. A
// process killed in between leaves the intent unsettled, and the next
// start (RecoverIntents) reads the state again: if it changed, the write
// landed, and the event is recorded then, from what the repository holds.
//
// write (write.go) runs that sequence for every write:
//
//	v, err := write(ctx, a, a.assetEvent(quire.EventVersionPromoted, p.Actor(), as, n, ""),
//		func(ctx context.Context) (*quire.Version, error) { return a.versions.PromoteVersion(ctx, p.Actor(), as, n) },
//		a.versionMade(quire.EventVersionPromoted, p.Actor(), as))

// intentKey is the context key of a write's pending intent, which emit
// fulfils.
type intentKey struct{}

// pending is a write's intent while its use case runs.
type pending struct {
	in      *quire.Intent
	settled bool
}

func pendingIntent(ctx context.Context) *pending {
	p, _ := ctx.Value(intentKey{}).(*pending)
	if p == nil || p.settled {
		return nil
	}
	return p
}

// intend records that a write making ev is about to happen, with the
// state it changes as read now, and returns the write's context, which
// carries the intent to emit. Without an event log it does nothing.
func (a *App) intend(ctx context.Context, ev *quire.Event) (context.Context, error) {
	if a.events == nil {
		return ctx, nil
	}
	before, err := a.observe(ctx, ev)
	if err != nil {
		return ctx, err
	}
	in := &quire.Intent{Event: ev, Before: before}
	if err := a.events.Intend(context.WithoutCancel(ctx), ev.ProjectID, in); err != nil {
		return ctx, &quire.Error{Code: quire.EINTERNAL, Message: "the change could not be announced in the event log", Err: err}
	}
	return context.WithValue(ctx, intentKey{}, &pending{in: in}), nil
}

// reviewIntent announces review action ev on review num of as (0: one
// about to be opened), before its write.
func (a *App) reviewIntent(ctx context.Context, p *quire.Principal, as *quire.Asset, ev ReviewEvent, num int) (context.Context, error) {
	e := a.assetEvent(quire.EventType(ev), p.Actor(), as, 0, "")
	e.Review = num
	return a.intend(ctx, e)
}

// fulfils reports whether evs hold the event of the intent in ctx.
func (p *pending) fulfils(evs []*quire.Event) bool {
	for _, ev := range evs {
		if ev.Type == p.in.Event.Type && ev.ProjectID == p.in.Event.ProjectID {
			return true
		}
	}
	return false
}

// abandon settles the intent in ctx after its write failed with err, and
// returns err. A refusal (bad input, a conflict, a missing version) is
// decided before anything is written: the intent is void. Any other error
// may come after the write landed, so the state is read again.
func (a *App) abandon(ctx context.Context, err error) error {
	p := pendingIntent(ctx)
	if p == nil {
		return err
	}
	if quire.ErrorCode(err) != quire.EINTERNAL {
		a.void(ctx)
		return err
	}
	p.settled = true
	bg := context.WithoutCancel(ctx)
	if serr := a.settle(bg, p.in); serr != nil {
		a.logError("settle intent", serr)
	}
	return err
}

// void settles the intent in ctx as a write that changed nothing.
func (a *App) void(ctx context.Context) {
	if p := pendingIntent(ctx); p != nil {
		p.settled = true
		if err := a.events.Void(context.WithoutCancel(ctx), p.in.Event.ProjectID, p.in.ID); err != nil {
			a.logError("void intent", err)
		}
	}
}

// RecoverIntents settles the intents of processes that ended before
// their writes' events were recorded: a write that landed gets its event
// now. The server runs it at start, before it serves, and the delivery
// worker now and then for other processes sharing the data root.
func (a *App) RecoverIntents(ctx context.Context) error {
	if a.events == nil {
		return nil
	}
	orphans, release, err := a.events.Orphans(ctx)
	if err != nil {
		return err
	}
	defer release()
	owners := map[string]bool{} // owner → all its orphans settled
	var first error
	for _, ins := range orphans {
		for _, in := range ins {
			if _, seen := owners[in.Owner]; !seen {
				owners[in.Owner] = true
			}
			if err := a.settle(ctx, in); err != nil {
				owners[in.Owner] = false
				if first == nil {
					first = fmt.Errorf("intent %s (%s): %w", in.ID, in.Event.Type, err)
				}
			}
		}
	}
	for owner, done := range owners {
		if done {
			a.events.Forget(owner)
		}
	}
	return first
}

// settle records in's event if its write landed, else voids it.
func (a *App) settle(ctx context.Context, in *quire.Intent) error {
	project := in.Event.ProjectID
	ev, landed, err := a.landed(ctx, in)
	if err != nil {
		return err
	}
	if !landed {
		return a.events.Void(ctx, project, in.ID)
	}
	if err := a.events.Fulfil(ctx, project, in.ID, ev); err != nil {
		return err
	}
	a.bus.notify(project)
	return nil
}

// landed reads the state in's write changes: when it differs from what
// was read before the write, the write landed, and ev is its event, with
// what only the write decided (a new version's number, the commit) read
// from the repository.
func (a *App) landed(ctx context.Context, in *quire.Intent) (ev *quire.Event, landed bool, err error) {
	now, err := a.observe(ctx, in.Event)
	if err != nil || now == in.Before {
		return nil, false, err
	}
	e := *in.Event
	e.Data = map[string]any{}
	for k, v := range in.Event.Data {
		e.Data[k] = v
	}
	if e.Asset == nil {
		return &e, true, nil
	}
	as, err := a.meta.Asset(ctx, e.Asset.Kind, e.Asset.ID)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return &e, true, nil // gone since: the event as intended
	}
	if err != nil {
		return nil, false, err
	}
	switch t := e.Type; {
	case t == quire.EventVersionCreated:
		n, err := a.newestVersion(ctx, as)
		if err != nil {
			return nil, false, err
		}
		if _, err := a.versions.Version(ctx, as, n); quire.ErrorCode(err) == quire.ENOTFOUND {
			return nil, false, nil // allocated, but its draft never made (or deleted since)
		}
		e.Version = n
		fallthrough
	case t == quire.EventVersionUpdated, t == quire.EventVersionPublished, t == quire.EventVersionPromoted, t == quire.EventVersionArchived:
		if v, err := a.versions.Version(ctx, as, e.Version); err == nil {
			e.Data["commit"], e.Data["state"], e.Data["live"] = v.Commit, v.State, v.Live
		}
	case t == quire.EventLabelMoved:
		if l, err := a.label(ctx, as, e.Label); err == nil && l != nil {
			e.Version = l.Version
		}
	case t == quire.EventReviewOpened:
		n, err := a.newestReview(ctx, as)
		if err != nil {
			return nil, false, err
		}
		e.Review = n
		fallthrough
	case strings.HasPrefix(string(t), "review."):
		if a.reviews != nil {
			if rt, err := a.reviews.ReviewThread(ctx, as, e.Review); err == nil {
				e.Version = rt.Review.Version
				e.Data["state"] = rt.Review.State
				if rt.Review.Title != "" {
					e.Data["title"] = rt.Review.Title
				}
			}
		}
	}
	return &e, true, nil
}

// observe reads the state a write making ev changes, as a string that
// any change of it changes: whether the asset exists; the newest version
// or review number (for what opens one); a version's state, commit and
// liveness; a label's target and move time; a review's state and time of
// its last change (each review change is a commit that sets it).
func (a *App) observe(ctx context.Context, ev *quire.Event) (string, error) {
	if ev.Asset == nil {
		return "", nil
	}
	as, err := a.meta.Asset(ctx, ev.Asset.Kind, ev.Asset.ID)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return "absent", nil
	}
	if err != nil {
		return "", err
	}
	switch t := ev.Type; {
	case t == quire.EventAssetCreated, t == quire.EventAssetDeleted:
		return "present", nil
	case t == quire.EventVersionCreated:
		if vc, ok := a.versions.(versionCounter); ok {
			n, err := vc.NextVersion(ctx, as)
			return fmt.Sprintf("next version %d", n), err
		}
		n, err := a.newestVersion(ctx, as)
		return fmt.Sprintf("newest version %d", n), err
	case strings.HasPrefix(string(t), "version."):
		v, err := a.versions.Version(ctx, as, ev.Version)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return "no version", nil
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("version %s %s live=%t", v.State, v.Commit, v.Live), nil
	case strings.HasPrefix(string(t), "label."):
		l, err := a.label(ctx, as, ev.Label)
		if err != nil || l == nil {
			return "no label", err
		}
		return fmt.Sprintf("label %d %s %s", l.Version, l.Commit, l.MovedAt.Format(time.RFC3339Nano)), nil
	case t == quire.EventReviewOpened:
		n, err := a.newestReview(ctx, as)
		return fmt.Sprintf("newest review %d", n), err
	case strings.HasPrefix(string(t), "review.") && a.reviews != nil:
		rt, err := a.reviews.ReviewThread(ctx, as, ev.Review)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return "no review", nil
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("review %s %s", rt.Review.State, rt.Review.UpdatedAt.Format(time.RFC3339Nano)), nil
	}
	return "", nil
}

// versionCounter is a version store that tells the number of the next
// version (gitstore): cheaper than listing the versions.
type versionCounter interface {
	NextVersion(ctx context.Context, a *quire.Asset) (int, error)
}

// newestVersion is the number of the asset's newest version, made or
// being made.
func (a *App) newestVersion(ctx context.Context, as *quire.Asset) (int, error) {
	if vc, ok := a.versions.(versionCounter); ok {
		n, err := vc.NextVersion(ctx, as)
		return n - 1, err
	}
	vs, err := a.versions.Versions(ctx, as)
	n := 0
	for _, v := range vs {
		n = max(n, v.Number)
	}
	return n, err
}

func (a *App) newestReview(ctx context.Context, as *quire.Asset) (int, error) {
	if a.reviews == nil {
		return 0, nil
	}
	rs, err := a.reviews.Reviews(ctx, as, "")
	n := 0
	for _, r := range rs {
		n = max(n, r.Number)
	}
	return n, err
}

// label finds label name of as (nil: none).
func (a *App) label(ctx context.Context, as *quire.Asset, name string) (*quire.Label, error) {
	if a.labels == nil {
		return nil, nil
	}
	ls, err := a.labels.Labels(ctx, as)
	if err != nil {
		return nil, err
	}
	for i := range ls {
		if ls[i].Name == name {
			return &ls[i], nil
		}
	}
	return nil, nil
}
