package quire

import (
	"context"
	"time"
)

// Usage records and reports how prompt versions and API keys are used.
// Recording is cheap (Redis); totals are flushed to git now and then, so a
// restart does not lose them.
type Usage interface {
	// RecordRender counts one render of a prompt version.
	RecordRender(ctx context.Context, promptID string, version int) error
	// RecordKeyUse notes that an API key was just used.
	RecordKeyUse(ctx context.Context, keyID string) error
	// PromptUsage returns the render counts of every used version.
	PromptUsage(ctx context.Context, promptID string) (*PromptUsage, error)
	// KeysLastUsed returns when each API key was last used.
	KeysLastUsed(ctx context.Context) (map[string]time.Time, error)
}

// UsageLog keeps usage totals durably.
type UsageLog interface {
	// AddUsage merges d into the stored totals.
	AddUsage(ctx context.Context, d *UsageDelta) error
	PromptUsage(ctx context.Context, promptID string) (*PromptUsage, error)
	KeysLastUsed(ctx context.Context) (map[string]time.Time, error)
}

// PromptUsage is how a prompt's versions have been used.
type PromptUsage struct {
	PromptID   string         `json:"prompt_id"`
	Renders    int64          `json:"renders"`
	LastUsedAt *time.Time     `json:"last_used_at"`
	Versions   []VersionUsage `json:"versions"`
}

// VersionUsage is how one prompt version has been used.
type VersionUsage struct {
	Version    int        `json:"version"`
	Renders    int64      `json:"renders"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

// VersionKey names one version of a prompt.
type VersionKey struct {
	PromptID string
	Version  int
}

// UsageDelta is usage gathered since the last flush.
type UsageDelta struct {
	Renders  map[VersionKey]int64
	LastUsed map[VersionKey]time.Time
	KeysUsed map[string]time.Time
}

// Empty reports whether d holds nothing.
func (d *UsageDelta) Empty() bool {
	return len(d.Renders) == 0 && len(d.LastUsed) == 0 && len(d.KeysUsed) == 0
}
