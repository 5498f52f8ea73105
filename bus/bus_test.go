package bus_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go/jetstream"
)

func TestRedact(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no user info", "nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"user and password", "nats://alice:s3cret@127.0.0.1:4222", "nats://%2A%2A%2A@127.0.0.1:4222"},
		{"token", "nats://t0ken@host:4222", "nats://%2A%2A%2A@host:4222"},
		{"list", "nats://a:pw1@h1:4222,nats://b:pw2@h2:4222", "nats://%2A%2A%2A@h1:4222,nats://%2A%2A%2A@h2:4222"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bus.Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for _, secret := range []string{"s3cret", "pw1", "pw2", "t0ken"} {
				if strings.Contains(got, secret) {
					t.Errorf("Redact(%q) = %q still holds %q", tt.in, got, secret)
				}
			}
		})
	}
}

func TestConnectErrorHidesPassword(t *testing.T) {
	_, err := bus.Connect("nats://alice:s3cret@127.0.0.1:1", "test", "")
	if err == nil {
		t.Fatal("Connect to a closed port succeeded")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Connect error %q reveals the password", err)
	}
}

func TestEnsureIsIdempotent(t *testing.T) {
	_, nc := embedded.NATSForTest(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 2 { // producers, aggregator and reporter all ensure; the second must agree
		if _, err := bus.EnsureSamples(ctx, js, nil); err != nil {
			t.Fatalf("EnsureSamples: %v", err)
		}
		if _, err := bus.EnsureResults(ctx, js, nil); err != nil {
			t.Fatalf("EnsureResults: %v", err)
		}
		if _, err := bus.EnsureProducers(ctx, js, nil); err != nil {
			t.Fatalf("EnsureProducers: %v", err)
		}
	}
	// A batch is stored once even when published twice with its message id.
	id := messages.BatchMsgID("r1", 1, "p1", 0)
	for range 2 {
		if _, err := js.Publish(ctx, messages.SamplesSubject("r1", 1, "p1"), []byte("x"), jetstream.WithMsgID(id)); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	st, err := js.Stream(ctx, messages.SamplesStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Errorf("samples stream holds %d messages after a duplicate publish, want 1", info.State.Msgs)
	}
}
