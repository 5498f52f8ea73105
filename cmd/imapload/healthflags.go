package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/imapload/imapload/health"
	"github.com/nats-io/nats.go"
	"github.com/spf13/pflag"
)

// healthConfig is --health-listen, which every long-running command has:
// /healthz, /readyz and /metrics for an orchestrator's probes and Prometheus.
type healthConfig struct {
	Listen string // --health-listen: host:port of the endpoint, "" for none
}

func (h *healthConfig) add(fs *pflag.FlagSet) {
	fs.StringVar(&h.Listen, "health-listen", "", "serve /healthz, /readyz and /metrics (Prometheus) on this host:port, e.g. :8080 (default: none)")
}

// check returns the error of --health-listen, nil for a good value.
func (h *healthConfig) check() error {
	if h.Listen == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(h.Listen); err != nil {
		return fmt.Errorf("--health-listen %q: want host:port, e.g. :8080", h.Listen)
	}
	return nil
}

// start binds the endpoint, so that an address in use fails the command at
// once, and serves it until ctx ends; stop ends it and waits. Without
// --health-listen it does nothing.
func (h *healthConfig) start(ctx context.Context, o *health.Options, log *slog.Logger) (stop func(), err error) {
	if h.Listen == "" {
		return func() {}, nil
	}
	s, err := health.Listen(h.Listen, o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := s.Serve(ctx); err != nil {
			log.Warn("health endpoint stopped", "err", err)
		}
	})
	log.Info("health endpoint listening", "addr", s.Addr().String())
	return func() { cancel(); wg.Wait() }, nil
}

// natsReady is the readiness of a role: its NATS connection is up.
func natsReady(nc *nats.Conn) func() error {
	return func() error {
		if s := nc.Status(); s != nats.CONNECTED {
			return fmt.Errorf("NATS connection %s", s)
		}
		return nil
	}
}
