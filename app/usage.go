package app

import (
	"context"
	"time"

	"github.com/quire/quire"
)

// RecordRender counts one render of version of prompt promptID; Render
// calls it once a render succeeds. A failure to count goes to
// Config.UsageLost, never to the caller: usage must not fail a render.
func (a *App) RecordRender(ctx context.Context, promptID string, version int) {
	if a.usage == nil {
		return
	}
	if err := a.usage.RecordRender(ctx, promptID, version); err != nil && a.usageLost != nil {
		a.usageLost(ctx, promptID, version, err)
	}
}

// PromptUsage resolves prompt ref for p (read access) and returns the
// render counts and last use of its versions. A server that records
// no usage says so (EUNAVAILABLE).
func (h *Handle) PromptUsage(ctx context.Context) (*quire.PromptUsage, error) {
	a, as := h.app, h.Asset
	if err := h.needPrompt(quire.AccessRead); err != nil {
		return nil, err
	}
	if a.usage == nil {
		return nil, quire.Errorf(quire.EUNAVAILABLE, "usage is not recorded by this server")
	}
	u, err := a.usage.PromptUsage(ctx, as.ID)
	if err != nil {
		return nil, err
	}
	return u, nil
}

// FillLastUsed fills in the keys' last_used_at from the usage records,
// where they are later than the stored one. An error leaves the keys as
// they were; a listing can still be answered without it.
func (a *App) FillLastUsed(ctx context.Context, keys ...*quire.APIKey) error {
	if a.usage == nil || len(keys) == 0 {
		return nil
	}
	last, err := a.usage.KeysLastUsed(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if t, ok := last[k.ID]; ok && (k.LastUsedAt == nil || t.After(*k.LastUsedAt)) {
			t := t.UTC().Truncate(time.Millisecond)
			k.LastUsedAt = &t
		}
	}
	return nil
}
