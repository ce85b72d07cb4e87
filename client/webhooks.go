package client

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/quire/quire"
)

// Webhooks and events (docs/events.md).

// Webhook is a project's subscription to its events; its signing secret
// is never part of it.
type Webhook = quire.Webhook

// Delivery is one attempt to deliver an event to a webhook.
type Delivery = quire.Delivery

// Event is one change in a project, as webhooks and the stream carry it.
type Event = quire.Event

// WebhookInput creates a webhook (URL required) or changes one (only the
// fields set).
type WebhookInput struct {
	URL         *string           `json:"url,omitempty"`
	Events      []quire.EventType `json:"events,omitempty"`
	Assets      []string          `json:"assets,omitempty"`
	Description *string           `json:"description,omitempty"`
	Active      *bool             `json:"active,omitempty"`
}

// WebhookWithSecret is a webhook with its signing secret (whsec_…), as
// creation and rotation answer it: the only time the secret is shown.
type WebhookWithSecret struct {
	Webhook Webhook `json:"webhook"`
	Secret  string  `json:"secret"`
}

// CreateWebhook subscribes a receiver to project ref's events (owner).
func (c *Client) CreateWebhook(ctx context.Context, ref string, in WebhookInput) (*WebhookWithSecret, error) {
	var out WebhookWithSecret
	err := c.do(ctx, request{method: "POST", path: p("/v1/projects/", ref, "/webhooks"), body: in}, &out)
	return &out, err
}

// Webhooks lists project ref's webhooks.
func (c *Client) Webhooks(ctx context.Context, ref string) ([]Webhook, error) {
	pg, err := list[Webhook](ctx, c, p("/v1/projects/", ref, "/webhooks"), "webhooks", nil)
	return pg.Items, err
}

// Webhook returns one webhook.
func (c *Client) Webhook(ctx context.Context, ref, id string) (*Webhook, error) {
	return unwrap[Webhook](ctx, c, request{method: "GET", path: p("/v1/projects/", ref, "/webhooks/", id)}, "webhook")
}

// UpdateWebhook changes the fields of in that are set.
func (c *Client) UpdateWebhook(ctx context.Context, ref, id string, in WebhookInput) (*Webhook, error) {
	return unwrap[Webhook](ctx, c, request{method: "PATCH", path: p("/v1/projects/", ref, "/webhooks/", id), body: in}, "webhook")
}

// DeleteWebhook deletes a webhook and its delivery log.
func (c *Client) DeleteWebhook(ctx context.Context, ref, id string) error {
	return c.do(ctx, request{method: "DELETE", path: p("/v1/projects/", ref, "/webhooks/", id)}, nil)
}

// RotateWebhookSecret gives a webhook a new secret; the old one signs
// beside it for 24 hours.
func (c *Client) RotateWebhookSecret(ctx context.Context, ref, id string) (*WebhookWithSecret, error) {
	var out WebhookWithSecret
	err := c.do(ctx, request{method: "POST", path: p("/v1/projects/", ref, "/webhooks/", id, "/rotate-secret")}, &out)
	return &out, err
}

// PingWebhook sends the webhook a ping event now.
func (c *Client) PingWebhook(ctx context.Context, ref, id string) error {
	return c.do(ctx, request{method: "POST", path: p("/v1/projects/", ref, "/webhooks/", id, "/ping")}, nil)
}

// Deliveries lists a page of a webhook's delivery attempts, newest first.
func (c *Client) Deliveries(ctx context.Context, ref, id string, o ListOptions) (Page[Delivery], error) {
	return list[Delivery](ctx, c, p("/v1/projects/", ref, "/webhooks/", id, "/deliveries"), "deliveries", listQuery(o))
}

// Redeliver delivers a delivery's event again, now.
func (c *Client) Redeliver(ctx context.Context, ref, id, deliveryID string) error {
	return c.do(ctx, request{method: "POST", path: p("/v1/projects/", ref, "/webhooks/", id, "/deliveries/", deliveryID, "/redeliver")}, nil)
}

// EventQuery selects events: those after the event id After (none: the
// oldest kept), at most Limit, of the given types and assets.
type EventQuery struct {
	After  string
	Limit  int
	Types  []quire.EventType
	Assets []string
}

// Events polls project ref's events in order (the JSON form of the event
// stream; a long-lived reader can use the Server-Sent Events form with
// Last-Event-ID instead).
func (c *Client) Events(ctx context.Context, ref string, q EventQuery) ([]Event, error) {
	v := url.Values{}
	if q.After != "" {
		v.Set("after", q.After)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if len(q.Types) > 0 {
		ts := make([]string, len(q.Types))
		for i, t := range q.Types {
			ts[i] = string(t)
		}
		v.Set("types", strings.Join(ts, ","))
	}
	if len(q.Assets) > 0 {
		v.Set("assets", strings.Join(q.Assets, ","))
	}
	var out struct {
		Events []Event `json:"events"`
	}
	err := c.do(ctx, request{method: "GET", path: p("/v1/projects/", ref, "/events"), query: v, headers: map[string]string{"Accept": "application/json"}}, &out)
	return out.Events, err
}
