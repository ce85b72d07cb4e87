package app

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// PayloadInput creates or replaces a payload: Variables are required, a
// JSON object of at most Limits.MaxVariables bytes; Name is optional (a
// replacement without one keeps the payload's name).
// Assertions, when given, replace the payload's (valid.Assertions; an
// empty array removes them).
type PayloadInput struct {
	Variables  json.RawMessage
	Name       *string
	Assertions json.RawMessage
}

// applyPayload checks in and writes it into pl, its variables compacted.
func (a *App) applyPayload(in *PayloadInput, pl *quire.Payload) error {
	if _, err := a.DecodeVariables(in.Variables, true); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, in.Variables); err != nil {
		return quire.Errorf(quire.EINVALID, "variables must be a JSON object")
	}
	pl.Variables = buf.Bytes()
	if in.Name != nil {
		if err := valid.Text("name", *in.Name, a.limits.MaxName); err != nil {
			return err
		}
		pl.Name = *in.Name
	}
	if in.Assertions != nil {
		as, err := valid.Assertions(in.Assertions)
		if err != nil {
			return err
		}
		pl.Assertions = as
	}
	return nil
}

// CreatePayload adds a payload to prompt ref (write access).
func (h *Handle) CreatePayload(ctx context.Context, req PayloadInput) (*quire.Payload, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.needPrompt(quire.AccessWrite); err != nil {
		return nil, err
	}
	pl := &quire.Payload{CreatedBy: p.User.ID}
	if err := a.applyPayload(&req, pl); err != nil {
		return nil, err
	}
	if err := a.payloads.CreatePayload(ctx, p.Actor(), as, pl); err != nil {
		return nil, err
	}
	return pl, nil
}

// Payloads lists a page of the payloads of prompt ref (read access).
func (h *Handle) Payloads(ctx context.Context, o quire.ListOptions) ([]*quire.Payload, string, error) {
	a, as := h.app, h.Asset
	if err := h.needPrompt(quire.AccessRead); err != nil {
		return nil, "", err
	}
	all, err := a.payloads.Payloads(ctx, as)
	if err != nil {
		return nil, "", err
	}
	return Page(all, o)
}

// Payload returns payload id of prompt ref (read access).
func (h *Handle) Payload(ctx context.Context, id string) (*quire.Payload, error) {
	a, as := h.app, h.Asset
	if err := h.needPrompt(quire.AccessRead); err != nil {
		return nil, err
	}
	return a.payload(ctx, as, id)
}

// payload returns payload id of prompt as. An id that is not a UUID is
// simply not found.
func (a *App) payload(ctx context.Context, as *quire.Asset, id string) (*quire.Payload, error) {
	if err := validPayloadID(id); err != nil {
		return nil, err
	}
	return a.payloads.Payload(ctx, as, id)
}

// UpdatePayload replaces the variables of payload id of prompt ref (write
// access), and its name when the input has one.
func (h *Handle) UpdatePayload(ctx context.Context, id string, req PayloadInput) (*quire.Payload, error) {
	a, p, as := h.app, h.P, h.Asset
	if err := h.needPrompt(quire.AccessWrite); err != nil {
		return nil, err
	}
	pl, err := a.payload(ctx, as, id)
	if err != nil {
		return nil, err
	}
	if err := a.applyPayload(&req, pl); err != nil {
		return nil, err
	}
	if err := a.payloads.UpdatePayload(ctx, p.Actor(), as, pl); err != nil {
		return nil, err
	}
	return pl, nil
}

// DeletePayload deletes payload id of prompt ref (write access).
func (h *Handle) DeletePayload(ctx context.Context, id string) error {
	a, p, as := h.app, h.P, h.Asset
	if err := h.needPrompt(quire.AccessWrite); err != nil {
		return err
	}
	if err := validPayloadID(id); err != nil {
		return err
	}
	return a.payloads.DeletePayload(ctx, p.Actor(), as, id)
}
