// Package natstest starts the embedded NATS server for tests, the way
// net/http/httptest starts an HTTP server. It lives apart from testkit so that
// testkit stays light (no NATS server linked into its users) and importable
// from embedded's own tests, and so that no package of the release binary
// links package testing (internal/arch checks both).
package natstest

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/imapload/imapload/embedded"
)

// Start starts a NATS server with JetStream, its store in tb's temporary
// directory, and connects a client to it; tb's cleanup closes the client,
// then shuts the server down. It does I/O and fails tb on error.
func Start(tb testing.TB) (*embedded.NATS, *nats.Conn) {
	tb.Helper()
	ns, err := embedded.StartNATS(&embedded.NATSOptions{StoreDir: tb.TempDir()})
	if err != nil {
		tb.Fatalf("embedded.StartNATS() error = %v", err)
	}
	tb.Cleanup(ns.Shutdown)
	nc, err := ns.Connect()
	if err != nil {
		tb.Fatalf("embedded: Connect() error = %v", err)
	}
	tb.Cleanup(nc.Close)
	return ns, nc
}
