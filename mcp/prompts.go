package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// listPrompts answers prompts/list: the live prompts the caller can
// read, a page at a time.
func (s *Server) listPrompts(ctx context.Context, params *sdk.ListPromptsParams) (*sdk.ListPromptsResult, error) {
	p, cursor, err := listCaller(ctx, params, func(q *sdk.ListPromptsParams) string { return q.Cursor })
	if err != nil {
		return nil, err
	}
	page, next, err := s.app.AgentPrompts(ctx, p, "", cursor, app.MaxAgentPage)
	if err != nil {
		return nil, s.fail(err)
	}
	s.noteListed(page)
	out := &sdk.ListPromptsResult{Cacheable: listCache, Prompts: make([]*sdk.Prompt, 0, len(page)), NextCursor: next}
	for _, ap := range page {
		out.Prompts = append(out.Prompts, promptView(ap))
	}
	return out, nil
}

func promptView(ap app.AgentPrompt) *sdk.Prompt {
	pr := &sdk.Prompt{Name: ap.Name, Title: ap.Asset.Name, Description: ap.Asset.Description, Arguments: []*sdk.PromptArgument{}}
	for _, a := range ap.Arguments {
		desc := a.Description
		if a.JSON && desc == "" {
			desc = "a JSON value (list, object, number or boolean)"
		}
		pr.Arguments = append(pr.Arguments, &sdk.PromptArgument{Name: a.Name, Description: desc, Required: a.Required})
	}
	return pr
}

// getPrompt answers prompts/get: the prompt the name selects, rendered
// with the arguments; a text prompt is one user message, a chat prompt
// its messages in order, with system (and any role MCP lacks) sent as
// user, since MCP messages are only user or assistant.
func (s *Server) getPrompt(ctx context.Context, params *sdk.GetPromptParams) (*sdk.GetPromptResult, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	out, err := s.renderPrompt(ctx, p, params.Name, params.Arguments)
	if err != nil {
		return nil, s.fail(err)
	}
	return out, nil
}

// renderPrompt is getPrompt's work for caller p, with quire's error as it
// is: the prompts/get fast path (fastpath.go) hands a failure to the SDK,
// which calls getPrompt again and answers (and logs) it once.
func (s *Server) renderPrompt(ctx context.Context, p *quire.Principal, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	as, r, err := s.app.RenderNamedArgs(ctx, p, name, args)
	if err != nil {
		return nil, err
	}
	out := &sdk.GetPromptResult{Description: as.Description}
	if r.Text != nil {
		out.Messages = []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: *r.Text}}}
		return out, nil
	}
	out.Messages = make([]*sdk.PromptMessage, 0, len(r.Messages))
	for _, m := range r.Messages {
		role := sdk.Role("user")
		if m.Role == "assistant" {
			role = "assistant"
		}
		out.Messages = append(out.Messages, &sdk.PromptMessage{Role: role, Content: &sdk.TextContent{Text: m.Content}})
	}
	return out, nil
}
