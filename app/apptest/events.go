package apptest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/google/uuid"
	"github.com/quire/quire"
)

// Events is a quire.EventLog that keeps what it is told, so a test can
// assert that a write announced its event, recorded it exactly once, and
// that a refused write recorded nothing and voided its intent. Fulfil or
// Void of an intent already settled is an error, as a second event of
// one write would be a bug.
type Events struct {
	quire.EventLog

	mu      sync.Mutex
	log     map[string][]*quire.Event          // project → events, in order
	intents map[string]*intent                 // intent id → where it stands
	held    map[string]map[string]*quire.Event // project → key → held event
}

// intent is an announced write and how it was settled: "" while
// pending, "fulfilled" or "void".
type intent struct {
	in      *quire.Intent
	project string
	settled string
}

// NewEvents returns an empty Events.
func NewEvents() *Events {
	return &Events{log: map[string][]*quire.Event{}, intents: map[string]*intent{}, held: map[string]map[string]*quire.Event{}}
}

// Append records evs, giving each an id.
func (l *Events) Append(_ context.Context, project string, evs ...*quire.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.append(project, evs)
	return nil
}

func (l *Events) append(project string, evs []*quire.Event) {
	for _, ev := range evs {
		c := *ev
		c.ID = uuid.NewString()
		l.log[project] = append(l.log[project], &c)
	}
}

// Intend records in as pending, giving it an id.
func (l *Events) Intend(_ context.Context, project string, in *quire.Intent) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	in.ID, in.Owner = uuid.NewString(), "apptest"
	c := *in
	l.intents[in.ID] = &intent{in: &c, project: project}
	return nil
}

// settle marks intent id settled as how.
func (l *Events) settle(project, id, how string) error {
	it, ok := l.intents[id]
	switch {
	case !ok || it.project != project:
		return fmt.Errorf("intent %s of project %s not found", id, project)
	case it.settled != "":
		return fmt.Errorf("intent %s (%s) settled twice: %s, then %s", id, it.in.Event.Type, it.settled, how)
	}
	it.settled = how
	return nil
}

// Fulfil records evs as the events of intent id.
func (l *Events) Fulfil(_ context.Context, project, id string, evs ...*quire.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.settle(project, id, "fulfilled"); err != nil {
		return err
	}
	l.append(project, evs)
	return nil
}

// Void records that intent id's write did not land.
func (l *Events) Void(_ context.Context, project, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.settle(project, id, "void")
}

// Hold keeps ev as the pending event of key, fulfilling intent when set.
func (l *Events) Hold(_ context.Context, project, key, intent string, ev *quire.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if intent != "" {
		if err := l.settle(project, intent, "fulfilled"); err != nil {
			return err
		}
	}
	if l.held[project] == nil {
		l.held[project] = map[string]*quire.Event{}
	}
	c := *ev
	l.held[project][key] = &c
	return nil
}

// Release records the held event of key, if any.
func (l *Events) Release(_ context.Context, project, key string) (*quire.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev, ok := l.held[project][key]
	if !ok {
		return nil, nil
	}
	delete(l.held[project], key)
	l.append(project, []*quire.Event{ev})
	return ev, nil
}

// Held lists the keys of the events held, per project.
func (l *Events) Held(context.Context) (map[string][]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]string{}
	for project, keys := range l.held {
		for k := range keys {
			out[project] = append(out[project], k)
		}
	}
	return out, nil
}

// Recorded lists copies of the events of project recorded so far, in
// order; held events are not among them until released.
func (l *Events) Recorded(project string) []*quire.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*quire.Event, 0, len(l.log[project]))
	for _, ev := range l.log[project] {
		c := *ev
		out = append(out, &c)
	}
	return out
}

// HeldEvents lists copies of the events of project held and not
// released.
func (l *Events) HeldEvents(project string) []*quire.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []*quire.Event{}
	for _, k := range slices.Sorted(maps.Keys(l.held[project])) {
		c := *l.held[project][k]
		out = append(out, &c)
	}
	return out
}

// Intents lists the types of the intents of project announced so far
// that stand as settled ("" for pending, "fulfilled" or "void").
func (l *Events) Intents(project, settled string) []quire.EventType {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []quire.EventType
	for _, it := range l.intents {
		if it.project == project && it.settled == settled {
			out = append(out, it.in.Event.Type)
		}
	}
	slices.Sort(out)
	return out
}
