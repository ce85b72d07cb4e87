package httpapi

import (
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/quire/quire"
)

// The document's webhooks section (OpenAPI 3.1) describes what quire
// POSTs to a webhook for each event type: the Event envelope, its type
// fixed, and what the type adds in data (docs/events.md has the table),
// so a generated client types webhook bodies and stream events too.

// eventData are the fields each event type adds in data; every one may
// also carry "commit" where there is one (quire.Event.Data).
var eventData = map[quire.EventType]map[string]*openapi3.Schema{
	quire.EventAssetCreated:        {"name": openapi3.NewStringSchema()},
	quire.EventAssetDeleted:        {},
	quire.EventVersionCreated:      versionEventData(),
	quire.EventVersionUpdated:      versionEventData(),
	quire.EventVersionPublished:    versionEventData(),
	quire.EventVersionPromoted:     versionEventData(),
	quire.EventVersionArchived:     versionEventData(),
	quire.EventVersionDeleted:      {},
	quire.EventLabelMoved:          {},
	quire.EventLabelDeleted:        {},
	quire.EventReviewOpened:        reviewEventData(),
	quire.EventReviewCommented:     reviewEventData(),
	quire.EventReviewApproved:      reviewEventData(),
	quire.EventReviewChanges:       reviewEventData(),
	quire.EventReviewMerged:        reviewEventData(),
	quire.EventReviewClosed:        reviewEventData(),
	quire.EventReviewReopened:      reviewEventData(),
	quire.EventReviewRetitled:      reviewEventData(),
	quire.EventCommentUpdated:      reviewEventData(),
	quire.EventEvaluationCompleted: evaluationEventData(),
	quire.EventEvaluationFailed:    evaluationEventData(),
	quire.EventWebhookDisabled: {
		"webhook_id": openapi3.NewUUIDSchema(), "url": openapi3.NewStringSchema(), "reason": openapi3.NewStringSchema(),
	},
	quire.EventPing: {"webhook_id": openapi3.NewUUIDSchema()},
}

func versionEventData() map[string]*openapi3.Schema {
	return map[string]*openapi3.Schema{
		"commit": openapi3.NewStringSchema(),
		"state":  openapi3.NewStringSchema().WithEnum(quire.StateDraft, quire.StatePublished, quire.StateArchived),
		"live":   openapi3.NewBoolSchema(),
	}
}

func reviewEventData() map[string]*openapi3.Schema {
	return map[string]*openapi3.Schema{"state": openapi3.NewStringSchema(), "title": openapi3.NewStringSchema()}
}

func evaluationEventData() map[string]*openapi3.Schema {
	counts := openapi3.NewObjectSchema()
	for _, k := range []string{"cases", "passed", "failed", "errored", "changed"} {
		counts.WithProperty(k, openapi3.NewIntegerSchema())
	}
	return map[string]*openapi3.Schema{
		"evaluation": openapi3.NewUUIDSchema(),
		"state":      openapi3.NewStringSchema().WithEnum(quire.EvalCompleted, quire.EvalFailed),
		"counts":     counts,
		"error":      openapi3.NewStringSchema(),
	}
}

// addWebhooks adds an entry per event type to doc.Webhooks.
func addWebhooks(doc *openapi3.T, b *docBuilder) {
	doc.Webhooks = map[string]*openapi3.PathItem{}
	for _, t := range quire.EventTypes {
		data := openapi3.NewObjectSchema()
		for name, s := range eventData[t] {
			data.WithPropertyRef(name, openapi3.NewSchemaRef("", s))
		}
		if _, ok := data.Properties["commit"]; !ok {
			data.WithProperty("commit", openapi3.NewStringSchema())
		}
		typed := openapi3.NewObjectSchema()
		typed.WithPropertyRef("type", openapi3.NewSchemaRef("", openapi3.NewStringSchema().WithEnum(t)))
		typed.WithPropertyRef("data", openapi3.NewSchemaRef("", data))
		body := &openapi3.Schema{AllOf: openapi3.SchemaRefs{b.ref("Event"), openapi3.NewSchemaRef("", typed)}}

		op := openapi3.NewOperation()
		op.OperationID = "webhook_" + operationID("", string(t))
		op.Summary = "The " + string(t) + " event, delivered to a webhook"
		op.Description = op.Summary + ": the Event envelope, signed per Standard Webhooks (docs/events.md)"
		op.Tags = []string{"webhooks"}
		for _, h := range []struct{ name, desc string }{
			{"webhook-id", "the event's id (a redelivery keeps it: deduplicate by it)"},
			{"webhook-timestamp", "Unix seconds of this attempt"},
			{"webhook-signature", "v1,<base64 HMAC-SHA256 of id.timestamp.body> with the webhook's secret; two during a rotation"},
		} {
			p := openapi3.NewHeaderParameter(h.name).WithDescription(h.desc).WithSchema(openapi3.NewStringSchema())
			p.Required = true
			op.AddParameter(p)
		}
		op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithJSONSchema(body)}
		op.AddResponse(http.StatusOK, openapi3.NewResponse().WithDescription("any 2xx acknowledges the event; anything else, or no answer in 10 s, is retried"))
		item := &openapi3.PathItem{}
		item.SetOperation(http.MethodPost, op)
		doc.Webhooks[string(t)] = item
	}
}
