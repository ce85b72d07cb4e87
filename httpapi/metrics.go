package httpapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/quire/quire/telemetry"
)

// httpMetrics are the request metrics, labelled by route template (never a
// raw path, so ids do not explode the series), method and status.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
	handler  http.Handler
	// series keeps each label set's counter and histogram, so a request
	// does not hash its labels into both vectors again (a few hundred
	// label sets: routes × methods × statuses).
	series sync.Map // seriesKey -> *series
}

type seriesKey struct {
	route, method string
	status        int
}

type series struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

func newHTTPMetrics(reg *prometheus.Registry) *httpMetrics {
	labels := []string{"route", "method", "status"}
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "quire", Name: "http_requests_total",
			Help: "HTTP requests served, by route template, method and status.",
		}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "quire", Name: "http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by route template, method and status.",
			Buckets: telemetry.DurationBuckets,
		}, labels),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "quire", Name: "http_requests_in_flight",
			Help: "HTTP requests being served now.",
		}),
	}
	reg.MustRegister(m.requests, m.duration, m.inFlight)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		// A collector that fails (Redis down) leaves its series out; the
		// rest of the scrape still answers.
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	})
	return m
}

// measured counts and times a request (observe calls it).
func (s *Server) measured(c *gin.Context, route string, took time.Duration) {
	se := s.http.seriesOf(route, methodLabel(c.Request.Method), c.Writer.Status())
	se.requests.Inc()
	se.duration.Observe(took.Seconds())
}

// seriesOf returns the counter and histogram of one label set.
func (m *httpMetrics) seriesOf(route, method string, status int) *series {
	k := seriesKey{route, method, status}
	if se, ok := m.series.Load(k); ok {
		return se.(*series)
	}
	// Values in the order of the vectors' labels: no map per request.
	code := strconv.Itoa(status)
	se, _ := m.series.LoadOrStore(k, &series{
		requests: m.requests.WithLabelValues(route, method, code),
		duration: m.duration.WithLabelValues(route, method, code),
	})
	return se.(*series)
}

// methodLabel keeps the method label to the standard methods.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}

// MetricsHandler answers the Prometheus exposition of the registry. The
// API does not route /metrics: the metrics describe every route's traffic
// and the deployment, so they are served on a listener of their own
// (quire serve --metrics-addr), and GET /metrics on the API is 404.
func (s *Server) MetricsHandler() http.Handler { return s.http.handler }
