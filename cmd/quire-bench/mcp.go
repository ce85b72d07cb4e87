package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quire/quire/internal/bench"
)

// mcpSection measures MCP's prompts/get of a cached live prompt against
// the REST render of the same prompt, on the same server in the same run
// (the goal: within 1.5x of REST): p50 and p99 over sequential calls on
// one session, the two interleaved call by call on one keep-alive
// connection each, then calls per second with 32 sessions (REST: 32
// connections) at once. Both are sent by the same bare net/http client,
// an MCP call as the JSON-RPC request a host POSTs on its session, so
// the figures compare the servers' work and not two clients'. MCP's ping
// on the same session is the SDK's own floor: the transport, JSON-RPC
// and session, with no quire work behind it.
func mcpSection(ctx context.Context, c *config, r *report) error {
	q, err := bench.Start(ctx, bench.Options{RedisURL: c.redis})
	if err != nil {
		return err
	}
	defer q.Close()
	const name = "bench/greeting"
	rest := bench.Request{Method: "POST", URL: q.URL + "/v1/prompts/" + q.PromptID + "/render", Token: q.Key, Body: bench.RenderBody}
	getBody := []byte(`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"` + name + `","arguments":{"name":"Ann","topic":"caching"}}}`)
	pingBody := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	open := func() (map[string]string, func(), error) {
		client := sdk.NewClient(&sdk.Implementation{Name: "quire-bench", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
			Endpoint: q.URL + "/mcp", HTTPClient: &http.Client{Transport: tokenRT{q.Key}}, MaxRetries: -1,
		}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			return nil, nil, fmt.Errorf("mcp session: %w", err)
		}
		return map[string]string{
			"Accept": "application/json, text/event-stream", "Mcp-Session-Id": cs.ID(), "MCP-Protocol-Version": "2025-11-25",
		}, func() { cs.Close() }, nil
	}
	header, done, err := open()
	if err != nil {
		return err
	}
	defer done()
	get := bench.Request{Method: "POST", URL: q.URL + "/mcp", Token: q.Key, Body: getBody, Header: header}
	ping := get
	ping.Body = pingBody
	// The same call in the sessionless protocol (2026-07-28), as the
	// SDK's client sends it: no session, the version and the client in
	// every request's _meta.
	stateless := bench.Request{Method: "POST", URL: q.URL + "/mcp", Token: q.Key, Header: map[string]string{
		"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "prompts/get", "Mcp-Name": name,
	}, Body: []byte(`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"quire-bench","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},` +
		`"name":"` + name + `","arguments":{"name":"Ann","topic":"caching"}}}`)}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	call := func(req bench.Request, want string) (time.Duration, error) {
		t0 := time.Now()
		status, body, err := req.Do(client)
		d := time.Since(t0)
		if err == nil && (status != http.StatusOK || !strings.Contains(string(body), want)) {
			err = fmt.Errorf("%s: %d %.300s", req.URL, status, body)
		}
		return d, err
	}
	n := c.mcpCalls
	var tRest, tGet, tPing, tStateless []time.Duration
	for i := range n + n/10 { // the first tenth warms caches and connections
		steps := []func() error{
			func() error { d, err := call(rest, "Hello Ann"); tRest = append(tRest, d); return err },
			func() error { d, err := call(get, "Hello Ann"); tGet = append(tGet, d); return err },
			func() error { d, err := call(ping, `"result"`); tPing = append(tPing, d); return err },
			func() error { d, err := call(stateless, "Hello Ann"); tStateless = append(tStateless, d); return err },
		}
		for j := range steps {
			if err := steps[(i+j)%len(steps)](); err != nil {
				return err
			}
		}
	}
	pct := func(ds []time.Duration, p int) time.Duration {
		s := slices.Clone(ds[n/10:])
		slices.Sort(s)
		return s[min(len(s)-1, len(s)*p/100)]
	}

	// 32 at once: each MCP worker on a session of its own.
	const conns = 32
	sessions := make([]map[string]string, conns)
	for i := range sessions {
		h, done, err := open()
		if err != nil {
			return err
		}
		defer done()
		sessions[i] = h
	}
	onSession := func(req bench.Request) func(int) bench.Request {
		return func(w int) bench.Request {
			req.Header = sessions[w]
			return req
		}
	}
	var restRuns, getRuns, pingRuns []bench.Result
	for range c.rounds {
		restRuns = append(restRuns, bench.Run(conns, c.dur, c.warm, func(int) bench.Request { return rest }))
		getRuns = append(getRuns, bench.Run(conns, c.dur, c.warm, onSession(get)))
		pingRuns = append(pingRuns, bench.Run(conns, c.dur, c.warm, onSession(ping)))
	}
	restRate, getRate, pingRate := bench.Median(restRuns), bench.Median(getRuns), bench.Median(pingRuns)
	if restRate.Errors > 0 || getRate.Errors > 0 || pingRate.Errors > 0 {
		return fmt.Errorf("32 at once: %d REST, %d prompts/get and %d ping calls failed", restRate.Errors, getRate.Errors, pingRate.Errors)
	}

	r.section("MCP", fmt.Sprintf(`
MCP's prompts/get of a cached live prompt (%s, two variables, a read
API key) against POST /v1/prompts/{id}/render of the same prompt with
the same variables, on one server in this process. One session
(protocol 2025-11-25, answers as plain JSON): %d calls of each, of
ping, and of prompts/get in the sessionless protocol (2026-07-28, the
SDK client's default: no session, a server session made per request),
interleaved call by call, each kind on its own keep-alive connection. Then %d sessions (REST: connections) at once, %s per run,
%d rounds, medians. Every call is sent by the same bare net/http client:
an MCP call is the JSON-RPC request a host POSTs on its session. ping is
the SDK's floor: its transport, JSON-RPC and session with no quire work.
Goal: prompts/get within 1.5x of REST (p50, and calls/s at 32 sessions).`,
		name, n, conns, c.dur, c.rounds))
	g50, g99, r50, r99, p50, s50 := pct(tGet, 50), pct(tGet, 99), pct(tRest, 50), pct(tRest, 99), pct(tPing, 50), pct(tStateless, 50)
	rateRatio := getRate.RPS / restRate.RPS
	r.table("REST render", []row{
		{figure: "prompts/get, one session: p50", quire: ms(g50), baseline: ms(r50), ratio: float64(g50) / float64(r50), goal: "≤ 1.50x", pass: float64(g50) <= 1.5*float64(r50)},
		{figure: "prompts/get, one session: p99", quire: ms(g99), baseline: ms(r99), ratio: float64(g99) / float64(r99)},
		{figure: "ping (the SDK's floor), one session: p50", quire: ms(p50), baseline: ms(r50), ratio: float64(p50) / float64(r50)},
		{figure: "prompts/get, sessionless (2026-07-28): p50", quire: ms(s50), baseline: ms(r50), ratio: float64(s50) / float64(r50)},
		{figure: fmt.Sprintf("prompts/get, %d sessions: calls/s", conns), quire: fmt.Sprintf("%.0f", getRate.RPS), baseline: fmt.Sprintf("%.0f", restRate.RPS), ratio: rateRatio, goal: "≥ 0.67x", pass: rateRatio >= 1/1.5},
		{figure: fmt.Sprintf("prompts/get, %d sessions: p99", conns), quire: ms(getRate.P99), baseline: ms(restRate.P99), ratio: float64(getRate.P99) / float64(restRate.P99)},
		{figure: fmt.Sprintf("ping (the SDK's floor), %d sessions: calls/s", conns), quire: fmt.Sprintf("%.0f", pingRate.RPS), baseline: fmt.Sprintf("%.0f", restRate.RPS), ratio: pingRate.RPS / restRate.RPS},
	})
	return nil
}

// tokenRT sends the bench's read key with every request of the SDK's
// client.
type tokenRT struct{ token string }

func (t tokenRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return http.DefaultTransport.RoundTrip(r)
}
