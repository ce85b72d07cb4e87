package server

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quire/quire/internal/netguard"
)

// serve opens the API listener on Config.Addr and serves the API there.
func (s *Server) serve() error {
	if err := s.listen(); err != nil {
		return err
	}
	s.HTTP = &http.Server{
		Handler:        s.API,
		MaxHeaderBytes: 64 << 10,
		// Accept errors and the like go to the JSON log, not to stderr.
		ErrorLog: slog.NewLogLogger(s.Log.Handler(), slog.LevelWarn),
	}
	s.cfg.Timeouts.Apply(s.HTTP)
	s.served = make(chan error, 1)
	go func() { s.served <- s.HTTP.Serve(s.ln) }()
	return nil
}

// listen opens the API listener, capped so that slow or greedy clients
// cannot take every file descriptor (netguard.Listener). The open-file
// soft limit is raised to the hard limit first, and the total cap, unless
// set, is sized from it.
func (s *Server) listen() error {
	c := s.cfg
	soft, hard, err := netguard.RaiseFDLimit()
	if err != nil {
		s.Log.Warn("could not raise the open-file limit", "soft", soft, "hard", hard, "error", err.Error())
	}
	limits := netguard.Limits{Max: c.MaxConns, PerAddr: c.MaxConnsPerIP, RetryAfter: time.Second}
	if limits.Max == 0 {
		limits.Max = netguard.DefaultMaxConns(soft)
	}
	if soft > 0 && uint64(limits.Max)+uint64(netguard.Reserve(soft)) > soft {
		s.Log.Warn("--max-conns leaves few open files for repositories and Redis",
			"max_conns", limits.Max, "open_file_limit", soft, "reserve", netguard.Reserve(soft))
	}
	s.Log.Info("connection limits", "open_file_limit", soft, "open_file_hard_limit", hard,
		"max_conns", limits.Max, "max_conns_per_ip", limits.PerAddr,
		"read_header_timeout", c.Timeouts.ReadHeader.String(), "body_timeout", c.Timeouts.Body.String(),
		"body_min_rate", c.Timeouts.BodyMinRate, "write_timeout", c.Timeouts.Write.String(),
		"idle_timeout", c.Timeouts.Idle.String())

	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return err
	}
	gl := netguard.NewListener(ln, limits)
	var lastWarn atomic.Int64
	gl.OnRefuse = func(reason string, addr netip.Addr) {
		// At most one line every 10s: a flood must not flood the log.
		now, last := time.Now().UnixNano(), lastWarn.Load()
		if now-last >= int64(10*time.Second) && lastWarn.CompareAndSwap(last, now) {
			total, byAddr := gl.Refused()
			s.Log.Warn("connection refused: over the cap", "reason", reason, "client", addr.String(),
				"refused_total_cap", total, "refused_address_cap", byAddr)
		}
	}
	if err := registerConnMetrics(s.Metrics, gl); err != nil {
		ln.Close()
		return err
	}
	s.ln = gl
	return nil
}

// registerConnMetrics reports the listener's open and refused connections.
func registerConnMetrics(reg *prometheus.Registry, l *netguard.Listener) error {
	limits := l.Limits()
	for _, c := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "quire", Name: "connections_open",
			Help: "Client connections open on the API listener.",
		}, func() float64 { return float64(l.Open()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "quire", Name: "connections_max",
			Help: "Most client connections the API listener keeps open (--max-conns).",
		}, func() float64 { return float64(limits.Max) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "quire", Name: "connections_refused_total",
			Help:        "Connections answered 503 and closed for being over a cap, by cap (total, address).",
			ConstLabels: prometheus.Labels{"cap": "total"},
		}, func() float64 { t, _ := l.Refused(); return float64(t) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "quire", Name: "connections_refused_total",
			Help:        "Connections answered 503 and closed for being over a cap, by cap (total, address).",
			ConstLabels: prometheus.Labels{"cap": "address"},
		}, func() float64 { _, a := l.Refused(); return float64(a) }),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// serveMetrics serves the Prometheus exposition at /metrics on addr, a
// listener of its own. Unlike the debug listener it may be any address:
// Prometheus scrapes from another host. The metrics carry no secrets
// (route templates, counts, durations), but they describe the service:
// bind it to a private interface or firewall it.
func (s *Server) serveMetrics(addr string, h http.Handler) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{
		Addr: ln.Addr().String(), Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute,
		ErrorLog: slog.NewLogLogger(s.Log.Handler(), slog.LevelWarn),
	}
	go srv.Serve(ln)
	return srv, nil
}

// serveDebug serves the pprof handlers on addr, which must be a loopback
// address: profiles expose memory contents and cost CPU, so they are never
// reachable from the network nor mixed into the API's mux.
func serveDebug(addr string) (*http.Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("debug address: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("debug address %q is not a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("debug listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: ln.Addr().String(), Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return srv, nil
}
