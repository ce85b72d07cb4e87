package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

func (s *Server) webhookRoutes(g *gin.RouterGroup) {
	g.POST("/projects/:projectID/webhooks", s.createWebhook)
	g.GET("/projects/:projectID/webhooks", s.listWebhooks)
	g.GET("/projects/:projectID/webhooks/:webhookID", s.getWebhook)
	g.PATCH("/projects/:projectID/webhooks/:webhookID", s.updateWebhook)
	g.DELETE("/projects/:projectID/webhooks/:webhookID", s.deleteWebhook)
	g.POST("/projects/:projectID/webhooks/:webhookID/rotate-secret", s.rotateWebhookSecret)
	g.POST("/projects/:projectID/webhooks/:webhookID/ping", s.pingWebhook)
	g.GET("/projects/:projectID/webhooks/:webhookID/deliveries", s.listDeliveries)
	g.POST("/projects/:projectID/webhooks/:webhookID/deliveries/:deliveryID/redeliver", s.redeliver)
	g.GET("/projects/:projectID/events", s.projectEvents)
}

// webhookView is a webhook as the API shows it: never a secret.
type webhookView struct {
	ID             string            `json:"id"`
	ProjectID      string            `json:"project_id"`
	URL            string            `json:"url"`
	Events         []quire.EventType `json:"events"`
	Assets         []string          `json:"assets"`
	Description    string            `json:"description"`
	Active         bool              `json:"active"`
	DisabledReason string            `json:"disabled_reason,omitempty"`
	CreatedAt      time.Time         `json:"created_at"`
	UpdatedAt      time.Time         `json:"updated_at"`
}

func viewWebhook(w *quire.Webhook) webhookView {
	assets := w.Assets
	if assets == nil {
		assets = []string{}
	}
	return webhookView{
		ID: w.ID, ProjectID: w.ProjectID, URL: w.URL, Events: w.Events, Assets: assets,
		Description: w.Description, Active: w.Active, DisabledReason: w.DisabledReason,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt,
	}
}

// webhookWithSecret answers a create or a rotation: the only time the
// signing secret is shown.
type webhookWithSecret struct {
	Webhook webhookView `json:"webhook"`
	Secret  string      `json:"secret"`
}

// webhookCreateRequest is app.WebhookInput as a create reads it: url
// and events are required (app.CreateWebhook).
type webhookCreateRequest struct {
	URL         *string            `json:"url" openapi:"required"`
	Events      *[]quire.EventType `json:"events" openapi:"required"`
	Assets      *[]string          `json:"assets"`
	Description *string            `json:"description"`
	Active      *bool              `json:"active"`
}

// decodeWebhook decodes the request body (an app.WebhookInput, or a
// webhookCreateRequest on create).
func decodeWebhook[R app.WebhookInput | webhookCreateRequest](s *Server, c *gin.Context) (app.WebhookInput, bool) {
	var req R
	ok := s.bind(c, &req)
	return app.WebhookInput(req), ok
}

func (s *Server) createWebhook(c *gin.Context) {
	h, ok := s.openProject(c, quire.AccessAdmin)
	if !ok {
		return
	}
	in, ok := decodeWebhook[webhookCreateRequest](s, c)
	if !ok {
		return
	}
	w, secret, err := h.CreateWebhook(c.Request.Context(), in)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, webhookWithSecret{Webhook: viewWebhook(w), Secret: secret})
}

func (s *Server) listWebhooks(c *gin.Context) {
	h, ok := s.openProject(c, quire.AccessAdmin)
	if !ok {
		return
	}
	ws, err := h.Webhooks(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]webhookView, len(ws))
	for i, w := range ws {
		out[i] = viewWebhook(w)
	}
	c.JSON(http.StatusOK, gin.H{"webhooks": out})
}

func (s *Server) getWebhook(c *gin.Context) {
	h, ok := s.openProject(c, quire.AccessAdmin)
	if !ok {
		return
	}
	w, err := h.Webhook(c.Request.Context(), c.Param("webhookID"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"webhook": viewWebhook(w)})
}

func (s *Server) updateWebhook(c *gin.Context) {
	h, ok := s.openProject(c, quire.AccessAdmin)
	if !ok {
		return
	}
	in, ok := decodeWebhook[app.WebhookInput](s, c)
	if !ok {
		return
	}
	w, err := h.UpdateWebhook(c.Request.Context(), c.Param("webhookID"), in)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"webhook": viewWebhook(w)})
}

func (s *Server) deleteWebhook(c *gin.Context) {
	h, ok := s.openProject(c, quire.AccessAdmin)
	if !ok {
		return
	}
	if err := h.DeleteWebhook(c.Request.Context(), c.Param("webhookID")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (s *Server) rotateWebhookSecret(c *gin.Context) {
	h, ok := s.openProject(c, quire.AccessAdmin)
	if !ok {
		return
	}
	w, secret, err := h.RotateWebhookSecret(c.Request.Context(), c.Param("webhookID"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, webhookWithSecret{Webhook: viewWebhook(w), Secret: secret})
}

func (s *Server) pingWebhook(c *gin.Context) {
	h, ok := s.openProject(c, quire.AccessAdmin)
	if !ok {
		return
	}
	ev, err := h.PingWebhook(c.Request.Context(), c.Param("webhookID"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"event": ev})
}

func (s *Server) listDeliveries(c *gin.Context) {
	h, ok := s.openProject(c, quire.AccessAdmin)
	if !ok {
		return
	}
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ds, next, err := h.WebhookDeliveries(c.Request.Context(), c.Param("webhookID"), opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"deliveries": ds, "next_cursor": next})
}

func (s *Server) redeliver(c *gin.Context) {
	h, ok := s.openProject(c, quire.AccessAdmin)
	if !ok {
		return
	}
	if err := h.Redeliver(c.Request.Context(), c.Param("webhookID"), c.Param("deliveryID")); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"status": "queued"})
}

// webhookAPIRoutes documents the routes above (openapi.go's table).
var webhookAPIRoutes = []apiRoute{
	route("POST", "/v1/projects/{projectID}/webhooks", "webhooks", "Subscribe a receiver to the project's events (project owner). The signing secret (whsec_…) is in this answer only. A URL that is not absolute http(s), or resolves to a loopback, private, link-local or metadata address, is 422; so are unknown event types", body("WebhookCreateRequest"), ok(201, "WebhookWithSecret"), fails(403), fails(422)),
	route("GET", "/v1/projects/{projectID}/webhooks", "webhooks", "The project's webhooks (project owner)", ok(200, "WebhookList")),
	route("GET", "/v1/projects/{projectID}/webhooks/{webhookID}", "webhooks", "A webhook, without its secret", wrap(200, "webhook", "Webhook")),
	route("PATCH", "/v1/projects/{projectID}/webhooks/{webhookID}", "webhooks", "Change a webhook's url, events, assets, description or active", body("WebhookRequest"), wrap(200, "webhook", "Webhook"), fails(422)),
	route("DELETE", "/v1/projects/{projectID}/webhooks/{webhookID}", "webhooks", "Delete a webhook and its delivery log", ok(204, "")),
	route("POST", "/v1/projects/{projectID}/webhooks/{webhookID}/rotate-secret", "webhooks", "A new signing secret, shown once; the old one keeps signing beside it for 24 hours", ok(200, "WebhookWithSecret")),
	route("POST", "/v1/projects/{projectID}/webhooks/{webhookID}/ping", "webhooks", "Send the webhook a ping event now", wrap(202, "event", "Event")),
	route("GET", "/v1/projects/{projectID}/webhooks/{webhookID}/deliveries", "webhooks", "Delivery attempts, newest first (kept 30 days)", query("limit", "cursor"), list(200, "deliveries", "Delivery")),
	route("POST", "/v1/projects/{projectID}/webhooks/{webhookID}/deliveries/{deliveryID}/redeliver", "webhooks", "Deliver that attempt's event again, now", ok(202, "Queued")),
	route("GET", "/v1/projects/{projectID}/events", "events", "The project's events: a Server-Sent Events stream (text/event-stream; Last-Event-ID resumes), or with Accept: application/json or ?after= / ?limit=, {\"events\": [...]} ascending after `after`. Filters: types, assets (comma-separated). Read access", query("after", "limit", "types", "assets"), ok(200, "EventList"), alsoAs(200, "text/event-stream"), fails(422)),
}

var webhookAPISchemas = map[string]any{
	"WebhookRequest":       app.WebhookInput{},
	"WebhookCreateRequest": webhookCreateRequest{},
	"Webhook":              webhookView{},
	"WebhookWithSecret":    webhookWithSecret{},
	"WebhookList": struct {
		Webhooks []webhookView `json:"webhooks"`
	}{},
	"Delivery": quire.Delivery{},
	"Event":    quire.Event{},
	"Queued": struct {
		Status string `json:"status" enum:"queued"`
	}{},
	"EventList": struct {
		Events []quire.Event `json:"events"`
	}{}}
