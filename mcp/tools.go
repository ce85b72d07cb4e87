package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// Tools for agents: find and render prompts, list and read skills, and,
// for write credentials, open a draft and write a file into it, so an
// agent can propose a change that a person reviews and publishes. No
// tool publishes.

func itoa(n int) string { return strconv.Itoa(n) }

// splitSlug splits "project/slug".
func splitSlug(s string) (project, slug string, err error) {
	project, slug, ok := strings.Cut(s, "/")
	if !ok || project == "" || slug == "" || strings.Contains(slug, "/") {
		return "", "", quire.Errorf(quire.EINVALID, "slug %q must be project/slug", s)
	}
	return project, slug, nil
}

// toolError is what a tool answers for a failed use case: the client-safe
// message, as a tool result with isError (the SDK's way for a handler's
// error), so the model reads why.
func (s *Server) toolError(err error) error {
	if quire.ErrorCode(err) == quire.EINTERNAL {
		s.log.Error("mcp: tool failed", "error", err.Error())
	}
	msg := quire.ErrorMessage(err)
	if d := quire.ErrorDetails(err); len(d) > 0 {
		if b, jerr := json.Marshal(d); jerr == nil {
			msg += " " + string(b)
		}
	}
	return errors.New(string(quire.ErrorCode(err)) + ": " + msg)
}

// SearchInput is search_prompts' input.
type SearchInput struct {
	Query string `json:"query" jsonschema:"words to find in a prompt's name, slug, project or description"`
}

// PromptInfo describes a prompt in a tool's answer.
type PromptInfo struct {
	Name        string   `json:"name"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Version     int      `json:"version"`
	Arguments   []string `json:"arguments"`
	Required    []string `json:"required"`
}

// SearchOutput is search_prompts' answer.
type SearchOutput struct {
	Prompts []PromptInfo `json:"prompts"`
}

// RenderInput is render_prompt's input.
type RenderInput struct {
	Slug      string         `json:"slug" jsonschema:"the prompt as project/slug"`
	Variables map[string]any `json:"variables,omitempty" jsonschema:"the template's variables, any JSON values"`
	Version   int            `json:"version,omitempty" jsonschema:"a published version; the live one when omitted"`
	Label     string         `json:"label,omitempty" jsonschema:"a label naming a version"`
}

// Message is one rendered message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// RenderOutput is render_prompt's answer: text for a text prompt,
// messages (roles as written, system included) for a chat prompt.
type RenderOutput struct {
	Name     string    `json:"name"`
	Version  int       `json:"version"`
	Text     *string   `json:"text,omitempty"`
	Messages []Message `json:"messages,omitempty"`
	Model    string    `json:"model,omitempty"`
}

// ListSkillsInput is list_skills' input.
type ListSkillsInput struct {
	Project string `json:"project,omitempty" jsonschema:"a project's slug; every project the credential can read when omitted"`
}

// SkillInfo describes a skill in a tool's answer.
type SkillInfo struct {
	Name        string `json:"name"`
	URI         string `json:"uri"`
	Description string `json:"description"`
	Version     int    `json:"version"`
}

// ListSkillsOutput is list_skills' answer (at most 500 skills).
type ListSkillsOutput struct {
	Skills    []SkillInfo `json:"skills"`
	Truncated bool        `json:"truncated,omitempty"`
}

// GetSkillInput is get_skill's input.
type GetSkillInput struct {
	Slug string `json:"slug" jsonschema:"the skill as project/slug"`
}

// FileInfo is one file of a skill.
type FileInfo struct {
	Path   string `json:"path"`
	URI    string `json:"uri"`
	Size   int64  `json:"size"`
	Digest string `json:"digest"`
}

// GetSkillOutput is get_skill's answer: SKILL.md and the file list.
type GetSkillOutput struct {
	Name    string     `json:"name"`
	Version int        `json:"version"`
	SkillMD string     `json:"skill_md"`
	Files   []FileInfo `json:"files"`
}

// OpenDraftInput is open_draft's input.
type OpenDraftInput struct {
	Slug string `json:"slug" jsonschema:"the skill (or prompt) as project/slug"`
	From int    `json:"from,omitempty" jsonschema:"the version the draft starts from; the live one when omitted"`
}

// DraftOutput is open_draft's and upsert_file's answer.
type DraftOutput struct {
	Slug    string `json:"slug"`
	Version int    `json:"version"`
	State   string `json:"state"`
	Commit  string `json:"commit"`
	File    string `json:"file_path,omitempty"`
}

// UpsertInput is upsert_file's input.
type UpsertInput struct {
	Slug     string `json:"slug" jsonschema:"the skill or prompt as project/slug"`
	Version  int    `json:"version" jsonschema:"the draft's version number (from open_draft)"`
	FilePath string `json:"file_path" jsonschema:"the file's path in the skill; for a prompt one of prompt.txt, messages/NNN-role.txt, config.json, variables.schema.json"`
	Content  string `json:"content" jsonschema:"the file's whole new content"`
}

// ReviewInput is open_review's input.
type ReviewInput struct {
	Slug        string `json:"slug" jsonschema:"the skill or prompt as project/slug"`
	Version     int    `json:"version" jsonschema:"the draft's version number (from open_draft)"`
	Title       string `json:"title" jsonschema:"the review's title: what the change does"`
	Description string `json:"description,omitempty" jsonschema:"why, and what a reviewer should look at"`
}

// ReviewOutput is open_review's answer.
type ReviewOutput struct {
	Slug    string `json:"slug"`
	Version int    `json:"version"`
	Review  int    `json:"review"`
	State   string `json:"state"`
	Title   string `json:"title"`
}

// writeTools are offered only to credentials that may write.
var writeTools = map[string]bool{"open_draft": true, "upsert_file": true, "open_review": true}

// filterTools hides the write tools from a read-only API key: it could
// only be refused.
func (s *Server) filterTools(ctx context.Context, res *sdk.ListToolsResult) {
	p, err := principal(ctx)
	if err != nil || p.Key == nil || p.Key.Scope.Level() >= quire.AccessWrite {
		return
	}
	kept := res.Tools[:0]
	for _, t := range res.Tools {
		if !writeTools[t.Name] {
			kept = append(kept, t)
		}
	}
	res.Tools = kept
}

// tool adapts a use-case handler to the SDK: it finds the caller and
// turns the handler's error into a tool error.
func tool[In, Out any](s *Server, h func(context.Context, *quire.Principal, In) (Out, error)) sdk.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
		var zero Out
		p, err := principal(ctx)
		if err != nil {
			return nil, zero, err
		}
		out, err := h(ctx, p, in)
		if err != nil {
			return nil, zero, s.toolError(err)
		}
		return nil, out, nil
	}
}

// addTool adds a tool whose input and output schemas are portable
// (schemas.go): the SDK infers a nullable union for a slice or pointer.
func addTool[In, Out any](s *Server, t *sdk.Tool, h sdk.ToolHandlerFor[In, Out]) {
	t.InputSchema = portableSchema[In]()
	t.OutputSchema = portableSchema[Out]()
	sdk.AddTool(s.sdk, t, h)
}

func (s *Server) addTools() {
	addTool(s, &sdk.Tool{Name: "search_prompts", Description: "Find live prompts by words in their name or description.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		tool(s, func(ctx context.Context, p *quire.Principal, in SearchInput) (SearchOutput, error) {
			found, err := s.app.SearchPrompts(ctx, p, in.Query, 50)
			if err != nil {
				return SearchOutput{}, err
			}
			out := SearchOutput{Prompts: make([]PromptInfo, 0, len(found))}
			for _, ap := range found {
				pi := PromptInfo{Name: ap.Name, Title: ap.Asset.Name, Description: ap.Asset.Description, Version: ap.Version.Number, Arguments: []string{}, Required: []string{}}
				for _, a := range ap.Arguments {
					pi.Arguments = append(pi.Arguments, a.Name)
					if a.Required {
						pi.Required = append(pi.Required, a.Name)
					}
				}
				out.Prompts = append(out.Prompts, pi)
			}
			return out, nil
		}))

	addTool(s, &sdk.Tool{Name: "render_prompt", Description: "Render a prompt (project/slug) with variables: its live version, or a version or label.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		tool(s, func(ctx context.Context, p *quire.Principal, in RenderInput) (RenderOutput, error) {
			name := in.Slug
			switch {
			case in.Version != 0 && in.Label != "":
				return RenderOutput{}, quire.Errorf(quire.EINVALID, "give version or label, not both")
			case in.Version != 0:
				name += "@" + itoa(in.Version)
			case in.Label != "":
				name += "#" + in.Label
			}
			var vars json.RawMessage
			if in.Variables != nil {
				var err error
				if vars, err = json.Marshal(in.Variables); err != nil {
					return RenderOutput{}, quire.Errorf(quire.EINVALID, "variables must be a JSON object")
				}
			}
			_, r, err := s.app.RenderNamed(ctx, p, name, vars)
			if err != nil {
				return RenderOutput{}, err
			}
			out := RenderOutput{Name: in.Slug, Version: r.Version, Text: r.Text, Model: r.Model}
			for _, m := range r.Messages {
				out.Messages = append(out.Messages, Message{Role: m.Role, Content: m.Content})
			}
			return out, nil
		}))

	addTool(s, &sdk.Tool{Name: "list_skills", Description: "List the live skills, in one project or all.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		tool(s, func(ctx context.Context, p *quire.Principal, in ListSkillsInput) (ListSkillsOutput, error) {
			page, next, err := s.app.AgentSkills(ctx, p, in.Project, "", app.MaxAgentPage)
			if err != nil {
				return ListSkillsOutput{}, err
			}
			out := ListSkillsOutput{Skills: make([]SkillInfo, 0, len(page)), Truncated: next != ""}
			for _, sk := range page {
				desc, _ := sk.Frontmatter["description"].(string)
				if desc == "" {
					desc = sk.Asset.Description
				}
				out.Skills = append(out.Skills, SkillInfo{Name: sk.Name, URI: skillMD(sk.Project.Slug, sk.Asset.Slug), Description: desc, Version: sk.Version.Number})
			}
			return out, nil
		}))

	addTool(s, &sdk.Tool{Name: "get_skill", Description: "Read a live skill (project/slug): its SKILL.md and its file list.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		tool(s, func(ctx context.Context, p *quire.Principal, in GetSkillInput) (GetSkillOutput, error) {
			project, slug, err := splitSlug(in.Slug)
			if err != nil {
				return GetSkillOutput{}, err
			}
			sk, err := s.app.AgentSkill(ctx, p, project, slug)
			if err != nil {
				return GetSkillOutput{}, err
			}
			md, _, err := s.app.AgentSkillFile(ctx, p, project, slug, "SKILL.md")
			if err != nil && quire.ErrorCode(err) != quire.ENOTFOUND {
				return GetSkillOutput{}, err
			}
			out := GetSkillOutput{Name: sk.Name, Version: sk.Version.Number, SkillMD: string(md), Files: make([]FileInfo, 0, len(sk.Files))}
			for _, f := range sk.Files {
				out.Files = append(out.Files, FileInfo{Path: f.Path, URI: fileURI(sk.Project.Slug, sk.Asset.Slug, f.Path), Size: f.Size, Digest: f.Digest})
			}
			return out, nil
		}))

	addTool(s, &sdk.Tool{Name: "open_draft", Description: "Open a draft of a skill (or prompt) for review, from its live version or a given one. Never publishes."},
		tool(s, func(ctx context.Context, p *quire.Principal, in OpenDraftInput) (DraftOutput, error) {
			project, slug, err := splitSlug(in.Slug)
			if err != nil {
				return DraftOutput{}, err
			}
			h, err := s.app.OpenNamed(ctx, p, project, slug, quire.AccessWrite)
			if err != nil {
				return DraftOutput{}, err
			}
			base := quire.Base{Live: true}
			if in.From > 0 {
				base = quire.Base{Version: in.From}
			}
			v, err := h.CreateVersion(ctx, base)
			if err != nil {
				return DraftOutput{}, err
			}
			return DraftOutput{Slug: in.Slug, Version: v.Number, State: string(v.State), Commit: v.Commit}, nil
		}))

	addTool(s, &sdk.Tool{Name: "upsert_file", Description: "Write one file into a draft of a skill or prompt (from open_draft). " +
		"A prompt's files are prompt.txt (a text prompt's template), messages/NNN-role.txt (a chat prompt's messages, numbered from 001), " +
		"config.json and variables.schema.json. The draft stays a draft for a person to review."},
		tool(s, func(ctx context.Context, p *quire.Principal, in UpsertInput) (DraftOutput, error) {
			project, slug, err := splitSlug(in.Slug)
			if err != nil {
				return DraftOutput{}, err
			}
			h, err := s.app.OpenNamed(ctx, p, project, slug, quire.AccessWrite)
			if err != nil {
				return DraftOutput{}, err
			}
			v, f, err := h.UpsertFile(ctx, in.Version, app.FileWrite{Path: in.FilePath, Content: []byte(in.Content)})
			if err != nil {
				return DraftOutput{}, err
			}
			return DraftOutput{Slug: in.Slug, Version: v.Number, State: string(v.State), Commit: v.Commit, File: f.Path}, nil
		}))

	addTool(s, &sdk.Tool{Name: "open_review", Description: "Ask for review of a draft of a skill or prompt (from open_draft and upsert_file): " +
		"opens a review with a title and description for a person to approve and publish. Never publishes."},
		tool(s, func(ctx context.Context, p *quire.Principal, in ReviewInput) (ReviewOutput, error) {
			project, slug, err := splitSlug(in.Slug)
			if err != nil {
				return ReviewOutput{}, err
			}
			h, err := s.app.OpenNamed(ctx, p, project, slug, quire.AccessWrite)
			if err != nil {
				return ReviewOutput{}, err
			}
			rv, err := h.OpenReview(ctx, in.Version, app.ReviewEdit{Title: &in.Title, Description: &in.Description})
			if err != nil {
				return ReviewOutput{}, err
			}
			r := rv.Review
			return ReviewOutput{Slug: in.Slug, Version: r.Version, Review: r.Number, State: string(r.State), Title: r.Title}, nil
		}))
}
