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
type PayloadInput struct {
	Variables json.RawMessage
	Name      *string
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
	return nil
}

// CreatePayload adds a payload to prompt as (write access).
func (a *App) CreatePayload(ctx context.Context, p *quire.Principal, as *quire.Asset, in *PayloadInput) (*quire.Payload, error) {
	pl := &quire.Payload{CreatedBy: p.User.ID}
	if err := a.applyPayload(in, pl); err != nil {
		return nil, err
	}
	if err := a.payloads.CreatePayload(ctx, p.Actor(), as, pl); err != nil {
		return nil, err
	}
	return pl, nil
}

// Payloads lists the payloads of prompt as (read access).
func (a *App) Payloads(ctx context.Context, as *quire.Asset) ([]*quire.Payload, error) {
	return a.payloads.Payloads(ctx, as)
}

// Payload returns payload id of prompt as (read access). An id that is
// not a UUID is simply not found.
func (a *App) Payload(ctx context.Context, as *quire.Asset, id string) (*quire.Payload, error) {
	if err := validPayloadID(id); err != nil {
		return nil, err
	}
	return a.payloads.Payload(ctx, as, id)
}

// UpdatePayload replaces the variables of pl, a payload of prompt as
// (write access) read with Payload, and its name when in has one.
func (a *App) UpdatePayload(ctx context.Context, p *quire.Principal, as *quire.Asset, pl *quire.Payload, in *PayloadInput) error {
	if err := a.applyPayload(in, pl); err != nil {
		return err
	}
	return a.payloads.UpdatePayload(ctx, p.Actor(), as, pl)
}

// DeletePayload deletes payload id of prompt as (write access).
func (a *App) DeletePayload(ctx context.Context, p *quire.Principal, as *quire.Asset, id string) error {
	if err := validPayloadID(id); err != nil {
		return err
	}
	return a.payloads.DeletePayload(ctx, p.Actor(), as, id)
}
