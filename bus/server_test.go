package bus_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
)

// TestObserverPermissions starts nats-server with an observer and the
// aggregator as users: the observer ensures the server stream and
// publishes its own figures, not another observer's; the aggregator reads
// them back.
func TestObserverPermissions(t *testing.T) {
	obs, err := bus.ObserverPermissions("mail1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bus.ObserverPermissions("a.b"); err == nil {
		t.Error("ObserverPermissions(\"a.b\") succeeded, want an error")
	}
	auth := map[string]nats.Option{} // role → its NKey login
	c := bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: t.TempDir()}
	for _, p := range []bus.Permissions{obs, bus.AggregatorPermissions()} {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		c.Users = append(c.Users, bus.User{Permissions: p, NKey: pub})
		auth[p.Role] = nats.Nkey(pub, func(nonce []byte) ([]byte, error) { return kp.Sign(nonce) })
	}
	var b strings.Builder
	if err := c.Write(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ns, err := embedded.StartNATS(&embedded.NATSOptions{ConfigFile: path, Host: "127.0.0.1", Port: -1})
	if err != nil {
		t.Fatalf("StartNATS(observer config) error = %v", err)
	}
	t.Cleanup(ns.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	observer := jsOf(t, ns, auth[obs.Role])
	if _, err := bus.EnsureServer(ctx, observer, nil); err != nil {
		t.Fatalf("observer: EnsureServer() error = %v", err)
	}
	if _, err := observer.Publish(ctx, messages.ServerSubject("r1", 1, "mail1"), []byte(`{}`)); err != nil {
		t.Errorf("observer: publish its own figures: %v", err)
	}
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	defer cancelShort()
	if _, err := observer.Publish(short, messages.ServerSubject("r1", 1, "mail2"), []byte(`{}`)); err == nil {
		t.Error("observer mail1 published mail2's figures")
	}
	agg := jsOf(t, ns, auth[bus.RoleAggregator])
	st, err := agg.Stream(ctx, messages.ServerStream)
	if err != nil {
		t.Fatalf("aggregator: look the server stream up: %v", err)
	}
	oc, err := agg.OrderedConsumer(ctx, messages.ServerStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{messages.StepServerFilter("r1", 1)}})
	if err != nil {
		t.Fatalf("aggregator: read the server stream: %v", err)
	}
	if m, err := oc.Next(jetstream.FetchMaxWait(5 * time.Second)); err != nil || m.Subject() != messages.ServerSubject("r1", 1, "mail1") {
		t.Errorf("aggregator: Next() = %v, %v; want mail1's figures", m, err)
	}
	if info, err := st.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Errorf("server stream: Info() = %+v, %v; want 1 message", info, err)
	}
}

func jsOf(t *testing.T, ns *embedded.NATS, auth nats.Option) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(ns.ClientURL(), auth)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
