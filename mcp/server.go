// Package mcp serves quire over the Model Context Protocol, with the
// official Go SDK: live prompts (prompts/list, prompts/get), live skills
// (the skills extension's skills/list and skills/get, and their files as
// skill:// resources), and tools for agents. It is a door: it decodes an
// MCP request, calls one use case in app, and encodes the answer; every
// rule (access, rendering, names and selectors) lives in app.
//
// It serves Streamable HTTP (Handler, mounted at /mcp by the HTTP API,
// which authenticates the bearer token first) and bridges stdio to a
// remote server (Bridge, for `quire mcp`). It must not import gin, the
// stores or Redis (internal/archtest).
package mcp

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// SkillsExtension is the MCP Skills Extension's identifier, declared in
// the server's capabilities.
const SkillsExtension = "io.modelcontextprotocol/skills"

// sessionlessSince is the first protocol version without sessions
// (SEP-2575): its requests carry their version and need no session.
const sessionlessSince = "2026-07-28"

// Options configure a Server.
type Options struct {
	// Version is the server version reported at initialize.
	Version string
	// Logger receives the SDK's log lines; nothing when nil.
	Logger *slog.Logger
	// MaxBody bounds one request body (the SDK answers 413 above it).
	MaxBody int64

	// sdkOnly turns the prompts/get fast path off (fastpath.go), so
	// tests can compare its answers with the SDK's; sessionTimeout, when
	// set, replaces the 30 minutes after which an idle session ends, and
	// now the clock, for tests of the fast path's rule on it.
	sdkOnly        bool
	sessionTimeout time.Duration
	now            func() time.Time
}

// Server is quire's MCP server: one SDK server for every session, whose
// handlers read the caller from each request.
type Server struct {
	app    *app.App
	sdk    *sdk.Server
	http   http.Handler
	log    *slog.Logger
	notify sync.Mutex // one list_changed toggle at a time

	// impl is the server's name and version, which the fast path writes
	// in a result's _meta as the SDK does; maxBody is Options.MaxBody.
	impl    *sdk.Implementation
	maxBody int64

	// mu guards what notify.go keeps to tell each session only of what
	// its credential can see.
	mu sync.Mutex
	// subs counts subscriptions per resource URI, to know which URIs a
	// changed skill must announce. A session that ends without
	// unsubscribing leaves its count: the SDK drops the session itself,
	// so at worst a URI is announced to no one.
	subs map[string]int
	// live is each prompt's state as last listed or announced, so a draft
	// edit sends no list_changed and a change is told to the readers of
	// the project it was in as well as the one it is in.
	live map[string]app.PromptState
	// callers is the credential of each session that can be sent
	// notifications, as of its last request; owed the sessions a
	// list_changed is due to.
	callers map[*sdk.ServerSession]*quire.Principal
	owed    map[*sdk.ServerSession]bool
	// sessions are the open sessions the fast path may answer on, by id
	// (fastpath.go).
	sessions map[string]*fastSession
	// now is the clock of the fast path's sdkEvery; fastAnswers counts
	// the calls it answered, for tests to tell who answered.
	now         func() time.Time
	fastAnswers atomic.Int64
}

// principalKey carries the caller through the SDK's handlers.
type principalKey struct{}

// New returns the MCP server over a.
func New(a *app.App, o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		app: a, log: o.Logger, subs: map[string]int{}, live: map[string]app.PromptState{},
		callers: map[*sdk.ServerSession]*quire.Principal{}, owed: map[*sdk.ServerSession]bool{},
		sessions: map[string]*fastSession{}, now: o.now,
		impl: &sdk.Implementation{Name: "quire", Version: o.Version}, maxBody: o.MaxBody,
	}
	if s.now == nil {
		s.now = time.Now
	}
	caps := &sdk.ServerCapabilities{
		Prompts:   &sdk.PromptCapabilities{ListChanged: true},
		Resources: &sdk.ResourceCapabilities{ListChanged: true, Subscribe: true},
		Tools:     &sdk.ToolCapabilities{},
	}
	caps.AddExtension(SkillsExtension, map[string]any{"directoryRead": true})
	s.sdk = sdk.NewServer(s.impl, &sdk.ServerOptions{
		Logger:             o.Logger,
		Capabilities:       caps,
		PageSize:           app.MaxAgentPage,
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
		Instructions: "quire serves versioned prompts and agent skills. Prompts are named project/slug " +
			"(project/slug@N for published version N, project/slug#label for a label). A skill is skill://project/slug/SKILL.md, " +
			"its files skill://project/slug/{path} (skills/list, resources/list).",
	})
	s.sdk.AddReceivingMiddleware(s.withPrincipal, s.dispatch)
	s.sdk.AddSendingMiddleware(s.filterNotifications)
	s.addTools()
	s.addSkillMethods()
	s.sdk.AddReceivingMiddleware(modernResults)

	opts := sdk.StreamableHTTPOptions{
		Logger:              o.Logger,
		MaxRequestBodyBytes: o.MaxBody,
		// The API listener's own guards (connection caps, deadlines)
		// apply, and the caller has already been authenticated by a
		// bearer token, which a DNS-rebinding page cannot send.
		DisableLocalhostProtection: true,
		// A session a client never ends (no DELETE) is dropped after
		// this long without a request, so sessions cannot pile up.
		SessionTimeout: cmp.Or(o.sessionTimeout, 30*time.Minute),
		// A POST's answer as one JSON body rather than an event stream:
		// less work per call on the hot path (docs/mcp.md, Measured);
		// notifications still stream (GET, subscriptions/listen).
		JSONResponse: true,
	}
	getServer := func(*http.Request) *sdk.Server { return s.sdk }
	sessions := sdk.NewStreamableHTTPHandler(getServer, &opts)
	opts.Stateless = true
	stateless := sdk.NewStreamableHTTPHandler(getServer, &opts)
	// The SDK serves the sessionless protocol (2026-07-28 on) only from a
	// stateless handler, and the older, session-based versions (a GET
	// event stream for notifications) only from a stateful one: a request
	// names its version in MCP-Protocol-Version (an initialize names
	// none), so each version gets the handler that speaks it, and a
	// client is answered in the newest version both support.
	//
	// A POST that names its method in Mcp-Method (which only clients of
	// 2026-07-28 on send), names no session and is no initialize is
	// sessionless whatever its MCP-Protocol-Version says: the stateless
	// handler checks that header against the version in the body's _meta
	// and answers a mismatch as HeaderMismatch (-32020), where the session
	// handler would answer "unsupported version".
	//
	// A prompts/get the SDK would answer with a result, sessionless or
	// on a session it has seen, is answered before it (fastpath.go).
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && (r.Header.Get("MCP-Protocol-Version") >= sessionlessSince ||
			sessionlessCall(r.Header)) {
			if !o.sdkOnly && s.servePromptGet(w, r) {
				return
			}
			stateless.ServeHTTP(w, r)
			return
		}
		if id := r.Header.Get("Mcp-Session-Id"); id != "" && !o.sdkOnly {
			switch r.Method {
			case http.MethodPost:
				if s.servePromptGetOnSession(w, r) {
					return
				}
			case http.MethodDelete:
				s.forgetSession(id)
			}
		}
		sessions.ServeHTTP(w, r)
	})
	// The SDK binds each MCP session to the credential that opened it
	// (TokenInfo.UserID): another credential using its id is refused.
	s.http = auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		p := app.PrincipalFrom(ctx)
		if p == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: tokenUser(p), Extra: map[string]any{"principal": p}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(stream)
	return s
}

// sessionlessCall reports whether a POST's headers show a 2026-07-28
// call: an Mcp-Method other than initialize, and no Mcp-Session-Id.
func sessionlessCall(h http.Header) bool {
	m := h.Get("Mcp-Method")
	return m != "" && m != "initialize" && h.Get("Mcp-Session-Id") == ""
}

// ServeHTTP serves Streamable HTTP. The caller must already be
// authenticated: app.WithPrincipal on the request's context.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.http.ServeHTTP(w, r) }

// withPrincipal moves the caller from the request's token info into the
// context every handler gets.
func (s *Server) withPrincipal(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		// Each request reads metadata in a scope of its own: the SDK runs
		// handlers under the session's context, which would otherwise
		// keep the first request's scope (and its view) for good.
		ctx = quire.WithReadScope(ctx)
		if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
			if p, ok := ex.TokenInfo.Extra["principal"].(*quire.Principal); ok {
				ctx = context.WithValue(ctx, principalKey{}, p)
				s.noteCaller(req, method, p)
			}
		}
		return next(ctx, method, req)
	}
}

// principal is the caller of the request ctx belongs to.
func principal(ctx context.Context) (*quire.Principal, error) {
	if p, ok := ctx.Value(principalKey{}).(*quire.Principal); ok {
		return p, nil
	}
	return nil, rpcError(quire.Errorf(quire.EUNAUTHORIZED, "no credential"))
}

// listCaller finds the caller of a list method and the cursor it asks
// from: none when the call has no params.
func listCaller[P any](ctx context.Context, params *P, cursor func(*P) string) (*quire.Principal, string, error) {
	p, err := principal(ctx)
	if err != nil || params == nil {
		return p, "", err
	}
	return p, cursor(params), nil
}

// dispatch answers the list and read methods whose answer depends on the
// caller and on live data: the SDK's own feature sets are fixed lists,
// the same for every session.
func (s *Server) dispatch(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "prompts/list":
			return s.listPrompts(ctx, req.GetParams().(*sdk.ListPromptsParams))
		case "prompts/get":
			return s.getPrompt(ctx, req.GetParams().(*sdk.GetPromptParams))
		case "resources/list":
			return s.listResources(ctx, req.GetParams().(*sdk.ListResourcesParams))
		case "resources/templates/list":
			return s.listResourceTemplates(ctx, req.GetParams().(*sdk.ListResourceTemplatesParams))
		case "resources/read":
			return s.readResource(ctx, req.GetParams().(*sdk.ReadResourceParams))
		case "tools/list":
			res, err := next(ctx, method, req)
			if err == nil {
				s.filterTools(ctx, res.(*sdk.ListToolsResult))
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// Close ends every open session, so their event streams return: a
// server shutting down waits for in-flight requests, and a stream
// otherwise lasts as long as its client.
func (s *Server) Close() {
	for ss := range s.sdk.Sessions() {
		ss.Close()
	}
}
