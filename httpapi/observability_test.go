package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// fakeCache stands in for the prompt cache until it lands.
type fakeCache struct{}

func (fakeCache) CacheStats() []quire.CacheTierStats {
	return []quire.CacheTierStats{{Tier: "memory", Hits: 7, Misses: 2}, {Tier: "redis", Hits: 3, Misses: 1}}
}

// scrape fetches /metrics and parses it with Prometheus's text parser.
func scrape(t *testing.T, e *testenv.Env) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	res := e.Scrape()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(res.Body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, res.Body)
	}
	return fams, string(res.Body)
}

// series finds the metric of family name whose labels include want.
func series(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric family %s", name)
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		return m
	}
	t.Fatalf("no %s series with labels %v", name, want)
	return nil
}

func TestMetrics(t *testing.T) {
	e := testenv.NewWith(t, testenv.Options{CacheStats: fakeCache{}})
	pid := e.CreateProject(e.Admin, "demo")
	sid := e.CreateSkill(e.Admin, pid, "pdf")
	e.Must(200, "GET", "/v1/skills/"+sid, e.Admin, nil)
	e.Must(200, "GET", "/v1/skills/pdf", e.Admin, nil)
	e.Must(201, "POST", "/v1/skills/pdf/versions", e.Admin, nil)
	e.Must(200, "GET", "/v1/skills/pdf/versions", e.Admin, nil)
	e.Must(404, "GET", "/no/such/"+sid, "", nil)
	e.Must(401, "GET", "/v1/projects", "", nil)
	_, member := e.CreateUser("m@example.com")

	fams, text := scrape(t, e)

	// Requests by route template: the two GETs of one skill share a series
	// and no raw id appears in any label.
	if got := series(t, fams, "quire_http_requests_total", map[string]string{"route": "/v1/skills/:id", "method": "GET", "status": "200"}).Counter.GetValue(); got != 2 {
		t.Errorf("GET /v1/skills/:id 200 = %v, want 2", got)
	}
	if got := series(t, fams, "quire_http_requests_total", map[string]string{"route": "unmatched", "method": "GET", "status": "404"}).Counter.GetValue(); got != 1 {
		t.Errorf("unmatched 404 = %v, want 1", got)
	}
	if got := series(t, fams, "quire_http_requests_total", map[string]string{"route": "/v1/projects", "method": "GET", "status": "401"}).Counter.GetValue(); got != 1 {
		t.Errorf("GET /v1/projects 401 = %v, want 1", got)
	}
	h := series(t, fams, "quire_http_request_duration_seconds", map[string]string{"route": "/v1/skills/:id/versions", "method": "POST", "status": "201"}).Histogram
	if h.GetSampleCount() != 1 || h.GetSampleSum() <= 0 {
		t.Errorf("duration histogram: count %d sum %v", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, id := range []string{sid, pid} {
		if strings.Contains(text, id) {
			t.Errorf("/metrics holds the raw id %s", id)
		}
	}
	series(t, fams, "quire_http_requests_in_flight", nil)

	// Cache hits and misses by tier, read from the CacheStats source.
	if got := series(t, fams, "quire_cache_hits_total", map[string]string{"tier": "memory"}).Counter.GetValue(); got != 7 {
		t.Errorf("memory hits = %v", got)
	}
	if got := series(t, fams, "quire_cache_misses_total", map[string]string{"tier": "redis"}).Counter.GetValue(); got != 1 {
		t.Errorf("redis misses = %v", got)
	}

	// Git: the draft and the metadata writes were commits, the listings reads.
	if n := series(t, fams, "quire_git_operation_duration_seconds", map[string]string{"op": "commit", "result": "ok"}).Histogram.GetSampleCount(); n < 4 {
		t.Errorf("git commits observed = %d, want >= 4 (user, project, skill, draft)", n)
	}
	if n := series(t, fams, "quire_git_operation_duration_seconds", map[string]string{"op": "read", "result": "ok"}).Histogram.GetSampleCount(); n < 1 {
		t.Errorf("git reads observed = %d", n)
	}
	series(t, fams, "quire_git_operation_duration_seconds", map[string]string{"op": "clone"})
	series(t, fams, "quire_git_operation_duration_seconds", map[string]string{"op": "push"})

	// Redis: session reads were timed.
	if n := series(t, fams, "quire_redis_command_duration_seconds", map[string]string{"command": "get"}).Histogram.GetSampleCount(); n < 1 {
		t.Errorf("redis GETs observed = %d", n)
	}

	// Sessions: the admin's and the member's.
	if got := series(t, fams, "quire_sessions_active", nil).Gauge.GetValue(); got != 2 {
		t.Errorf("active sessions = %v, want 2", got)
	}
	e.Must(204, "DELETE", "/v1/auth/session", member, nil)
	fams, _ = scrape(t, e)
	if got := series(t, fams, "quire_sessions_active", nil).Gauge.GetValue(); got != 1 {
		t.Errorf("active sessions after logout = %v, want 1", got)
	}

	// Build info, Go runtime and process collectors.
	if got := series(t, fams, "quire_build_info", map[string]string{"version": "test"}).Gauge.GetValue(); got != 1 {
		t.Errorf("build info = %v", got)
	}
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_resident_memory_bytes", "process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("no %s", name)
		}
	}
}

// logLines decodes the captured JSON log.
func logLines(t *testing.T, e *testenv.Env) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(e.Log.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func TestRequestLogLine(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	e := testenv.NewWith(t, testenv.Options{Spans: spans})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	res := e.Must(200, "GET", "/v1/auth/me", e.Admin, nil,
		"X-Request-ID: req-from-client-1", "traceparent: 00-"+traceID+"-00f067aa0ba902b7-01")
	if got := res.Header.Get("X-Request-ID"); got != "req-from-client-1" {
		t.Fatalf("X-Request-ID echoed as %q", got)
	}
	gen := e.Must(200, "GET", "/healthz", "", nil).Header.Get("X-Request-ID")
	if len(gen) < 16 {
		t.Fatalf("generated request id %q", gen)
	}
	var line map[string]any
	for _, l := range logLines(t, e) {
		if l["request_id"] == "req-from-client-1" {
			line = l
		}
	}
	if line == nil {
		t.Fatalf("no log line for the request:\n%s", e.Log.String())
	}
	want := map[string]any{
		"msg": "request", "level": "INFO", "method": "GET", "route": "/v1/auth/me", "status": float64(200),
		"principal_kind": "session", "trace_id": traceID,
	}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("log %s = %v, want %v", k, line[k], v)
		}
	}
	for _, k := range []string{"duration", "bytes", "principal_id", "user_id", "span_id", "time"} {
		if _, ok := line[k]; !ok {
			t.Errorf("log line has no %s: %v", k, line)
		}
	}
}

func TestTraces(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	e := testenv.NewWith(t, testenv.Options{Spans: spans})
	pid := e.CreateProject(e.Admin, "demo")
	e.CreateSkill(e.Admin, pid, "pdf")
	spans.Reset()

	e.Must(201, "POST", "/v1/skills/pdf/versions", e.Admin, nil, "X-Request-ID: trace-me")
	var server tracetest.SpanStub
	for _, s := range spans.GetSpans() {
		if s.Name == "POST /v1/skills/:id/versions" {
			server = s
		}
	}
	if !server.SpanContext.IsValid() {
		var names []string
		for _, s := range spans.GetSpans() {
			names = append(names, s.Name)
		}
		t.Fatalf("no server span for the request; spans: %v", names)
	}
	attrs := map[string]string{}
	for _, a := range server.Attributes {
		attrs[string(a.Key)] = a.Value.String()
	}
	if attrs["quire.request_id"] != "trace-me" || attrs["http.route"] != "/v1/skills/:id/versions" {
		t.Errorf("server span attributes: %v", attrs)
	}

	children := map[string]tracetest.SpanStub{}
	for _, s := range spans.GetSpans() {
		if s.SpanContext.TraceID() == server.SpanContext.TraceID() && s.Parent.SpanID() == server.SpanContext.SpanID() {
			children[s.Name] = s
		}
	}
	if _, ok := children["git CreateVersion"]; !ok {
		t.Errorf("no git span under the request; children: %v", keys(children))
	}
	var redisSpan *tracetest.SpanStub
	for name, s := range children {
		if strings.HasPrefix(name, "get") || strings.HasPrefix(name, "redis") {
			redisSpan = &s
		}
	}
	if redisSpan == nil {
		t.Fatalf("no Redis span (the session lookup) under the request; children: %v", keys(children))
	}
	for _, a := range redisSpan.Attributes {
		if a.Key == "db.statement" || a.Key == "db.query.text" {
			t.Errorf("Redis span carries the statement %q", a.Value.String())
		}
	}

	// The trace id of the request's log line is the span's.
	for _, l := range logLines(t, e) {
		if l["request_id"] == "trace-me" && l["trace_id"] != server.SpanContext.TraceID().String() {
			t.Errorf("log trace_id %v, span %s", l["trace_id"], server.SpanContext.TraceID())
		}
	}

	// Probes and scrapes are not traced.
	spans.Reset()
	e.Must(200, "GET", "/healthz", "", nil)
	e.Scrape()
	if n := len(spans.GetSpans()); n != 0 {
		t.Errorf("%d spans for /healthz and a scrape", n)
	}
	// Nor is work outside a request.
	if err := e.Usage.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(spans.GetSpans()); n != 0 {
		t.Errorf("%d spans for a background flush", n)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestOperationsDocs keeps docs/operations.md and the Grafana dashboard
// in step with /metrics: every quire metric served is documented, and the
// dashboard queries only documented metrics.
func TestOperationsDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	e := testenv.NewWith(t, testenv.Options{CacheStats: fakeCache{}})
	e.CreateProject(e.Admin, "demo")
	if err := e.Usage.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	fams, _ := scrape(t, e)
	for name := range fams {
		if strings.HasPrefix(name, "quire_") && !bytes.Contains(doc, []byte("`"+name+"`")) {
			t.Errorf("metric %s is not in docs/operations.md", name)
		}
	}

	b, err := os.ReadFile("../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	metric := regexp.MustCompile(`quire_[a-z_]+`)
	n := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range metric.FindAllString(tg.Expr, -1) {
				n++
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_count"), "_sum")
				if !bytes.Contains(doc, []byte("`"+base+"`")) {
					t.Errorf("dashboard panel %q queries undocumented %s", p.Title, m)
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("dashboard queries only %d quire metrics", n)
	}
}

// TestLogTraceIDsWithoutExporter: with no span exporter (the default)
// requests still continue the caller's trace, or start one, so log lines
// carry trace ids to join with the caller's traces.
func TestLogTraceIDsWithoutExporter(t *testing.T) {
	e := testenv.New(t)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	e.Must(200, "GET", "/v1/auth/me", e.Admin, nil, "X-Request-ID: with-parent", "traceparent: 00-"+traceID+"-00f067aa0ba902b7-01")
	e.Must(200, "GET", "/v1/auth/me", e.Admin, nil, "X-Request-ID: no-parent")
	e.Must(200, "GET", "/healthz", "", nil, "X-Request-ID: probe")
	got := map[string]map[string]any{}
	for _, l := range logLines(t, e) {
		if id, ok := l["request_id"].(string); ok {
			got[id] = l
		}
	}
	if l := got["with-parent"]; l["trace_id"] != traceID || l["span_id"] == nil || l["span_id"] == "00f067aa0ba902b7" {
		t.Errorf("request with a traceparent logged trace_id %v span_id %v, want %s and a span of its own", l["trace_id"], l["span_id"], traceID)
	}
	if l := got["no-parent"]; l["trace_id"] == nil || l["trace_id"] == traceID {
		t.Errorf("request without a traceparent logged trace_id %v, want a new one", l["trace_id"])
	}
	if l := got["probe"]; l == nil || l["trace_id"] != nil {
		t.Errorf("probe log line %v: want one, without a trace id", l)
	}
}
