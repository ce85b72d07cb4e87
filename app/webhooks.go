package app

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// EventsConfig is what events and webhooks need. With Log nil the App
// keeps no events (and offers no webhooks).
type EventsConfig struct {
	Log      quire.EventLog
	Webhooks quire.WebhookStore
	Sender   quire.WebhookSender
	// SecretKey seals webhook signing secrets at rest (AES-256-GCM): a
	// copy of the metadata files alone does not give them away. 32 bytes.
	SecretKey []byte
	// RetrySchedule is the wait before each retry of a failed delivery;
	// DefaultRetrySchedule when nil. After the last, the event is given up.
	RetrySchedule []time.Duration
	// DisableAfter is how long a webhook may fail without a success
	// before it is disabled (3 days when 0).
	DisableAfter time.Duration
	// Logger hears of failed attempts (never a secret) and worker errors.
	Logger *slog.Logger
	// Delivered, when set, hears of every attempt: the metrics.
	Delivered func(d *quire.Delivery, lag time.Duration)
	// Heartbeat is how often an idle event stream sends a comment (15 s
	// when 0); tests shorten it.
	Heartbeat time.Duration
	// Recheck is how often an open stream authenticates its credential
	// and checks its read access again (30 s when 0): a change made by
	// another process is seen within it; one made by this process at
	// once.
	Recheck time.Duration
	// StreamMax is how long one stream lasts before it ends with a
	// retry: hint, so long-lived clients reconnect (1 h when 0).
	StreamMax time.Duration
}

// DefaultRetrySchedule is Standard Webhooks' suggested schedule.
var DefaultRetrySchedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// rotationGrace is how long an old secret keeps signing after a rotation.
const rotationGrace = 24 * time.Hour

// secretPrefix marks a Standard Webhooks signing secret.
const secretPrefix = "whsec_"

// WebhookInput is a webhook's create or update request; nil fields are
// left as they are (create: url and events are required).
type WebhookInput struct {
	URL         *string            `json:"url"`
	Events      *[]quire.EventType `json:"events"`
	Assets      *[]string          `json:"assets"`
	Description *string            `json:"description"`
	Active      *bool              `json:"active"`
}

func (a *App) webhooksOffered() error {
	if a.events == nil || a.ev.Webhooks == nil || a.ev.Sender == nil {
		return quire.Errorf(quire.EUNAVAILABLE, "webhooks are not offered by this server")
	}
	return nil
}

// apply checks in and applies it to w.
func (a *App) applyWebhook(ctx context.Context, pr *quire.Project, w *quire.Webhook, in WebhookInput, create bool) error {
	if create && (in.URL == nil || in.Events == nil) {
		var missing []string
		if in.URL == nil {
			missing = append(missing, "url")
		}
		if in.Events == nil {
			missing = append(missing, "events")
		}
		return quire.Errorf(quire.EUNPROCESSABLE, "missing %s", strings.Join(missing, " and ")).WithDetail("missing", missing)
	}
	if in.URL != nil {
		if len(*in.URL) > valid.MaxURL {
			return quire.Errorf(quire.EUNPROCESSABLE, "url is longer than %d bytes", valid.MaxURL)
		}
		if err := a.ev.Sender.CheckURL(ctx, *in.URL); err != nil {
			return err
		}
		w.URL = *in.URL
	}
	if in.Events != nil {
		evs := *in.Events
		if len(evs) == 0 {
			return quire.Errorf(quire.EUNPROCESSABLE, "events must name at least one event type, or \"*\"")
		}
		if err := checkEventTypes(evs); err != nil {
			return err
		}
		w.Events = evs
	}
	if in.Assets != nil {
		if len(*in.Assets) > valid.MaxWebhookAssets {
			return quire.Errorf(quire.EUNPROCESSABLE, "assets may name at most %d assets", valid.MaxWebhookAssets)
		}
		w.Assets = *in.Assets
	}
	if w.Assets == nil {
		w.Assets = []string{}
	}
	if in.Description != nil {
		if len(*in.Description) > valid.MaxWebhookDescription {
			return quire.Errorf(quire.EUNPROCESSABLE, "description is longer than %d bytes", valid.MaxWebhookDescription)
		}
		w.Description = *in.Description
	}
	if in.Active != nil {
		w.Active = *in.Active
		if w.Active {
			w.DisabledReason = ""
		}
	}
	return nil
}

// CreateWebhook subscribes a receiver to the project's events (project
// owners). secret is the signing secret, "whsec_" and base64: shown only
// here.
func (h *ProjectHandle) CreateWebhook(ctx context.Context, req WebhookInput) (*quire.Webhook, string, error) {
	a, pr := h.app, h.Project
	if err := h.need(quire.AccessAdmin); err != nil {
		return nil, "", err
	}
	if err := a.webhooksOffered(); err != nil {
		return nil, "", err
	}
	now := a.now().UTC()
	w := &quire.Webhook{ID: uuid.NewString(), ProjectID: pr.ID, Active: true, CreatedAt: now, UpdatedAt: now}
	if err := a.applyWebhook(ctx, pr, w, req, true); err != nil {
		return nil, "", err
	}
	secret, sealed, err := a.newSecret()
	if err != nil {
		return nil, "", err
	}
	w.Secrets = []quire.WebhookSecret{{Sealed: sealed}}
	if err := a.ev.Webhooks.CreateWebhook(ctx, w); err != nil {
		return nil, "", err
	}
	a.bus.notify(pr.ID) // the worker starts delivering to it
	return w, secret, nil
}

// Webhooks lists the project's webhooks (project owners).
func (h *ProjectHandle) Webhooks(ctx context.Context) ([]*quire.Webhook, error) {
	a, pr := h.app, h.Project
	if err := h.need(quire.AccessAdmin); err != nil {
		return nil, err
	}
	if err := a.webhooksOffered(); err != nil {
		return nil, err
	}
	return a.ev.Webhooks.Webhooks(ctx, pr.ID)
}

// Webhook reads one webhook (project owners).
func (h *ProjectHandle) Webhook(ctx context.Context, id string) (*quire.Webhook, error) {
	a, pr := h.app, h.Project
	if err := h.need(quire.AccessAdmin); err != nil {
		return nil, err
	}
	if err := a.webhooksOffered(); err != nil {
		return nil, err
	}
	return a.ev.Webhooks.Webhook(ctx, pr.ID, id)
}

// UpdateWebhook changes a webhook (project owners).
func (h *ProjectHandle) UpdateWebhook(ctx context.Context, id string, req WebhookInput) (*quire.Webhook, error) {
	a, pr := h.app, h.Project
	if err := h.need(quire.AccessAdmin); err != nil {
		return nil, err
	}
	if err := a.webhooksOffered(); err != nil {
		return nil, err
	}
	if _, err := a.ev.Webhooks.Webhook(ctx, pr.ID, id); err != nil {
		return nil, err
	}
	w, err := a.ev.Webhooks.UpdateWebhook(ctx, pr.ID, id, func(w *quire.Webhook) error {
		w.UpdatedAt = a.now().UTC()
		return a.applyWebhook(ctx, pr, w, req, false)
	})
	if err == nil {
		a.bus.notify(pr.ID)
	}
	return w, err
}

// DeleteWebhook removes a webhook and its delivery log (project owners).
func (h *ProjectHandle) DeleteWebhook(ctx context.Context, id string) error {
	a, pr := h.app, h.Project
	if err := h.need(quire.AccessAdmin); err != nil {
		return err
	}
	if err := a.webhooksOffered(); err != nil {
		return err
	}
	if err := a.ev.Webhooks.DeleteWebhook(ctx, pr.ID, id); err != nil {
		return err
	}
	a.bus.notify(pr.ID)
	return nil
}

// RotateWebhookSecret gives the webhook a new signing secret, returned
// once; the old one keeps signing beside it for 24 hours.
func (h *ProjectHandle) RotateWebhookSecret(ctx context.Context, id string) (*quire.Webhook, string, error) {
	a, pr := h.app, h.Project
	if err := h.need(quire.AccessAdmin); err != nil {
		return nil, "", err
	}
	if err := a.webhooksOffered(); err != nil {
		return nil, "", err
	}
	secret, sealed, err := a.newSecret()
	if err != nil {
		return nil, "", err
	}
	w, err := a.ev.Webhooks.UpdateWebhook(ctx, pr.ID, id, func(w *quire.Webhook) error {
		now := a.now().UTC()
		until := now.Add(rotationGrace)
		keep := []quire.WebhookSecret{{Sealed: sealed}}
		for i, s := range w.Secrets {
			if i == 0 {
				s.ExpiresAt = &until
			}
			if s.ExpiresAt != nil && s.ExpiresAt.After(now) {
				keep = append(keep, s)
			}
		}
		w.Secrets, w.UpdatedAt = keep, now
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return w, secret, nil
}

// WebhookDeliveries lists a page of the webhook's attempts, newest first.
func (h *ProjectHandle) WebhookDeliveries(ctx context.Context, id string, o quire.ListOptions) ([]*quire.Delivery, string, error) {
	w, err := h.Webhook(ctx, id)
	if err != nil {
		return nil, "", err
	}
	ds, next, err := h.app.ev.Webhooks.Deliveries(ctx, w.ProjectID, w.ID, o.Cursor, o.Limit)
	if ds == nil {
		ds = []*quire.Delivery{}
	}
	return ds, next, err
}

// Redeliver queues the event of delivery d for another attempt now.
func (h *ProjectHandle) Redeliver(ctx context.Context, id, deliveryID string) error {
	a := h.app
	w, err := h.Webhook(ctx, id)
	if err != nil {
		return err
	}
	var found *quire.Delivery
	cursor := ""
	for found == nil {
		ds, next, err := a.ev.Webhooks.Deliveries(ctx, w.ProjectID, w.ID, cursor, 500)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if d.ID == deliveryID {
				found = d
				break
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if found == nil {
		return quire.Errorf(quire.ENOTFOUND, "delivery not found")
	}
	ev, err := a.findEvent(ctx, w.ProjectID, found.EventID)
	if err != nil {
		return err
	}
	return a.queue(ctx, w, ev)
}

// findEvent reads one event of the project's log: the log lists events
// after an id, so it reads pages from the oldest until it passes id.
func (a *App) findEvent(ctx context.Context, project, id string) (*quire.Event, error) {
	after := ""
	for {
		evs, _, err := a.events.Events(ctx, project, after, 1000)
		if err != nil {
			return nil, err
		}
		if len(evs) == 0 {
			return nil, quire.Errorf(quire.ENOTFOUND, "event %s is no longer retained", id)
		}
		for _, ev := range evs {
			if ev.ID == id {
				return ev, nil
			}
		}
		after = evs[len(evs)-1].ID
		if after > id {
			return nil, quire.Errorf(quire.ENOTFOUND, "event %s is no longer retained", id)
		}
	}
}

// PingWebhook sends the webhook a ping event now.
func (h *ProjectHandle) PingWebhook(ctx context.Context, id string) (*quire.Event, error) {
	a, p := h.app, h.P
	w, err := h.Webhook(ctx, id)
	if err != nil {
		return nil, err
	}
	uid, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	ev := &quire.Event{
		ID: uid.String(), Type: quire.EventPing, OccurredAt: a.now().UTC(), ProjectID: w.ProjectID,
		Actor: quire.ActorOf(p.Actor()), Data: map[string]any{"webhook_id": w.ID},
	}
	return ev, a.queue(ctx, w, ev)
}

// queue adds ev to w's pending deliveries, due now.
func (a *App) queue(ctx context.Context, w *quire.Webhook, ev *quire.Event) error {
	err := a.ev.Webhooks.UpdateDeliveryState(ctx, w.ProjectID, w.ID, func(st *quire.DeliveryState) error {
		st.Pending = append(st.Pending, quire.Pending{Event: ev, NextAt: time.Now()})
		return nil
	})
	if err != nil {
		return err
	}
	a.bus.notify(w.ProjectID)
	return nil
}

// newSecret makes a signing secret: 32 random bytes, shown as "whsec_"
// and base64, stored sealed.
func (a *App) newSecret() (secret, sealed string, err error) {
	raw := make([]byte, 32)
	rand.Read(raw)
	secret = secretPrefix + base64.StdEncoding.EncodeToString(raw)
	sealed, err = a.seal(raw)
	return secret, sealed, err
}

func (a *App) aead() (cipher.AEAD, error) {
	if len(a.ev.SecretKey) != 32 {
		return nil, fmt.Errorf("webhook secret key must be 32 bytes")
	}
	b, err := aes.NewCipher(a.ev.SecretKey)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// seal encrypts a secret with the server's key (AES-256-GCM).
func (a *App) seal(raw []byte) (string, error) {
	g, err := a.aead()
	if err != nil {
		return "", err
	}
	nonce := make([]byte, g.NonceSize())
	rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(g.Seal(nonce, nonce, raw, nil)), nil
}

func (a *App) unseal(s string) ([]byte, error) {
	g, err := a.aead()
	if err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) < g.NonceSize() {
		return nil, errors.New("sealed secret is malformed")
	}
	return g.Open(nil, b[:g.NonceSize()], b[g.NonceSize():], nil)
}

// signingKeys are w's secrets still valid at now, newest first.
func (a *App) signingKeys(w *quire.Webhook, now time.Time) ([][]byte, error) {
	var keys [][]byte
	for _, s := range w.Secrets {
		if s.ExpiresAt != nil && !s.ExpiresAt.After(now) {
			continue
		}
		k, err := a.unseal(s.Sealed)
		if err != nil {
			return nil, fmt.Errorf("webhook %s: %w", w.ID, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}
