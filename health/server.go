package health

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Paths the endpoint serves.
const (
	LivePath    = "/healthz"
	ReadyPath   = "/readyz"
	MetricsPath = "/metrics"
)

// shutdownGrace bounds how long Serve waits for scrapes in flight once its
// context ends.
const shutdownGrace = 5 * time.Second

// Options configure a Server. A nil *Options means the defaults.
type Options struct {
	// Ready reports why the process cannot do its job, nil when it can
	// (default: always ready). It is called on every /readyz request and
	// must be quick; its error text is shown to the caller, so it must hold
	// no secret.
	Ready func() error
	// Metrics is what /metrics exposes (default: a new Metrics, with the
	// runtime and process collectors only).
	Metrics *Metrics
}

func (o *Options) ready() func() error {
	if o == nil || o.Ready == nil {
		return func() error { return nil }
	}
	return o.Ready
}

func (o *Options) metrics() *Metrics {
	if o == nil || o.Metrics == nil {
		return NewMetrics(nil)
	}
	return o.Metrics
}

// Server is a bound health endpoint. Listen binds it; Serve serves it until
// its context ends.
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// Listen binds addr ("host:port"; port 0 picks a free one) and returns a
// Server that does not serve yet. It does I/O: an address in use is an
// error at once, wrapping ErrListen.
func Listen(addr string, o *Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w on %q: %w", ErrListen, addr, err)
	}
	srv := &http.Server{
		Handler:           Handler(o),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
	return &Server{ln: ln, srv: srv}, nil
}

// Addr is the address the server is bound to.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve serves until ctx ends, then shuts down: it stops accepting, gives
// requests in flight up to 5 s and returns nil. It returns an error only when
// serving itself fails. Serve closes the listener in every case.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("health: serving on %s: %w", s.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err := s.srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("health: shutting down %s: %w", s.Addr(), err)
	}
	return nil
}

// Serve binds addr and serves it until ctx ends (Listen, then Server.Serve).
func Serve(ctx context.Context, addr string, o *Options) error {
	s, err := Listen(addr, o)
	if err != nil {
		return err
	}
	return s.Serve(ctx)
}

// Handler returns the endpoint's handler (/healthz, /readyz, /metrics), for
// a caller that has a server of its own.
func Handler(o *Options) http.Handler {
	ready, m := o.ready(), o.metrics()
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+LivePath, func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET "+ReadyPath, func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.Handle("GET "+MetricsPath, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		Registry:      m.reg, // counts its own errors, in the same registry
		ErrorHandling: promhttp.ContinueOnError,
	}))
	return mux
}
