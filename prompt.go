package quire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A prompt version is an ordinary version (same refs, same life cycle as a
// skill's) whose files follow this layout, chosen so `git diff` between two
// versions reads line by line:
//
//	prompt.txt                 the template of a text prompt
//	messages/001-system.txt    a chat prompt: one template per message,
//	messages/002-user.txt      numbered in order, the role in the name
//	messages/003-placeholder-history.txt
//	                           a placeholder: the messages of the variable
//	                           "history", spliced in at render (empty file)
//	config.json                {"model": "...", "model_params": {...}}
//	variables.schema.json      optional: a JSON Schema the variables satisfy
//
// A version holds either prompt.txt or messages/, never both. Other files
// are kept but ignored.
const (
	PromptTemplateFile = "prompt.txt"
	PromptMessagesDir  = "messages"
	PromptConfigFile   = "config.json"
	PromptSchemaFile   = "variables.schema.json"
)

// MessagePlaceholder is the Type of a placeholder message.
const MessagePlaceholder = "placeholder"

// MaxPromptMessages bounds the messages of a chat prompt (three digits in
// the file names keep git's order the message order).
const MaxPromptMessages = 999

var (
	roleRE        = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	messageFileRE = regexp.MustCompile(`^messages/([0-9]{3})-(?:placeholder-([a-z_][a-z0-9_]{0,63})|([a-z][a-z0-9_]{0,31}))\.txt$`)
	placeholderRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,63}$`)
)

// Message is one message of a chat prompt; Content is a template. A
// placeholder (Type "placeholder") has only a Name: the variable whose
// list of {role, content} messages a render splices in at its place.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	Type    string `json:"type"`
	Name    string `json:"name"`
}

// MarshalJSON writes a placeholder as {type, name}, any other message as
// {role, content}.
func (m Message) MarshalJSON() ([]byte, error) {
	if m.Placeholder() {
		return json.Marshal(struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}{m.Type, m.Name})
	}
	return json.Marshal(struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}{m.Role, m.Content})
}

// Placeholder reports whether m is a placeholder message.
func (m *Message) Placeholder() bool { return m.Type == MessagePlaceholder }

// PromptContent is what a prompt version says: a template (text prompt)
// or messages (chat prompt), and the model configuration.
type PromptContent struct {
	Template    *string         `json:"template,omitempty"`
	Messages    []Message       `json:"messages,omitempty"`
	Model       string          `json:"model"`
	ModelParams json.RawMessage `json:"model_params"`
	// Provider names the operator's model provider a run calls (config.json
	// "provider"); empty is the server's default.
	Provider string `json:"provider,omitempty"`
	// VariablesSchema is a JSON Schema (2020-12) the variables of a
	// render must satisfy; empty when the version has none.
	VariablesSchema json.RawMessage `json:"variables_schema,omitempty"`
}

// Chat reports whether c is a chat prompt.
func (c *PromptContent) Chat() bool { return c.Messages != nil }

// PromptVersion is a version of a prompt with its content.
type PromptVersion struct {
	Version *Version
	Content *PromptContent
}

// promptConfig is config.json.
type promptConfig struct {
	Model       string          `json:"model"`
	ModelParams json.RawMessage `json:"model_params"`
	Provider    string          `json:"provider,omitempty"`
}

// CheckPromptContent validates content written through the API.
func CheckPromptContent(c *PromptContent, l Limits) error {
	if c.Template != nil && c.Messages != nil {
		return Errorf(EINVALID, "give template or messages, not both")
	}
	if c.Template != nil && int64(len(*c.Template)) > l.MaxFile {
		return Errorf(ETOOLARGE, "template is %d bytes; the limit is %d", len(*c.Template), l.MaxFile)
	}
	if c.Messages != nil {
		if len(c.Messages) == 0 {
			return Errorf(EINVALID, "messages must hold at least one message")
		}
		if len(c.Messages) > MaxPromptMessages {
			return Errorf(ETOOLARGE, "a chat prompt may hold at most %d messages", MaxPromptMessages)
		}
		for i, m := range c.Messages {
			if m.Placeholder() {
				if !placeholderRE.MatchString(m.Name) || m.Role != "" || m.Content != "" {
					return Errorf(EINVALID, "messages[%d]: a placeholder has only a name, matching ^[a-z_][a-z0-9_]{0,63}$", i).WithDetail("rule", "placeholder")
				}
				continue
			}
			if m.Type != "" {
				return Errorf(EINVALID, "messages[%d].type must be %q or absent", i, MessagePlaceholder)
			}
			if !roleRE.MatchString(m.Role) {
				return Errorf(EINVALID, "messages[%d].role must match ^[a-z][a-z0-9_]{0,31}$ (system, user, assistant, ...)", i).WithDetail("rule", "role")
			}
			if int64(len(m.Content)) > l.MaxFile {
				return Errorf(ETOOLARGE, "messages[%d].content is %d bytes; the limit is %d", i, len(m.Content), l.MaxFile)
			}
		}
	}
	if len(c.Model) > l.MaxName {
		return Errorf(EINVALID, "model must be at most %d characters", l.MaxName)
	}
	if len(c.ModelParams) > 0 && !isJSONObject(c.ModelParams) && string(c.ModelParams) != "null" {
		return Errorf(EINVALID, "model_params must be a JSON object")
	}
	if len(c.VariablesSchema) > 0 && !isJSONObject(c.VariablesSchema) && string(c.VariablesSchema) != "null" {
		return Errorf(EINVALID, "variables_schema must be a JSON object (a JSON Schema)")
	}
	if int64(len(c.VariablesSchema)) > l.MaxFile {
		return Errorf(ETOOLARGE, "variables_schema is %d bytes; the limit is %d", len(c.VariablesSchema), l.MaxFile)
	}
	return nil
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// PromptFiles lays content out as the files of a version.
func PromptFiles(c *PromptContent) ([]FileContent, error) {
	var files []FileContent
	if c.Template != nil {
		files = append(files, FileContent{Path: PromptTemplateFile, Content: []byte(*c.Template)})
	}
	for i, m := range c.Messages {
		if m.Placeholder() {
			files = append(files, FileContent{Path: placeholderPath(i, m.Name), Content: []byte{}})
			continue
		}
		files = append(files, FileContent{Path: messagePath(i, m.Role), Content: []byte(m.Content)})
	}
	if len(c.VariablesSchema) > 0 && string(c.VariablesSchema) != "null" {
		var buf bytes.Buffer
		if err := json.Indent(&buf, c.VariablesSchema, "", "  "); err != nil {
			return nil, Errorf(EINVALID, "variables_schema must be a JSON object (a JSON Schema)")
		}
		buf.WriteByte('\n')
		files = append(files, FileContent{Path: PromptSchemaFile, Content: buf.Bytes()})
	}
	params, err := normalizeParams(c.ModelParams)
	if err != nil {
		return nil, err
	}
	cfg, err := json.MarshalIndent(promptConfig{Model: c.Model, ModelParams: params, Provider: c.Provider}, "", "  ")
	if err != nil {
		return nil, err
	}
	files = append(files, FileContent{Path: PromptConfigFile, Content: append(cfg, '\n')})
	return files, nil
}

// normalizeParams re-encodes model parameters with sorted keys, so
// config.json diffs only where a value changed.
func normalizeParams(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, Errorf(EINVALID, "model_params must be a JSON object")
	}
	b, err := json.Marshal(m)
	return b, err
}

func messagePath(i int, role string) string {
	return fmt.Sprintf("%s/%03d-%s.txt", PromptMessagesDir, i+1, role)
}

func placeholderPath(i int, name string) string {
	return fmt.Sprintf("%s/%03d-%s-%s.txt", PromptMessagesDir, i+1, MessagePlaceholder, name)
}

// IsPromptFile reports whether path is part of the prompt layout, so a
// rewrite of the content replaces exactly these files.
func IsPromptFile(path string) bool {
	return path == PromptTemplateFile || path == PromptConfigFile || path == PromptSchemaFile || strings.HasPrefix(path, PromptMessagesDir+"/")
}

// ParsePromptFiles reads the content of a version from its prompt files
// (as IsPromptFile selects them). A version with neither a template nor
// messages has neither set.
func ParsePromptFiles(files map[string][]byte) (*PromptContent, error) {
	c := &PromptContent{ModelParams: json.RawMessage("{}")}
	if b, ok := files[PromptTemplateFile]; ok {
		t := string(b)
		c.Template = &t
	}
	var msgs []string
	for p := range files {
		if strings.HasPrefix(p, PromptMessagesDir+"/") {
			msgs = append(msgs, p)
		}
	}
	sort.Strings(msgs)
	for _, p := range msgs {
		m := messageFileRE.FindStringSubmatch(p)
		if m == nil {
			return nil, Errorf(EUNPROCESSABLE, "%s is not a message file: names are messages/NNN-role.txt", p)
		}
		if n, _ := strconv.Atoi(m[1]); n != len(c.Messages)+1 {
			return nil, Errorf(EUNPROCESSABLE, "%s is out of order: messages are numbered 001, 002, ... without gaps", p)
		}
		if m[2] != "" {
			c.Messages = append(c.Messages, Message{Type: MessagePlaceholder, Name: m[2]})
			continue
		}
		c.Messages = append(c.Messages, Message{Role: m[3], Content: string(files[p])})
	}
	if b, ok := files[PromptSchemaFile]; ok {
		var buf bytes.Buffer
		if !isJSONObject(b) || json.Compact(&buf, b) != nil {
			return nil, Errorf(EUNPROCESSABLE, "%s is not a JSON object", PromptSchemaFile)
		}
		c.VariablesSchema = buf.Bytes()
	}
	if b, ok := files[PromptConfigFile]; ok {
		var cfg promptConfig
		if err := json.Unmarshal(b, &cfg); err != nil {
			return nil, Errorf(EUNPROCESSABLE, "%s is not valid: %v", PromptConfigFile, err)
		}
		c.Model, c.Provider = cfg.Model, cfg.Provider
		if len(cfg.ModelParams) > 0 && string(cfg.ModelParams) != "null" {
			if !isJSONObject(cfg.ModelParams) {
				return nil, Errorf(EUNPROCESSABLE, "%s: model_params must be an object", PromptConfigFile)
			}
			c.ModelParams = cfg.ModelParams
		}
	}
	return c, nil
}

// PromptStore reads and writes prompt versions as prompts. gitstore
// implements it; cache wraps it with read-through tiers.
type PromptStore interface {
	// LiveCommit returns the commit of the live version ("" when there is
	// none). It is cheap: one ref read, no object.
	LiveCommit(ctx context.Context, a *Asset) (string, error)
	// LivePrompt returns the live version with its content.
	LivePrompt(ctx context.Context, a *Asset) (*PromptVersion, error)
	// PromptContent returns the content of the version at commit.
	PromptContent(ctx context.Context, a *Asset, commit string) (*PromptContent, error)
	// WritePrompt replaces the prompt files of draft n with c in one
	// commit (none when nothing changes). ifMatch, when set, must equal
	// the draft's commit.
	WritePrompt(ctx context.Context, by Actor, a *Asset, n int, c *PromptContent, ifMatch string) (*Version, error)
	// EditPrompt is WritePrompt of edit(current content), read and
	// written under the draft's lock, so concurrent edits of one draft
	// queue rather than fail or overwrite each other's fields. A draft
	// whose files break the prompt layout is edited from empty content.
	EditPrompt(ctx context.Context, by Actor, a *Asset, n int, edit func(cur *PromptContent) *PromptContent, ifMatch string) (*Version, error)
}

// PromptCache is the admin side of a prompt cache.
type PromptCache interface {
	// Purge drops every cached read of prompt a, on every process.
	Purge(ctx context.Context, a *Asset) error
	// PurgeAll drops every cached prompt read, on every process.
	PurgeAll(ctx context.Context) error
}

// Payload is a named set of sample variables for a prompt.
type Payload struct {
	ID        string          `json:"id"`
	PromptID  string          `json:"prompt_id"`
	Name      string          `json:"name"`
	Variables json.RawMessage `json:"variables"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	CreatedBy string          `json:"created_by,omitempty"`
	// Assertions are the checks an evaluation makes of a model's output
	// for this payload (evaluation.go).
	Assertions []Assertion `json:"assertions,omitempty"`
}

// PayloadStore keeps the payloads of prompts.
type PayloadStore interface {
	CreatePayload(ctx context.Context, by Actor, a *Asset, p *Payload) error
	Payloads(ctx context.Context, a *Asset) ([]*Payload, error)
	Payload(ctx context.Context, a *Asset, id string) (*Payload, error)
	UpdatePayload(ctx context.Context, by Actor, a *Asset, p *Payload) error
	DeletePayload(ctx context.Context, by Actor, a *Asset, id string) error
}
