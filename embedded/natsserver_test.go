package embedded_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
)

func startNATS(t *testing.T, opts *embedded.NATSOptions) *embedded.NATS {
	t.Helper()
	if opts == nil {
		opts = &embedded.NATSOptions{}
	}
	if opts.StoreDir == "" {
		opts.StoreDir = t.TempDir()
	}
	n, err := embedded.StartNATS(opts)
	if err != nil {
		t.Fatalf("StartNATS() error = %v", err)
	}
	t.Cleanup(n.Shutdown)
	return n
}

// roundTrip creates a stream, publishes one message and reads it back.
func roundTrip(t *testing.T, nc *nats.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream.New() error = %v", err)
	}
	st, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: "T", Subjects: []string{"t.>"}, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatalf("CreateOrUpdateStream() error = %v", err)
	}
	if _, err := js.Publish(ctx, "t.one", []byte("hello"), jetstream.WithMsgID("m1")); err != nil {
		t.Fatalf("Publish() error = %v", err)
	}
	oc, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatalf("OrderedConsumer() error = %v", err)
	}
	m, err := oc.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatalf("Next() error = %v", err)
	}
	if got := string(m.Data()); got != "hello" {
		t.Errorf("Next().Data() = %q, want %q", got, "hello")
	}
}

func TestStartNATS(t *testing.T) {
	free := freePort(t)
	tests := []struct {
		name string
		opts embedded.NATSOptions
		url  string // substring ClientURL must contain
	}{
		{name: "random port", url: "nats://127.0.0.1:"},
		{name: "fixed port", opts: embedded.NATSOptions{Port: free}, url: ":" + strconv.Itoa(free)},
		{name: "in-process", opts: embedded.NATSOptions{DontListen: true}},
		{name: "user and password", opts: embedded.NATSOptions{User: "lt", Password: "s3cret"}, url: "nats://127.0.0.1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := startNATS(t, &tt.opts)
			if url := n.ClientURL(); !strings.Contains(url, tt.url) || strings.Contains(url, "s3cret") {
				t.Errorf("ClientURL() = %q, want it to contain %q and no password", url, tt.url)
			}
			nc, err := n.Connect()
			if err != nil {
				t.Fatalf("Connect() error = %v", err)
			}
			defer nc.Close()
			roundTrip(t, nc)
		})
	}
}

func TestNATSAuthRequired(t *testing.T) {
	n := startNATS(t, &embedded.NATSOptions{User: "lt", Password: "s3cret"})
	nc, err := nats.Connect(n.ClientURL(), nats.MaxReconnects(0))
	if err == nil {
		nc.Close()
		t.Fatal("nats.Connect() without credentials succeeded, want an authorization error")
	}
	if !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("nats.Connect() without credentials error = %v, want %v", err, nats.ErrAuthorization)
	}
}

func TestStartNATSNoStoreDir(t *testing.T) {
	for _, opts := range []*embedded.NATSOptions{nil, {}} {
		n, err := embedded.StartNATS(opts)
		if !errors.Is(err, embedded.ErrNoStoreDir) {
			if n != nil {
				n.Shutdown()
			}
			t.Errorf("StartNATS(%+v) error = %v, want %v", opts, err, embedded.ErrNoStoreDir)
		}
	}
}

func TestNATSShutdown(t *testing.T) {
	n := startNATS(t, nil)
	nc, err := n.Connect(nats.MaxReconnects(0))
	if err != nil {
		t.Fatalf("Connect() error = %v", err)
	}
	defer nc.Close()
	n.Shutdown()
	n.Shutdown() // idempotent
	if n.Server().Running() {
		t.Error("Server().Running() = true after Shutdown")
	}
	testkit.WaitFor(t, 5*time.Second, "client to see the server gone", func() bool { return nc.IsClosed() })
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(n.ClientURL(), "nats://"), time.Second); err == nil {
		t.Error("dial after Shutdown succeeded, want connection refused")
	}
}
