package producer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/producer"
)

// fleet is a test bench: embedded NATS with JetStream, the embedded IMAP
// server, and producers run in-process, all on loopback.
type fleet struct {
	t     *testing.T
	nats  *embedded.NATS
	imap  *embedded.IMAP
	nc    *nats.Conn // the test's own connection, as an operator's
	js    jetstream.JetStream
	users int // accounts seeded on the IMAP server
}

func newFleet(t *testing.T, imapOpts *embedded.IMAPOptions) *fleet {
	t.Helper()
	ns, nc := natstest.Start(t)
	srv, err := embedded.StartIMAP(imapOpts)
	if err != nil {
		t.Fatalf("embedded.StartIMAP() error = %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream.New() error = %v", err)
	}
	if _, err := bus.EnsureSamples(context.Background(), js, nil); err != nil {
		t.Fatalf("bus.EnsureSamples() error = %v", err)
	}
	users := 10 // embedded's default
	if imapOpts != nil && imapOpts.Users > 0 {
		users = imapOpts.Users
	}
	return &fleet{t: t, nats: ns, imap: srv, nc: nc, js: js, users: users}
}

// options are a producer's options against the fleet's IMAP server.
func (f *fleet) options(id string, sessions int) *producer.Options {
	f.t.Helper()
	accts, err := producer.TemplateAccounts("user%d", f.users, f.imap.Password())
	if err != nil {
		f.t.Fatalf("TemplateAccounts() error = %v", err)
	}
	log := slog.New(slog.NewTextHandler(testWriter{f.t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return &producer.Options{ID: id, Addr: f.imap.Addr(), Accounts: accts, Sessions: sessions,
		OpTimeout: 2 * time.Second, FlushInterval: 500 * time.Millisecond, Seed: 42, Logger: log}
}

// testWriter sends a producer's log to the test's.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// running is a producer whose Run goroutine the test owns.
type running struct {
	p      *producer.Producer
	cancel context.CancelFunc
	errc   chan error
	once   sync.Once
	err    error
}

// start runs a producer on its own NATS connection; it is stopped at the
// end of the test if the test did not stop it.
func (f *fleet) start(opts *producer.Options) *running {
	f.t.Helper()
	nc, err := f.nats.Connect()
	if err != nil {
		f.t.Fatalf("Connect() error = %v", err)
	}
	p, err := producer.New(nc, opts)
	if err != nil {
		nc.Close()
		f.t.Fatalf("producer.New() error = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{p: p, cancel: cancel, errc: make(chan error, 1)}
	go func() {
		err := p.Run(ctx)
		if err != nil {
			f.t.Logf("producer %s: Run() error = %v", opts.ID, err)
		}
		r.errc <- err
		nc.Close()
	}()
	f.t.Cleanup(func() { r.stop(f.t) })
	return r
}

// stop cancels Run and returns its error, waiting at most 20 s.
func (r *running) stop(t *testing.T) error {
	r.once.Do(func() {
		r.cancel()
		select {
		case r.err = <-r.errc:
		case <-time.After(20 * time.Second):
			t.Errorf("producer %s: Run did not return within 20 s of cancel", r.p.ID())
		}
	})
	return r.err
}

// waitLive waits until n producers are registered.
func (f *fleet) waitLive(n int) {
	f.t.Helper()
	kv, err := f.js.KeyValue(context.Background(), messages.ProducersBucket)
	testkit.WaitFor(f.t, 10*time.Second, "producers to register", func() bool {
		if err != nil {
			kv, err = f.js.KeyValue(context.Background(), messages.ProducersBucket)
			return false
		}
		keys, kerr := kv.Keys(context.Background())
		return kerr == nil && len(keys) == n
	})
}

// runStep runs one step on the fleet's only producer, id: rest is the step
// command after its run and step ("\"rate\":50,…"). It returns the
// producer's batches once the final one is in, checked.
func (f *fleet) runStep(id, run string, step int, rest string) []*messages.SampleBatch {
	f.t.Helper()
	col := f.collect(run, step)
	f.request(fmt.Sprintf(`{"run":%q,"step":%d,%s}`, run, step, rest), 1)
	return col.finals(f.t, 1, 30*time.Second)[id]
}

// request sends a step command as a request and collects n replies.
func (f *fleet) request(cmd string, n int) []messages.StepReply {
	f.t.Helper()
	out, err := f.ask(cmd, n)
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// ask sends a step command as a request and collects n replies, sorted by
// producer.
func (f *fleet) ask(cmd string, n int) ([]messages.StepReply, error) {
	inbox := nats.NewInbox()
	ch := make(chan *nats.Msg, n+1)
	sub, err := f.nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	if err := f.nc.PublishRequest(messages.StepSubject, inbox, []byte(cmd)); err != nil {
		return nil, err
	}
	var out []messages.StepReply
	deadline := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case m := <-ch:
			var r messages.StepReply
			if err := json.Unmarshal(m.Data, &r); err != nil {
				return nil, fmt.Errorf("step reply %q: %v", m.Data, err)
			}
			out = append(out, r)
		case <-deadline:
			return nil, fmt.Errorf("got %d step replies %+v, want %d", len(out), out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Producer < out[j].Producer })
	return out, nil
}

// host is the IP of an "ip:port" address.
func host(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}
