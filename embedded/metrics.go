package embedded

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The IMAP server's own metrics endpoint (IMAPOptions.MetricsAddr), in
// the Prometheus text format: what its worker pool is doing, so that
// `imapload observe` (or the demo) can say why it stopped keeping up, with
// no installation. Its metrics:
//
//	imapload_imapserver_workers                  gauge    the pool's slots (Workers)
//	imapload_imapserver_workers_busy             gauge    slots held now
//	imapload_imapserver_worker_busy_seconds_total counter time the slots were held, summed
//	imapload_imapserver_queue_length             gauge    commands waiting for a slot now
//	imapload_imapserver_connections              gauge    connections open now
//	imapload_imapserver_commands_total           counter  commands received
//	imapload_imapserver_logins_total             counter  successful LOGINs

// gateLoad counts what the worker pool does, cheaply on the hot path.
type gateLoad struct {
	queued, busy atomic.Int64
	busyNanos    atomic.Int64 // time slots were held, for commands done
}

// acquired moves a command from the queue to a slot and returns when.
func (l *gateLoad) acquired() time.Time {
	l.queued.Add(-1)
	l.busy.Add(1)
	return time.Now()
}

// released gives the slot taken at since back.
func (l *gateLoad) released(since time.Time) {
	l.busyNanos.Add(int64(time.Since(since)))
	l.busy.Add(-1)
}

// metricsServer serves /metrics until closed.
type metricsServer struct {
	srv    *http.Server
	ln     net.Listener
	served chan struct{}
}

// startMetrics serves the metrics on MetricsAddr, when one is given.
func (s *IMAP) startMetrics() error {
	if s.opts.MetricsAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", s.opts.MetricsAddr)
	if err != nil {
		return fmt.Errorf("embedded: metrics listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.registry(), promhttp.HandlerOpts{}))
	m := &metricsServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln, served: make(chan struct{})}
	go func() {
		defer close(m.served)
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger().Printf("embedded: metrics serve: %v", err)
		}
	}()
	s.metrics = m
	return nil
}

// stopMetrics closes the metrics listener and waits for it.
func (s *IMAP) stopMetrics() {
	if s.metrics != nil {
		_ = s.metrics.srv.Close()
		<-s.metrics.served
	}
}

// MetricsURL is the URL of the server's metrics endpoint
// ("http://127.0.0.1:port/metrics"), "" without IMAPOptions.MetricsAddr.
func (s *IMAP) MetricsURL() string {
	if s.metrics == nil {
		return ""
	}
	return "http://" + s.metrics.ln.Addr().String() + "/metrics"
}

// registry holds the server's metrics, read from its counters when scraped.
func (s *IMAP) registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	load, st := &s.gate.load, &s.stats
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "imapload_imapserver_" + name, Help: help}, f)
	}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "imapload_imapserver_" + name, Help: help}, f)
	}
	reg.MustRegister(
		gauge("workers", "Command slots of the worker pool (0: no pool).", func() float64 { return float64(s.opts.Workers) }),
		gauge("workers_busy", "Slots held by a command now.", func() float64 { return float64(load.busy.Load()) }),
		counter("worker_busy_seconds_total", "Time the slots were held by commands, summed over the slots.",
			func() float64 { return time.Duration(load.busyNanos.Load()).Seconds() }),
		gauge("queue_length", "Commands waiting for a free slot now.", func() float64 { return float64(load.queued.Load()) }),
		gauge("connections", "Client connections open now.", func() float64 { return float64(st.active.Load()) }),
		counter("commands_total", "Commands received.", func() float64 { return float64(st.commands.Load()) }),
		counter("logins_total", "Successful LOGINs.", func() float64 { return float64(st.loginsOK.Load()) }),
	)
	return reg
}
