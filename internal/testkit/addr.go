package testkit

import (
	"net"
	"testing"
)

// ClosedAddr returns a 127.0.0.1 address nothing listens on: a port the
// kernel gave out a moment ago and that was closed again at once.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("close %s: %v", addr, err)
	}
	return addr
}
