package quire

import (
	"context"
	"time"
)

// EventType names what happened. Subscriptions name types; "*" is all.
type EventType string

// Event types. Append only: receivers match on them.
const (
	EventAssetCreated     EventType = "asset.created"
	EventAssetDeleted     EventType = "asset.deleted"
	EventVersionCreated   EventType = "version.created"
	EventVersionUpdated   EventType = "version.updated"
	EventVersionPublished EventType = "version.published"
	EventVersionPromoted  EventType = "version.promoted"
	EventVersionArchived  EventType = "version.archived"
	EventVersionDeleted   EventType = "version.deleted"
	EventLabelMoved       EventType = "label.moved"
	EventLabelDeleted     EventType = "label.deleted"
	EventReviewOpened     EventType = "review.opened"
	EventReviewCommented  EventType = "review.commented"
	EventReviewApproved   EventType = "review.approved"
	EventReviewChanges    EventType = "review.changes_requested"
	EventReviewMerged     EventType = "review.merged"
	EventReviewClosed     EventType = "review.closed"
	EventReviewReopened   EventType = "review.reopened"
	EventReviewRetitled   EventType = "review.retitled"
	EventCommentUpdated   EventType = "review.comment_updated"
	// An evaluation of a prompt version ran all its cases, or stopped on
	// an error (evaluation.go).
	EventEvaluationCompleted EventType = "evaluation.completed"
	EventEvaluationFailed    EventType = "evaluation.failed"
	EventWebhookDisabled     EventType = "webhook.disabled"
	EventPing                EventType = "ping"
	EventAll                 EventType = "*"
)

// EventTypes lists the types a subscription may name (besides "*").
var EventTypes = []EventType{
	EventAssetCreated, EventAssetDeleted,
	EventVersionCreated, EventVersionUpdated, EventVersionPublished, EventVersionPromoted,
	EventVersionArchived, EventVersionDeleted,
	EventLabelMoved, EventLabelDeleted,
	EventReviewOpened, EventReviewCommented, EventReviewApproved, EventReviewChanges,
	EventReviewMerged, EventReviewClosed, EventReviewReopened, EventReviewRetitled, EventCommentUpdated,
	EventEvaluationCompleted, EventEvaluationFailed,
	EventWebhookDisabled, EventPing,
}

// Known reports whether t is a type a subscription may name.
func (t EventType) Known() bool {
	if t == EventAll {
		return true
	}
	for _, k := range EventTypes {
		if k == t {
			return true
		}
	}
	return false
}

// Event is the one envelope of every change, as webhooks and the live
// stream carry it. ID is a UUIDv7: unique, and sortable by time.
type Event struct {
	ID         string      `json:"id"`
	Type       EventType   `json:"type"`
	OccurredAt time.Time   `json:"occurred_at"`
	ProjectID  string      `json:"project_id"`
	Asset      *EventAsset `json:"asset,omitempty"`
	Version    int         `json:"version,omitempty"`
	Label      string      `json:"label,omitempty"`
	Review     int         `json:"review,omitempty"`
	Actor      EventActor  `json:"actor"`
	// Data holds what the type adds; "commit" is the commit the event is
	// about, where there is one.
	Data map[string]any `json:"data"`
}

// EventAsset is the asset an event is about.
type EventAsset struct {
	Kind Kind   `json:"kind"`
	ID   string `json:"id"`
	Slug string `json:"slug"`
}

// EventActor is who caused an event: "user" (a login session), "api_key"
// or "system" (the server itself, e.g. disabling a failing webhook).
type EventActor struct {
	Type  string `json:"type" enum:"user,api_key,system"`
	ID    string `json:"id"`
	Email string `json:"email,omitempty"`
}

// ActorOf is the event actor of a change authored by a.
func ActorOf(a Actor) EventActor {
	if a.KeyID != "" {
		return EventActor{Type: "api_key", ID: a.KeyID, Email: a.Email}
	}
	if a.UserID == "" {
		return EventActor{Type: "system", ID: "quire"}
	}
	return EventActor{Type: "user", ID: a.UserID, Email: a.Email}
}

// EventFilter narrows a read of the event log.
type EventFilter struct {
	Types  []EventType // none: all
	Assets []string    // asset ids or slugs; none: all
}

// Match reports whether ev passes f.
func (f EventFilter) Match(ev *Event) bool {
	if len(f.Types) > 0 {
		ok := false
		for _, t := range f.Types {
			if t == EventAll || t == ev.Type {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(f.Assets) > 0 {
		if ev.Asset == nil {
			return false
		}
		for _, a := range f.Assets {
			if a == ev.Asset.ID || a == ev.Asset.Slug {
				return true
			}
		}
		return false
	}
	return true
}

// EventLog is the durable record of events, one log per project
// (eventlog implements it on the data root's disk).
type EventLog interface {
	// Append gives each event an id (UUIDv7, after every id already in
	// the project's log) and records them durably: when Append returns
	// nil, they survive a crash.
	Append(ctx context.Context, projectID string, evs ...*Event) error
	// Hold records ev durably as the pending trailing event of a burst
	// under key; it becomes an event only through Release (or, after a
	// crash, through Held at start). It fulfils intent, when set.
	Hold(ctx context.Context, projectID, key, intent string, ev *Event) error
	// Release appends the held event of key, if still pending, as a
	// real event under key.
	Release(ctx context.Context, projectID, key string) (*Event, error)
	// Held lists the keys of held events never released, per project.
	Held(ctx context.Context) (map[string][]string, error)
	// Events lists up to limit events of the project after the id after
	// ("" from the oldest retained), ascending. oldest is the id of the
	// oldest retained event ("" for none).
	Events(ctx context.Context, projectID, after string, limit int) (evs []*Event, oldest string, err error)
	// Projects lists the projects that have an event log or webhooks.
	Projects(ctx context.Context) ([]string, error)

	// Intend records in durably before the write it announces, setting
	// its ID and Owner (this process).
	Intend(ctx context.Context, projectID string, in *Intent) error
	// Fulfil appends evs as Append does, as the events of intent id.
	Fulfil(ctx context.Context, projectID, id string, evs ...*Event) error
	// Void records that intent id's write did not land.
	Void(ctx context.Context, projectID, id string) error
	// Orphans lists, per project, the intents neither fulfilled nor
	// voided whose process has ended. It holds a lock every process
	// honours until release, so one process at a time settles them.
	Orphans(ctx context.Context) (orphans map[string][]*Intent, release func(), err error)
	// Forget drops what is kept of a process found ended, once its
	// orphans are settled.
	Forget(owner string)
	// RemoveProject deletes the project's log, webhooks and intents,
	// unless a file of them changed within idleFor.
	RemoveProject(ctx context.Context, projectID string, idleFor time.Duration) error
}

// Intent is a write about to happen, recorded before it: a process killed
// between the write and its event leaves it unsettled, and the next start
// looks at the repository to tell whether the write landed -- the state
// it changes reads otherwise than Before -- and records Event if it did.
type Intent struct {
	ID    string `json:"id"`
	Owner string `json:"owner"`
	// Event is the event the write makes, as known before it (the store
	// fills in what only the write decides: a new version's number, a
	// commit).
	Event *Event `json:"event"`
	// Before is the state the write changes, as read before it.
	Before string `json:"before"`
}

// Webhook is a project's subscription to its events, delivered by POST.
type Webhook struct {
	ID          string      `json:"id"`
	ProjectID   string      `json:"project_id"`
	URL         string      `json:"url"`
	Events      []EventType `json:"events"`
	Assets      []string    `json:"assets"`
	Description string      `json:"description"`
	Active      bool        `json:"active"`
	CreatedAt   time.Time   `json:"created_at"`
	UpdatedAt   time.Time   `json:"updated_at"`
	// Secrets are the signing secrets, newest first, sealed by app;
	// never shown after creation or rotation.
	Secrets []WebhookSecret `json:"secrets,omitempty"`
	// DisabledReason says why the server turned the webhook off.
	DisabledReason string `json:"disabled_reason,omitempty"`
}

// WebhookSecret is one signing secret, encrypted; an old one after a
// rotation stays valid until ExpiresAt.
type WebhookSecret struct {
	Sealed    string     `json:"sealed"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Filter is the event filter of the subscription.
func (w *Webhook) Filter() EventFilter { return EventFilter{Types: w.Events, Assets: w.Assets} }

// Delivery is one attempt to deliver an event to a webhook.
type Delivery struct {
	ID          string     `json:"id"`
	WebhookID   string     `json:"webhook_id"`
	EventID     string     `json:"event_id"`
	EventType   EventType  `json:"event_type"`
	Attempt     int        `json:"attempt"`
	StatusCode  int        `json:"status_code"`
	DurationMS  int64      `json:"duration_ms"`
	Error       string     `json:"error"`
	DeliveredAt time.Time  `json:"delivered_at"`
	NextRetryAt *time.Time `json:"next_retry_at"`
}

// Pending is an event a webhook still owes its receiver: a retry, a
// redelivery or a ping.
type Pending struct {
	Event   *Event    `json:"event"`
	Attempt int       `json:"attempt"` // attempts made so far
	NextAt  time.Time `json:"next_at"`
}

// DeliveryState is where a webhook's deliveries stand: every event of
// the project up to Cursor was delivered or is in Pending.
type DeliveryState struct {
	Cursor  string    `json:"cursor"`
	Pending []Pending `json:"pending"`
	// FailingSince is the first failure of the current run of failures.
	FailingSince *time.Time `json:"failing_since,omitempty"`
}

// WebhookStore keeps webhooks, their delivery state and attempt log.
type WebhookStore interface {
	CreateWebhook(ctx context.Context, w *Webhook) error
	Webhook(ctx context.Context, projectID, id string) (*Webhook, error)
	Webhooks(ctx context.Context, projectID string) ([]*Webhook, error)
	// UpdateWebhook applies fn to the stored webhook under its lock.
	UpdateWebhook(ctx context.Context, projectID, id string, fn func(*Webhook) error) (*Webhook, error)
	DeleteWebhook(ctx context.Context, projectID, id string) error
	// UpdateDeliveryState applies fn to the webhook's state under its
	// lock, durably. A new webhook's cursor is the project's newest
	// event then, so it receives only what happens after it.
	UpdateDeliveryState(ctx context.Context, projectID, id string, fn func(*DeliveryState) error) error
	// RecordDeliveries appends attempts to the webhook's delivery log.
	RecordDeliveries(ctx context.Context, projectID string, ds ...*Delivery) error
	// Deliveries lists a page of attempts, newest first; before is the
	// cursor (a delivery id) the page starts after.
	Deliveries(ctx context.Context, projectID, webhookID, before string, limit int) ([]*Delivery, string, error)
	// Lead makes this process the one that delivers, if no other does:
	// ok is false when another process holds the role.
	Lead() (release func(), ok bool)
}

// WebhookRequest is one POST to a receiver, signed by the sender with
// each of Secrets (the Standard Webhooks scheme) as it is sent.
type WebhookRequest struct {
	URL string
	// MsgID is the webhook-id header: the event's id, the same on every
	// attempt, so receivers can drop duplicates.
	MsgID   string
	Secrets [][]byte
	Body    []byte
}

// WebhookResult is what one attempt came to. Err is set for a failure
// without a status (refused address, timeout, reset).
type WebhookResult struct {
	StatusCode int
	Duration   time.Duration
	Err        error
}

// WebhookSender posts to receivers, refusing addresses a server must not
// reach (the SSRF guard); package webhook implements it.
type WebhookSender interface {
	Send(ctx context.Context, req WebhookRequest) WebhookResult
	// CheckURL refuses a URL that is not absolute http(s) or whose host
	// resolves to an address the guard refuses.
	CheckURL(ctx context.Context, url string) error
}
