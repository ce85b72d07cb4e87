package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// The sessionless prompts/get fast path (issue 32). The Go SDK v1.8.0's
// stateless handler builds a server session for every 2026-07-28 request,
// which makes a sessionless prompts/get cost about 2.5 times a REST render
// (the SDK's own server/discover costs as much: docs/mcp.md, "Measured").
// So quire answers that one hot call at the transport edge, on its happy
// path only: a request the SDK would refuse, and one whose render fails,
// goes to the SDK unchanged (its body put back), which answers it with
// its own error. Only successes are written here, as the SDK writes them
// (fastpath_test.go compares the two).
//
// The same holds on a session (2025-11-25 and older): the SDK decodes a
// call four times over, each into a fresh 32 KiB buffer, which makes
// prompts/get cost about 1.5 times its own ping. So a session's
// prompts/get is answered here too, under the same rule, once the SDK has
// handled a request of that session (noteCaller records it: its caller,
// its version; servePromptGetOnSession checks them as the SDK would).
//
// Drop this file (and Options.sdkOnly) when an SDK release after v1.8.0
// answers stateless calls without building a session per request and
// decodes a call without a buffer per decode.

// servePromptGet answers r, a sessionless POST, if it is a prompts/get
// the SDK would accept and whose render succeeds; otherwise it answers
// nothing, leaves r's body to be read again, and reports false.
func (s *Server) servePromptGet(w http.ResponseWriter, r *http.Request) bool {
	h := r.Header
	// A version the SDK supports, and no session: a sessionless call.
	if h.Get("Mcp-Method") != "prompts/get" || h.Get("MCP-Protocol-Version") != sessionlessSince ||
		h.Get("Mcp-Session-Id") != "" || !postAccepted(h) {
		return false
	}
	p := app.PrincipalFrom(r.Context())
	if p == nil {
		return false
	}
	body, ok := s.readBody(r)
	if !ok {
		return false
	}
	id, call, ok := decodePromptGet(body, h)
	if !ok {
		return false
	}
	// What withPrincipal, dispatch and modernResults do for the SDK,
	// and what it adds to a 2026-07-28 result: the server's name.
	res, err := s.renderPrompt(requestScope(r.Context()), p, call.Params.Name, call.Params.Arguments)
	if err != nil {
		return false
	}
	res.Meta = sdk.Meta{sdk.MetaKeyServerInfo: s.impl}
	result, err := withComplete(res)
	return err == nil && s.answer(w, id, result)
}

// answer writes result, the encoded result of call id, as the SDK writes
// a call's JSON answer, and reports whether it did.
func (s *Server) answer(w http.ResponseWriter, id jsonrpc.ID, result []byte) bool {
	out, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: result})
	if err != nil {
		return false
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
	s.fastAnswers.Add(1)
	return true
}

// postAccepted reports whether a POST's headers pass the SDK transport's
// own checks (streamable.go): JSON, accepting JSON and event streams, no
// Last-Event-ID.
func postAccepted(h http.Header) bool {
	return len(h.Values("Last-Event-ID")) == 0 && isJSON(h.Get("Content-Type")) && acceptsJSONAndStream(h.Values("Accept"))
}

// sdkEvery is how long a session's prompts/get may be answered here
// after the SDK last handled one of the session's requests: the SDK ends
// a session SessionTimeout after its last request it saw, so one request
// a minute goes to it, and an active session stays open.
const sdkEvery = time.Minute

// fastSession is what the session fast path knows of a session the SDK
// has handled a request of, since it was initialized.
type fastSession struct {
	ss *sdk.ServerSession
	// user is the session's caller as the SDK names it (TokenInfo.UserID):
	// the SDK refuses another caller's request on the session.
	user string
	// version is the MCP-Protocol-Version its requests name.
	version string
	// sdkAt is when the SDK last handled one of its requests.
	sdkAt time.Time
}

// noteSession records a request of session ss the SDK is handling, made
// by p with headers h, for the session fast path.
func (s *Server) noteSession(ss *sdk.ServerSession, p *quire.Principal, h http.Header) {
	v := h.Get("MCP-Protocol-Version")
	if ss.ID() == "" || ss.InitializeParams() == nil || v == "" || v >= sessionlessSince {
		return
	}
	fs := &fastSession{ss: ss, user: tokenUser(p), version: v, sdkAt: s.now()}
	s.mu.Lock()
	s.sessions[ss.ID()] = fs
	s.mu.Unlock()
}

// forgetSession drops session id from the fast path: before the SDK ends
// it on a DELETE, so no later request is answered for it.
func (s *Server) forgetSession(id string) {
	s.mu.Lock()
	delete(s.sessions, id)
	s.mu.Unlock()
}

// servePromptGetOnSession answers r, a POST on a session, if it is a
// prompts/get the SDK would accept on that session and whose render
// succeeds; otherwise it answers nothing, leaves r's body to be read
// again, and reports false.
func (s *Server) servePromptGetOnSession(w http.ResponseWriter, r *http.Request) bool {
	h := r.Header
	// The transport's checks, as for a sessionless call; and the
	// session's: known, open, the same caller, the same version, and the
	// SDK has seen it lately.
	if m := h.Get("Mcp-Method"); m != "" && m != "prompts/get" || !postAccepted(h) {
		return false
	}
	p := app.PrincipalFrom(r.Context())
	if p == nil {
		return false
	}
	s.mu.Lock()
	fs := s.sessions[h.Get("Mcp-Session-Id")]
	s.mu.Unlock()
	if fs == nil || fs.user != tokenUser(p) || h.Get("MCP-Protocol-Version") != fs.version || s.now().Sub(fs.sdkAt) >= sdkEvery {
		return false
	}
	for k := range h {
		// The SDK checks Mcp-Param-* headers against a tool call's
		// arguments; a prompts/get has none to check them against.
		if strings.HasPrefix(k, "Mcp-Param-") {
			return false
		}
	}
	body, ok := s.readBody(r)
	// Most of a session's calls are not prompts/get: not decoded twice.
	if !ok || !bytes.Contains(body, []byte(`"prompts/get"`)) {
		return false
	}
	id, c, ok := decodeCall(body)
	// _meta (a progress token, or a later version's triple) and the
	// routing headers, when sent, are the SDK's to read.
	if !ok || c.Params.Meta != nil || h.Get("Mcp-Name") != "" && h.Get("Mcp-Name") != c.Params.Name {
		return false
	}
	res, err := s.renderPrompt(requestScope(r.Context()), p, c.Params.Name, c.Params.Arguments)
	if err != nil {
		return false
	}
	result, err := json.Marshal(res)
	if err != nil || !s.answer(w, id, result) {
		return false
	}
	// What withPrincipal's noteCaller keeps: the session's caller as of
	// its last request.
	s.mu.Lock()
	if _, open := s.callers[fs.ss]; open {
		s.callers[fs.ss] = p
	}
	s.mu.Unlock()
	return true
}

// tokenUser is the name the SDK binds a session to (TokenInfo.UserID).
func tokenUser(p *quire.Principal) string { return p.Kind() + ":" + p.ID() }

// readBody reads r's body up to the SDK's limit and puts what it read
// back in front of the rest, so the SDK reads the same bytes (and answers
// 413 above its limit, or 400 for a body that fails to read).
func (s *Server) readBody(r *http.Request) ([]byte, bool) {
	rest := r.Body
	var rd io.Reader = rest
	if s.maxBody > 0 {
		rd = io.LimitReader(rest, s.maxBody+1)
	}
	b, err := io.ReadAll(rd)
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), rest))
	return b, err == nil && len(b) > 0 && (s.maxBody <= 0 || int64(len(b)) <= s.maxBody)
}

// promptGet is a prompts/get call as the SDK reads it, names matched
// exactly. Members it does not name are kept in Unknown, and a call with
// any goes to the SDK, which ignores most but refuses some (an error
// member or an inputResponses of the wrong type).
type promptGet struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id"`
	Method  string `json:"method"`
	Params  struct {
		Meta      map[string]any    `json:"_meta"`
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
		Unknown   jsontext.Value    `json:",unknown"`
	} `json:"params"`
	Unknown jsontext.Value `json:",unknown"`
}

// clientCapabilities is the SDK's clientCapabilitiesV2, what it reads a
// 2026-07-28 request's client capabilities into.
type clientCapabilities struct {
	sdk.ClientCapabilities
	//lint:ignore SA1019 the SDK reads roots, deprecated or not
	Roots *sdk.RootCapabilities `json:"roots,omitempty"`
}

// decodePromptGet reads body, a prompts/get call, in one pass, and
// reports whether the SDK would accept it with these headers. Where the
// SDK's decoder and jsonv2 differ, jsonv2 is the stricter (a name given
// twice, invalid UTF-8, data after the value), and the call goes to the
// SDK.
func decodePromptGet(body []byte, h http.Header) (jsonrpc.ID, *promptGet, bool) {
	id, c, ok := decodeCall(body)
	if !ok {
		return jsonrpc.ID{}, nil, false
	}
	p := &c.Params
	if p.Name != h.Get("Mcp-Name") {
		return jsonrpc.ID{}, nil, false
	}
	// _meta names the version the header does, and the client's
	// capabilities; its client info is optional, but must read if given.
	version, _ := p.Meta[sdk.MetaKeyProtocolVersion].(string)
	info, hasInfo := p.Meta[sdk.MetaKeyClientInfo]
	if version != h.Get("MCP-Protocol-Version") || !decodes[clientCapabilities](p.Meta[sdk.MetaKeyClientCapabilities]) ||
		hasInfo && !decodes[sdk.Implementation](info) {
		return jsonrpc.ID{}, nil, false
	}
	return id, c, true
}

// decodeCall reads body, a prompts/get call of a name, in one pass: the
// envelope as the SDK reads it; headers and _meta are the caller's to
// check.
func decodeCall(body []byte) (jsonrpc.ID, *promptGet, bool) {
	// The SDK refuses JSON nested over 1000 deep: a body of fewer
	// brackets, in strings or not, is not.
	if bytes.Count(body, []byte("{"))+bytes.Count(body, []byte("[")) > 1000 {
		return jsonrpc.ID{}, nil, false
	}
	var c promptGet
	if jsonv2.Unmarshal(body, &c) != nil || len(c.Unknown) > 0 || len(c.Params.Unknown) > 0 ||
		c.JSONRPC != "2.0" || c.Method != "prompts/get" || c.Params.Name == "" {
		return jsonrpc.ID{}, nil, false
	}
	// The SDK's own reading of an id: a number as an integer, or a string.
	id, err := jsonrpc.MakeID(c.ID)
	if err != nil || !id.IsValid() {
		return jsonrpc.ID{}, nil, false
	}
	return id, &c, true
}

// decodes reports whether v, a _meta value, reads as a T, as the SDK
// checks it: encoded again and decoded into a T.
func decodes[T any](v any) bool {
	if v == nil {
		return false
	}
	b, err := jsonv2.Marshal(v)
	if err != nil {
		return false
	}
	var t T
	return jsonv2.Unmarshal(b, &t) == nil
}

// isJSON reports whether a Content-Type is JSON's, as the SDK asks.
func isJSON(contentType string) bool {
	if contentType == "application/json" {
		return true
	}
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && t == "application/json"
}

// acceptsJSONAndStream reports whether Accept headers name both JSON and
// event streams (or wildcards that cover them), as the SDK asks of a POST.
func acceptsJSONAndStream(accept []string) bool {
	var json, stream bool
	for _, v := range accept {
		for t := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(t, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				stream = true
			case "*/*":
				json, stream = true, true
			}
		}
	}
	return json && stream
}

// requestScope is ctx with a read scope: the request's own, which the
// API's begin made, or a new one where ctx has none. Unlike the SDK's
// handlers (server.go), the fast path runs in the request's context, not
// a session's, so a scope found there is this request's.
func requestScope(ctx context.Context) context.Context {
	if quire.ReadScopeFrom(ctx) != nil {
		return ctx
	}
	return quire.WithReadScope(ctx)
}
