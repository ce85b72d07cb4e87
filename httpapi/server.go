// Package httpapi serves quire's HTTP/JSON API with gin. It is the only
// package that imports gin, and the only one that knows HTTP statuses.
package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/oauth"
	"github.com/quire/quire/pipeline"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Config holds what the API needs besides the use cases (New's app):
// internal/server.Build builds both, and every other door, in one place.
type Config struct {
	Logger *slog.Logger
	Limits quire.Limits
	// Ready reports whether dependencies are up, for /readyz.
	Ready func(ctx context.Context) error
	// Git serves the smart-HTTP git protocol under /git/, if set.
	Git quire.GitService
	// Pipeline authenticates, limits and records every request (the API's,
	// git's and MCP's); one without limits over the app when nil.
	Pipeline *pipeline.Pipeline
	// Metrics is the registry MetricsHandler serves; HTTP metrics are
	// added to it. A private registry is made when nil.
	Metrics *prometheus.Registry
	// TracerProvider, when set, traces every request (tracing.go), with
	// Propagator reading the caller's trace context from the headers.
	TracerProvider trace.TracerProvider
	Propagator     propagation.TextMapPropagator
	// SpansRecorded says TracerProvider may record spans (an exporter is
	// set). When false, requests still get a span context, for the trace
	// ids in logs and child spans, but skip building the attributes of
	// spans nobody records.
	SpansRecorded bool
	// TrustedProxies are the addresses or CIDRs of reverse proxies whose
	// X-Forwarded-For (or X-Real-IP) header names the client, for the
	// per-address login throttle and request limit. None by default: the
	// connection's address is the client's, whatever headers say.
	TrustedProxies []string
	// Idempotency remembers the answers of creating POSTs sent with an
	// Idempotency-Key (idempotency.go); the header is ignored when nil.
	Idempotency quire.IdempotencyStore
	// MCP, when set, is the Model Context Protocol handler served at /mcp
	// (mcp.go); UI, the browser UI served under /ui/ (ui.go).
	MCP, UI http.Handler
	// StreamHeartbeat is the event stream's idle comment interval,
	// StreamMax how long one stream lasts (events.go; 15 s and 1 h when 0).
	StreamHeartbeat, StreamMax time.Duration
	// OAuth, when set, is the authorization server of /mcp (oauth.go):
	// its endpoints are served, and its access tokens admitted on /mcp.
	OAuth *oauth.Server
	// AccessLog, when set, receives the access log's lines directly,
	// encoded as the Logger's JSON handler would (accesslog.go); it must
	// be the writer that handler writes to, safe for concurrent use.
	// Without it they go through the Logger.
	AccessLog io.Writer
}

// Server is quire's HTTP API.
type Server struct {
	app    *app.App
	log    *slog.Logger
	limits quire.Limits
	ready  func(ctx context.Context) error
	git    quire.GitService
	engine *gin.Engine
	// decoders are *renderDecoder for fastRender, reused: a render
	// body is smaller than a new decoder's buffers.
	decoders sync.Pool

	pipe    *pipeline.Pipeline
	metrics *prometheus.Registry
	http    *httpMetrics
	tracer  trace.TracerProvider
	// spansRecorded: see Config.SpansRecorded.
	spansRecorded bool
	prop          propagation.TextMapPropagator
	trusted       []string // Config.TrustedProxies
	mcp, ui       http.Handler
	// frames and lives keep the encoded answers of the hot path (encode.go).
	frames  encodedMemo[renderKey, renderFrame]
	lives   encodedMemo[liveKey, liveBody]
	idem    quire.IdempotencyStore
	streams streams // open event streams (events.go)
	oauth   *oauth.Server
	// accessOut: see Config.AccessLog; accessJSON, a JSON handler over
	// it for the lines appendJSON does not write.
	accessOut  io.Writer
	accessJSON slog.Handler
	lineBufs   sync.Pool // *[]byte the access lines are appended in
}

// New builds the API over the use cases a, and its routes.
func New(a *app.App, cfg Config) *Server {
	gin.SetMode(gin.ReleaseMode)
	s := &Server{
		app: a, log: cfg.Logger, limits: cfg.Limits, ready: cfg.Ready, git: cfg.Git, pipe: cfg.Pipeline,
		metrics: cfg.Metrics, tracer: cfg.TracerProvider, prop: cfg.Propagator,
		spansRecorded: cfg.SpansRecorded, trusted: cfg.TrustedProxies, idem: cfg.Idempotency,
		mcp: cfg.MCP, ui: cfg.UI, oauth: cfg.OAuth, accessOut: cfg.AccessLog,
	}
	s.decoders.New = func() any { return &renderDecoder{dec: jsontext.NewDecoder(bytes.NewBuffer(nil))} }
	if s.accessOut != nil {
		s.accessJSON = slog.NewJSONHandler(s.accessOut, nil)
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.prop == nil {
		s.prop = propagation.TraceContext{}
	}
	if s.limits == (quire.Limits{}) {
		s.limits = quire.DefaultLimits()
	}
	if s.metrics == nil {
		s.metrics = prometheus.NewRegistry()
	}
	if s.pipe == nil {
		s.pipe = pipeline.New(pipeline.Config{App: a, Logger: s.log})
	}
	s.streams.heartbeat = cmp.Or(cfg.StreamHeartbeat, heartbeat)
	s.streams.max = cmp.Or(cfg.StreamMax, streamMax)
	s.http = newHTTPMetrics(s.metrics)
	s.engine = s.routes()
	return s
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

func (s *Server) routes() *gin.Engine {
	r := gin.New()
	// gin trusts every proxy unless told otherwise: trust only those
	// configured, so c.ClientIP is the connection's address unless it
	// comes from one of them (CheckTrustedProxies has vetted the list).
	if err := r.SetTrustedProxies(s.trusted); err != nil {
		s.log.Error("trusted proxies ignored", "error", err.Error())
		r.SetTrustedProxies(nil)
	}
	// A 405 carries Allow (gin sets it) and an APIError. No redirect for a
	// trailing slash: gin's is a 301 with an HTML body, and /v1/skills/
	// is as unknown as any path, so it gets the same JSON 404.
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.ContextWithFallback = true
	r.Use(s.begin) // request.go
	if s.tracer != nil && s.spansRecorded {
		r.Use(s.traceRequests(), s.tagSpan)
	}
	r.Use(s.observe, s.recover)
	r.NoRoute(func(c *gin.Context) {
		s.fail(c, quire.Errorf(quire.ENOTFOUND, "no such route: %s %s", c.Request.Method, c.Request.URL.Path))
	})
	r.NoMethod(func(c *gin.Context) {
		s.fail(c, errMethodNotAllowed)
	})

	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	r.GET("/readyz", s.readyz)
	r.GET("/openapi.json", s.serveOpenAPI)
	if s.git != nil {
		r.Any("/git/*path", s.serveGit)
	}

	v1 := r.Group("/v1")
	auth := []gin.HandlerFunc{s.authenticate}
	if s.pipe.Limited() {
		v1.POST("/auth/login", s.limitAddress, s.login)
	} else {
		v1.POST("/auth/login", s.login)
	}

	if s.mcp != nil {
		mcpAuth := append([]gin.HandlerFunc{s.authenticateMCP}, auth[1:]...)
		s.mcpRoutes(r, mcpAuth, s.mcp)
		s.oauthRoutes(r)
	}
	a := v1.Group("", auth...)
	s.authRoutes(a)
	s.userRoutes(a)
	s.keyRoutes(a)
	s.projectRoutes(a)
	for _, kind := range []quire.Kind{quire.KindSkill, quire.KindPrompt} {
		s.assetCollectionRoutes(a, kind)
		s.mountAsset(a, kind)
	}
	a.POST("/cache/purge", s.purgeAllCache)
	s.activityRoutes(a)
	s.discoveryRoutes(r, a, auth)
	s.webhookRoutes(a)
	if s.ui != nil {
		s.mountUI(r, s.ui)
	}
	return r
}

// mountAsset serves one skill's or prompt's routes at two addresses:
// /v1/skills/{id} (an id, or a slug unambiguous among the projects the
// caller sees) and /v1/projects/{project}/skills/{slug} (project and
// asset each by id or slug). Add a sub-resource of skills or prompts to
// assetTree and it is served, and documented (openapi.go), at both.
func (s *Server) mountAsset(g *gin.RouterGroup, kind quire.Kind) {
	s.assetTree(g.Group("/"+kind.Plural()+"/:id", s.openAsset(kind)), kind)
	s.assetTree(g.Group("/projects/:projectID/"+kind.Plural()+"/:slug", s.scopedAsset(kind)), kind)
}

// assetTree registers everything under one asset, relative to it; c.Param("id")
// is the asset (an id, or a slug when global), whichever the address.
func (s *Server) assetTree(t *gin.RouterGroup, kind quire.Kind) {
	s.assetRoutes(t)  // assets.go
	s.reviewRoutes(t) // reviews.go
	s.labelRoutes(t)  // labels.go
	switch kind {
	case quire.KindSkill:
		s.skillRoutes(t)   // skills.go
		s.archiveRoutes(t) // discovery.go
	case quire.KindPrompt:
		s.promptRoutes(t) // prompts.go
		s.usageRoutes(t)  // usage.go
	}
}

func (s *Server) readyz(c *gin.Context) {
	if s.ready != nil {
		if err := s.ready(c.Request.Context()); err != nil {
			// Not logged: probes call often, and Redis or the disk say
			// why elsewhere.
			answer(c, &quire.Error{Code: quire.EUNAVAILABLE, Message: err.Error()}, quire.EUNAVAILABLE)
			return
		}
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready"})
}

// newRequestID is 24 random hex digits. An id names a request, it
// guards nothing: math/rand/v2's generator (ChaCha8, seeded by the
// runtime from the OS) is as unpredictable in practice and costs no
// system call or locking, unlike crypto/rand on the hot path.
func newRequestID() string {
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint32(b[8:], rand.Uint32())
	var out [24]byte
	hex.Encode(out[:], b[:])
	return string(out[:])
}

// headerValue is the first value of the request header key, given in
// its canonical form, as net/http's server stores it: Header.Get would
// make the name canonical again on every call, and the hot path reads
// five headers per request.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// observe counts and times every request (metrics.go) and writes its
// access log line: one middleware, so both read one clock.
func (s *Server) observe(c *gin.Context) {
	start := time.Now()
	s.http.inFlight.Inc()
	defer s.http.inFlight.Dec()
	c.Next()
	end := time.Now()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	s.measured(c, route, end.Sub(start))
	s.accessLog(c, route, end, end.Sub(start))
}

// recover turns a panic into a 500 APIError, logged without a stack in the
// response.
func (s *Server) recover(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic", "request_id", requestIDOf(c), "panic", v)
			if !c.Writer.Written() {
				answer(c, errPanic, quire.EINTERNAL) // logged just above
			}
		}
	}()
	c.Next()
}

// errMethodNotAllowed answers a route asked with a method it has not;
// errPanic, a request whose handler panicked.
var (
	errMethodNotAllowed = quire.Errorf(quire.EMETHOD, "method not allowed")
	errPanic            = quire.Errorf(quire.EINTERNAL, "internal error")
)
