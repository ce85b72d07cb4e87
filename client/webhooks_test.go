package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/client"
	"github.com/quire/quire/internal/server"
	"github.com/quire/quire/internal/testenv"
)

// TestClientWebhooks drives the webhook and event methods against a real
// server and a receiver on 127.0.0.1.
func TestClientWebhooks(t *testing.T) {
	begin(t)
	got := make(chan string, 16)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
	}))
	defer rcv.Close()
	e := testenv.NewWith(t, testenv.Options{Webhooks: server.WebhookOptions{AllowPrivate: true}})
	ctx := context.Background()
	c, _ := newClient(t, e, e.Admin)
	must(c.CreateProject(ctx, client.MetaInput{Name: client.String("Hooks")}))

	wh := must(c.CreateWebhook(ctx, "hooks", client.WebhookInput{URL: client.String(rcv.URL), Events: []quire.EventType{quire.EventAssetCreated}}))
	if !strings.HasPrefix(wh.Secret, "whsec_") || wh.Webhook.URL != rcv.URL {
		t.Fatalf("created %+v", wh)
	}
	if ws := must(c.Webhooks(ctx, "hooks")); len(ws) != 1 || ws[0].ID != wh.Webhook.ID {
		t.Fatalf("webhooks %+v", ws)
	}
	up := must(c.UpdateWebhook(ctx, "hooks", wh.Webhook.ID, client.WebhookInput{Description: client.String("ci")}))
	if up.Description != "ci" || must(c.Webhook(ctx, "hooks", wh.Webhook.ID)).Description != "ci" {
		t.Fatalf("updated %+v", up)
	}
	if rot := must(c.RotateWebhookSecret(ctx, "hooks", wh.Webhook.ID)); rot.Secret == wh.Secret || !strings.HasPrefix(rot.Secret, "whsec_") {
		t.Fatalf("rotated secret %q", rot.Secret)
	}
	if err := c.PingWebhook(ctx, "hooks", wh.Webhook.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case body := <-got:
		if !strings.Contains(body, "ping") {
			t.Fatalf("ping delivered %s", body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no ping delivered")
	}
	// A stored event's delivery can be sent again (a ping is not stored).
	must(c.CreateSkill(ctx, "hooks", client.MetaInput{Name: client.String("PDF tools")}))
	var created *client.Delivery
	for deadline := time.Now().Add(30 * time.Second); created == nil && time.Now().Before(deadline); {
		for _, d := range must(c.Deliveries(ctx, "hooks", wh.Webhook.ID, client.ListOptions{})).Items {
			if d.EventType == quire.EventAssetCreated {
				created = &d
			}
		}
	}
	if created == nil {
		t.Fatal("no asset.created delivery listed")
	}
	if err := c.Redeliver(ctx, "hooks", wh.Webhook.ID, created.ID); err != nil {
		t.Fatal(err)
	}

	evs := must(c.Events(ctx, "hooks", client.EventQuery{Types: []quire.EventType{quire.EventAssetCreated}}))
	if len(evs) != 1 || evs[0].Type != quire.EventAssetCreated {
		t.Fatalf("events %+v", evs)
	}
	if err := c.DeleteWebhook(ctx, "hooks", wh.Webhook.ID); err != nil {
		t.Fatal(err)
	}
	_, err := c.Webhook(ctx, "hooks", wh.Webhook.ID)
	apiError(t, err, 404, "not_found")
}
