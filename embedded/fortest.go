package embedded

import (
	"testing"

	"github.com/nats-io/nats.go"
)

// NATSForTest starts a NATS server with JetStream, its store in tb's temporary
// directory, and connects a client to it; tb's cleanup closes the client, then
// shuts the server down (httptest style). It does I/O and fails tb on error.
func NATSForTest(tb testing.TB) (*NATS, *nats.Conn) {
	tb.Helper()
	ns, err := StartNATS(&NATSOptions{StoreDir: tb.TempDir()})
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
