package app

import (
	"context"

	"github.com/quire/quire"
)

// write runs one write of a use case and gives it its event, the same way
// for every write, so that none can forget its event or its crash window
// (docs/events.md, intents.go):
//
//  1. intent, the event as it is known before the write (type, project,
//     asset, version number), is announced in the event log;
//  2. do writes; if it fails, the intent is settled (void for a refusal,
//     read again for anything else) and the error returned;
//  3. made turns do's result into the event recorded (and may first run
//     what belongs between the write and its event, such as closing a
//     deleted draft's review); nil records nothing (a write that changed
//     nothing: the intent is void).
//
// The result is returned whenever do succeeded, with the error of step 3
// when that failed, so a caller can still hand a landed write to what
// follows it (the project repository's queue).
func write[T any](ctx context.Context, a *App, intent *quire.Event, do func(context.Context) (T, error), made func(context.Context, T) (*quire.Event, error)) (T, error) {
	var zero T
	ctx, err := a.intend(ctx, intent)
	if err != nil {
		return zero, err
	}
	v, err := do(ctx)
	if err != nil {
		return zero, a.abandon(ctx, err)
	}
	ev, err := made(ctx, v)
	if err != nil {
		return v, err
	}
	if ev == nil {
		a.void(ctx)
		return v, nil
	}
	return v, a.record(ctx, ev)
}

// record records ev: at once, or for a draft's version.updated as part of
// its burst of edits (emitUpdate).
func (a *App) record(ctx context.Context, ev *quire.Event) error {
	if ev.Type == quire.EventVersionUpdated {
		return a.emitUpdate(ctx, ev)
	}
	return a.emit(ctx, ev)
}

// versionMade is write's made for a write whose result is a version: its
// event of type t by by on as.
func (a *App) versionMade(t quire.EventType, by quire.Actor, as *quire.Asset) func(context.Context, *quire.Version) (*quire.Event, error) {
	return func(_ context.Context, v *quire.Version) (*quire.Event, error) {
		return a.versionEvent(t, by, as, v), nil
	}
}
