package client

import (
	"encoding/json"
	"time"

	"github.com/quire/quire"
)

// The API's shapes. Where the server answers with a root type as is, the
// SDK uses it (Project, Asset, Version, File, ...); the rest mirror the
// server's views.
type (
	Project     = quire.Project
	Member      = quire.Member
	Asset       = quire.Asset
	Skill       = quire.Asset
	Prompt      = quire.Asset
	File        = quire.File
	FileDiff    = quire.FileDiff
	Commit      = quire.Commit
	Payload     = quire.Payload
	Activity    = quire.Activity
	PromptUsage = quire.PromptUsage
	Message     = quire.Message
)

// User is a user as the API shows it.
type User struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Disabled  bool      `json:"disabled"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Session is a login session (no secret).
type Session struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	UserAgent string    `json:"user_agent,omitempty"`
	Current   bool      `json:"current"`
}

// APIKey is an API key (no secret).
type APIKey struct {
	ID         string     `json:"id"`
	UserID     string     `json:"user_id"`
	Name       string     `json:"name"`
	Scope      string     `json:"scope"`
	ProjectIDs []string   `json:"project_ids"`
	Prefix     string     `json:"prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
}

// NewAPIKey is a created or rotated key with its token, shown once.
type NewAPIKey struct {
	APIKey APIKey `json:"api_key"`
	Token  string `json:"token"`
}

// Login is the answer of a login.
type Login struct {
	Token   string  `json:"token"`
	Session Session `json:"session"`
	User    User    `json:"user"`
}

// Me is the caller.
type Me struct {
	User      User    `json:"user"`
	Kind      string  `json:"kind"`
	SessionID string  `json:"session_id,omitempty"`
	APIKey    *APIKey `json:"api_key,omitempty"`
}

// UserInput creates or changes a user; nil fields are left as they are.
type UserInput struct {
	Email    *string `json:"email,omitempty"`
	Name     *string `json:"name,omitempty"`
	Role     *string `json:"role,omitempty"`
	Password *string `json:"password,omitempty"`
	Disabled *bool   `json:"disabled,omitempty"`
}

// UserUpdated is the answer of UpdateUser.
type UserUpdated struct {
	User User `json:"user"`
	// SessionsRevoked is set when the password changed.
	SessionsRevoked *int `json:"sessions_revoked,omitempty"`
}

// KeyInput creates an API key.
type KeyInput struct {
	Name       string     `json:"name"`
	Scope      string     `json:"scope,omitempty"`
	ProjectIDs []string   `json:"project_ids,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
}

// MetaInput creates or changes a project, skill or prompt; nil fields are
// left as they are. Visibility ("private", "public") is a project's.
type MetaInput struct {
	Name        *string `json:"name,omitempty"`
	Slug        *string `json:"slug,omitempty"`
	Description *string `json:"description,omitempty"`
	Visibility  *string `json:"visibility,omitempty"`
}

// String returns a pointer to s, for the optional fields of inputs.
func String(s string) *string { return &s }

// MemberInput adds a member (by user id or email) with a role.
type MemberInput struct {
	UserID string `json:"user_id,omitempty"`
	Email  string `json:"email,omitempty"`
	Role   string `json:"role"`
}

// MemberChange is the answer of a member change.
type MemberChange struct {
	Member  Member   `json:"member"`
	Members []Member `json:"members"`
}

// ListOptions pages through a list: Limit 1 to 500, Cursor the
// NextCursor of the previous page.
type ListOptions struct {
	Limit  int
	Cursor string
}

// Page is one page of a list.
type Page[T any] struct {
	Items      []T
	NextCursor string
}

// SkillVersion is a version of a skill.
type SkillVersion struct {
	SkillID string `json:"skill_id"`
	quire.Version
}

// PromptVersion is a version of a prompt with its content.
type PromptVersion struct {
	PromptID string `json:"prompt_id"`
	quire.Version
	Template        *string         `json:"template,omitempty"`
	Messages        []Message       `json:"messages,omitempty"`
	Model           string          `json:"model"`
	ModelParams     json.RawMessage `json:"model_params"`
	Provider        string          `json:"provider,omitempty"`
	VariablesSchema json.RawMessage `json:"variables_schema,omitempty"`
	ContentError    string          `json:"content_error,omitempty"`
}

// Base says what a new draft starts from: the live version (zero value),
// a version (From), or nothing (Empty).
type Base struct {
	From  int
	Empty bool
}

func (b Base) body() any {
	switch {
	case b.Empty:
		return map[string]any{"from": "empty"}
	case b.From > 0:
		return map[string]any{"from": b.From}
	}
	return nil
}

// PromptVersionInput creates or edits a prompt version; nil fields keep
// what the version (or its base) has.
type PromptVersionInput struct {
	From        any             `json:"from,omitempty"` // a version number or "empty"
	Template    *string         `json:"template,omitempty"`
	Messages    *[]Message      `json:"messages,omitempty"`
	Model       *string         `json:"model,omitempty"`
	ModelParams json.RawMessage `json:"model_params,omitempty"`
	// Provider names the operator's model provider runs call; "" removes
	// it (the server's default).
	Provider        *string         `json:"provider,omitempty"`
	VariablesSchema json.RawMessage `json:"variables_schema,omitempty"`
}

// FileWritten is the answer of PutFile.
type FileWritten struct {
	Version SkillVersion `json:"version"`
	File    File         `json:"file"`
}

// Diff is the difference between two versions.
type Diff struct {
	From  int        `json:"from"`
	To    int        `json:"to"`
	Files []FileDiff `json:"files"`
}

// RenderInput is a render request: variables, a version (live when 0),
// a payload whose variables lie under Variables.
type RenderInput struct {
	Variables map[string]any `json:"variables,omitempty"`
	Version   int            `json:"version,omitempty"`
	PayloadID string         `json:"payload_id,omitempty"`
	// Label renders the version a label names ("live": the live one);
	// not with Version.
	Label string `json:"label,omitempty"`
}

// RunInput is a run's request: variables and a payload as a render takes
// them, and optionally another model or provider than the version's.
type RunInput struct {
	Variables map[string]any `json:"variables,omitempty"`
	PayloadID string         `json:"payload_id,omitempty"`
	Model     string         `json:"model,omitempty"`
	Provider  string         `json:"provider,omitempty"`
}

// Run is a prompt version rendered and sent to a model (docs/runs.md).
type Run struct {
	Version      int       `json:"version"`
	Commit       string    `json:"commit"`
	Messages     []Message `json:"messages"`
	Output       string    `json:"output"`
	FinishReason string    `json:"finish_reason"`
	Model        string    `json:"model"`
	Provider     string    `json:"provider"`
	Usage        struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	LatencyMS int64 `json:"latency_ms"`
}

// PartialUse is one prompt a render included.
type PartialUse struct {
	Slug     string `json:"slug"`
	PromptID string `json:"prompt_id"`
	Version  int    `json:"version"`
	Commit   string `json:"commit"`
}

// Rendered is a rendered prompt: Text for a text prompt, Messages for a
// chat prompt.
type Rendered struct {
	PromptID    string          `json:"prompt_id"`
	Version     int             `json:"version"`
	Commit      string          `json:"commit"`
	Text        *string         `json:"rendered,omitempty"`
	Messages    []Message       `json:"messages,omitempty"`
	Model       string          `json:"model"`
	ModelParams json.RawMessage `json:"model_params"`
	Partials    []PartialUse    `json:"partials"`
}

// Variables are the variables a prompt version's template uses.
type Variables struct {
	PromptID        string          `json:"prompt_id"`
	Version         int             `json:"version"`
	Commit          string          `json:"commit"`
	Variables       []any           `json:"variables"`
	Required        []string        `json:"required"`
	VariablesSchema json.RawMessage `json:"variables_schema"`
}

// PromptCheck is a version rendered with every sample payload.
type PromptCheck struct {
	PromptID string           `json:"prompt_id"`
	Version  int              `json:"version"`
	Commit   string           `json:"commit"`
	OK       bool             `json:"ok"`
	Payloads []map[string]any `json:"payloads"`
}

// Dependent is a prompt that includes another.
type Dependent = map[string]any

// PayloadInput creates or replaces a payload.
type PayloadInput struct {
	Name      *string        `json:"name,omitempty"`
	Variables map[string]any `json:"variables"`
	// Assertions, when set, replace the payload's (docs/evaluations.md).
	Assertions []Assertion `json:"assertions,omitempty"`
}

// Archive is a skill version as archive bytes, with the digests the
// server sent (checked against the bytes).
type Archive struct {
	Bytes   []byte
	Digest  string // "sha256:<hex>", the ETag
	Version int
	Commit  string
}

// DiscoveryIndex is an Agent Skills discovery index (the RFC v0.2.0 as
// published).
type DiscoveryIndex struct {
	Schema string           `json:"$schema"`
	Skills []DiscoverySkill `json:"skills"`
}

// DiscoverySkill is one skill of a discovery index: Type "skill-md" (URL
// is its SKILL.md) or "archive" (URL is its .tar.gz); Digest is
// "sha256:<hex>" of the artifact's bytes. URL is path-absolute: resolve
// it against the server.
type DiscoverySkill struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	URL         string `json:"url"`
	Digest      string `json:"digest"`
}
