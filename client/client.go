// Package client is the Go SDK of quire's HTTP API: a typed method for
// every operation, context first, errors as *APIError, and a prompt cache
// (Prompts) that applications embed: it keeps prompts in memory,
// revalidates them in the background with If-None-Match, serves the last
// good version when the server is down, and renders locally with the
// server's own Mustache engine (render/), so both render alike.
//
// It speaks HTTP only: of quire it imports the root types, render and
// skillpack, never a server package (internal/archtest).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls one quire server. It is safe for concurrent use.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
	ua    string
}

// Option configures a Client.
type Option func(*Client)

// WithToken authenticates every request with a bearer token: a sess_
// session or an ak_ API key. Without one the client is anonymous and
// reads public projects only.
func WithToken(tok string) Option { return func(c *Client) { c.token = tok } }

// WithHTTPClient sends requests through hc (timeouts, proxies, tracing).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithUserAgent sets the User-Agent of every request.
func WithUserAgent(ua string) Option { return func(c *Client) { c.ua = ua } }

// New returns a client of the server at baseURL (scheme and host, e.g.
// "https://quire.example.com").
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("client: base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q must be http:// or https:// with a host", baseURL)
	}
	c := &Client{base: u, http: &http.Client{Timeout: 30 * time.Second}, ua: "quire-go-client"}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// APIError is an error answer of the server.
type APIError struct {
	// Status is the HTTP status; Code the machine-readable error code
	// ("not_found", "conflict", ...); Message the server's message.
	Status  int
	Code    string
	Message string
	// Details holds the error's machine-readable details (the ids of a
	// slug conflict, the missing variables of a render, ...), if any.
	Details map[string]any
	// RequestID is the server's id of the request, for its logs.
	RequestID string
}

func (e *APIError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("quire: %d %s: %s", e.Status, e.Code, e.Message)
	}
	return fmt.Sprintf("quire: %d: %s", e.Status, e.Message)
}

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// request is one call: method, path (already escaped), query, a JSON
// body or raw bytes, extra headers.
type request struct {
	method  string
	path    string
	query   url.Values
	body    any // JSON-encoded unless []byte
	ctype   string
	headers map[string]string
}

// response is a raw answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// send performs r and returns its answer; an error answer (>= 400) is an
// *APIError. A 304 is not an error.
func (c *Client) send(ctx context.Context, r request) (*response, error) {
	u := *c.base
	u.Path = c.base.Path + r.path
	u.RawPath = ""
	if p, err := url.PathUnescape(u.Path); err == nil && p != u.Path {
		u.RawPath = c.base.Path + r.path
		u.Path = p
	}
	if len(r.query) > 0 {
		u.RawQuery = r.query.Encode()
	}
	var body io.Reader
	ctype := r.ctype
	switch b := r.body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("client: encode %s %s: %w", r.method, r.path, err)
		}
		body = bytes.NewReader(j)
		ctype = "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("User-Agent", c.ua)
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: read answer: %w", r.method, r.path, err)
	}
	if res.StatusCode >= 400 {
		return nil, decodeError(res, b)
	}
	return &response{status: res.StatusCode, header: res.Header, body: b}, nil
}

// decodeError reads the server's error JSON: {"error", "code",
// "details", "request_id"}, each field when present.
func decodeError(res *http.Response, b []byte) *APIError {
	e := &APIError{Status: res.StatusCode, RequestID: res.Header.Get("X-Request-ID")}
	var body struct {
		Error     string         `json:"error"`
		Message   string         `json:"message"`
		Code      string         `json:"code"`
		Details   map[string]any `json:"details"`
		RequestID string         `json:"request_id"`
	}
	if json.Unmarshal(b, &body) == nil {
		e.Message, e.Code, e.Details = body.Error, body.Code, body.Details
		if e.Message == "" {
			e.Message = body.Message
		}
		if body.RequestID != "" {
			e.RequestID = body.RequestID
		}
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(b))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200]
		}
		if e.Message == "" {
			e.Message = http.StatusText(res.StatusCode)
		}
	}
	return e
}

// do sends r and decodes a JSON answer into out (when not nil).
func (c *Client) do(ctx context.Context, r request, out any) error {
	res, err := c.send(ctx, r)
	if err != nil {
		return err
	}
	if out == nil || len(res.body) == 0 {
		return nil
	}
	if err := json.Unmarshal(res.body, out); err != nil {
		return fmt.Errorf("client: %s %s: decode answer: %w", r.method, r.path, err)
	}
	return nil
}

// p joins escaped path segments: p("/v1/skills/", id, "/versions").
func p(parts ...string) string {
	var b strings.Builder
	for i, s := range parts {
		if i%2 == 1 {
			b.WriteString(url.PathEscape(s))
		} else {
			b.WriteString(s)
		}
	}
	return b.String()
}

// unwrap decodes {"key": value} answers.
func unwrap[T any](ctx context.Context, c *Client, r request, key string) (*T, error) {
	var m map[string]json.RawMessage
	if err := c.do(ctx, r, &m); err != nil {
		return nil, err
	}
	raw, ok := m[key]
	if !ok {
		return nil, fmt.Errorf("client: %s %s: answer has no %q", r.method, r.path, key)
	}
	v := new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, fmt.Errorf("client: %s %s: decode %s: %w", r.method, r.path, key, err)
	}
	return v, nil
}
