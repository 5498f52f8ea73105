package bus_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/embedded"
)

// TestEnsureWaitsForClusterLeader starts one node of a three-node cluster
// and asks it for imapload's streams with three replicas: with no meta
// leader yet, JetStream answers nothing. The call must wait, not fail, and
// succeed once the other two nodes are up (as roles started beside a
// cluster in compose or Kubernetes do).
func TestEnsureWaitsForClusterLeader(t *testing.T) {
	t.Parallel()
	var routes, listen []string
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		listen = append(listen, ln.Addr().String())
		routes = append(routes, "nats-route://"+ln.Addr().String())
		ln.Close()
	}
	start := func(i int) *embedded.NATS {
		n, err := embedded.StartNATS(&embedded.NATSOptions{StoreDir: t.TempDir(), Name: fmt.Sprintf("n%d", i+1),
			ClusterName: "setup", ClusterListen: listen[i], Routes: []string{strings.Join(routes, ",")}})
		if err != nil {
			t.Fatalf("StartNATS(n%d) error = %v", i+1, err)
		}
		t.Cleanup(n.Shutdown)
		return n
	}
	first := start(0)
	nc, err := nats.Connect(first.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := bus.EnsureSamples(context.Background(), js, &bus.Options{Replicas: 3})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("EnsureSamples() returned %v with one node of three: want it to wait for the cluster", err)
	case <-time.After(2 * time.Second):
	}
	start(1)
	start(2)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("EnsureSamples() error = %v once the cluster formed", err)
		}
	case <-time.After(90 * time.Second): // a hang guard: setupWait is a minute
		t.Fatal("EnsureSamples() still waiting 90 s after the cluster's nodes started")
	}
}
