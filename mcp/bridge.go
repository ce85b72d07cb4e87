package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio bridge (`quire mcp --server URL`): hosts that launch a
// command speak MCP on its stdin and stdout; the bridge answers them by
// asking a quire's /mcp with the user's token, through the SDK on both
// sides (a client session upstream, a server over stdio downstream), so
// every message is decoded and re-encoded by the SDK rather than copied
// as bytes, and each side negotiates its own protocol version.

// BridgeOptions configure Bridge.
type BridgeOptions struct {
	// Server is the quire's base URL (http://host:port); /mcp is added.
	Server string
	// Token is the bearer token (a sess_… or ak_… token).
	Token string
	// Version is the bridge's version, reported to the host.
	Version string
	// HTTPClient makes the upstream requests; http.DefaultClient's
	// transport when nil.
	HTTPClient *http.Client
	// Logger receives the SDK's log lines; nothing when nil.
	Logger *slog.Logger
}

// tokenTransport adds the bearer token to every upstream request.
type tokenTransport struct {
	token string
	next  http.RoundTripper
}

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

// Bridge connects to the quire at o.Server and serves MCP on t (the
// host's stdio) until the host hangs up or ctx ends.
func Bridge(ctx context.Context, t sdk.Transport, o BridgeOptions) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	next := http.DefaultTransport
	if o.HTTPClient != nil && o.HTTPClient.Transport != nil {
		next = o.HTTPClient.Transport
	}
	var (
		mu    sync.Mutex
		local *sdk.Server // set before the upstream can send anything it relays
	)
	relay := func(f func(*sdk.Server)) {
		mu.Lock()
		defer mu.Unlock()
		if local != nil {
			f(local)
		}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "quire-mcp-bridge", Version: o.Version}, &sdk.ClientOptions{
		Logger: o.Logger,
		PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) {
			relay(func(s *sdk.Server) {
				s.AddPrompt(&sdk.Prompt{Name: listChangedPrompt}, nil)
				s.RemovePrompts(listChangedPrompt)
			})
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			relay(func(s *sdk.Server) {
				s.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: req.Params.URI})
			})
		},
	})
	RegisterSkillMethods(client)
	endpoint := strings.TrimSuffix(o.Server, "/") + "/mcp"
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: tokenTransport{o.Token, next}},
	}, nil)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	defer cs.Close()

	up := cs.InitializeResult()
	caps := &sdk.ServerCapabilities{Prompts: up.Capabilities.Prompts, Resources: up.Capabilities.Resources, Tools: up.Capabilities.Tools}
	for name, settings := range up.Capabilities.Extensions {
		m, _ := settings.(map[string]any)
		caps.AddExtension(name, m)
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "quire", Version: o.Version}, &sdk.ServerOptions{
		Logger:       o.Logger,
		Capabilities: caps,
		Instructions: up.Instructions,
		SubscribeHandler: func(ctx context.Context, req *sdk.SubscribeRequest) error {
			return cs.Subscribe(ctx, req.Params)
		},
		UnsubscribeHandler: func(ctx context.Context, req *sdk.UnsubscribeRequest) error {
			return cs.Unsubscribe(ctx, req.Params)
		},
	})
	srv.AddReceivingMiddleware(modernResults, forward(cs))
	sdk.AddReceivingCustomMethod(srv, "skills/list", func(ctx context.Context, _ *sdk.ServerSession, p *ListSkillsParams) (*ListSkillsResult, error) {
		return sdk.CallCustomMethod[*ListSkillsParams, *ListSkillsResult](ctx, cs, "skills/list", p)
	})
	sdk.AddReceivingCustomMethod(srv, "skills/get", func(ctx context.Context, _ *sdk.ServerSession, p *GetSkillParams) (*GetSkillResult, error) {
		return sdk.CallCustomMethod[*GetSkillParams, *GetSkillResult](ctx, cs, "skills/get", p)
	})
	sdk.AddReceivingCustomMethod(srv, "resources/directory/read", func(ctx context.Context, _ *sdk.ServerSession, p *ReadDirectoryParams) (*ReadDirectoryResult, error) {
		return sdk.CallCustomMethod[*ReadDirectoryParams, *ReadDirectoryResult](ctx, cs, "resources/directory/read", p)
	})
	mu.Lock()
	local = srv
	mu.Unlock()
	// Every request read before the host's input ends is answered before
	// the bridge returns (drain.go).
	return srv.Run(ctx, drainTransport{t})
}

// forward answers the host's requests with the upstream's answers; the
// SDK answers initialize, ping and subscriptions itself.
func forward(cs *sdk.ClientSession) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			switch p := req.GetParams().(type) {
			case *sdk.ListPromptsParams:
				return cs.ListPrompts(ctx, p)
			case *sdk.GetPromptParams:
				return cs.GetPrompt(ctx, p)
			case *sdk.ListResourcesParams:
				return cs.ListResources(ctx, p)
			case *sdk.ListResourceTemplatesParams:
				return cs.ListResourceTemplates(ctx, p)
			case *sdk.ReadResourceParams:
				return cs.ReadResource(ctx, p)
			case *sdk.ListToolsParams:
				return cs.ListTools(ctx, p)
			case *sdk.CallToolParamsRaw:
				return cs.CallTool(ctx, &sdk.CallToolParams{Meta: p.Meta, Name: p.Name, Arguments: p.Arguments})
			}
			return next(ctx, method, req)
		}
	}
}
