package clustertest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/aggregator"
	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/producer"
)

// replicated is what `--replicas 3` gives every command.
var replicated = &bus.Options{Replicas: size}

// streams are imapload's streams, each with three replicas in the cluster.
var streams = []string{messages.SamplesStream, messages.ResultsStream, bus.StepsStream}

// fleet is the operator's connection to the cluster, the embedded IMAP
// server, the aggregator and the producers, each on its own connection.
type fleet struct {
	t    *testing.T
	nc   *nats.Conn
	js   jetstream.JetStream
	imap *embedded.IMAP
	ids  []string
}

// startClusterWithStreams starts a cluster and, through a client that
// connects to node 0 first, creates imapload's streams and bucket on it.
func startClusterWithStreams(t *testing.T) (*cluster, jetstream.JetStream) {
	t.Helper()
	c := startCluster(t)
	js, err := jetstream.New(c.connect(0))
	if err != nil {
		t.Fatal(err)
	}
	ensure(t, js)
	return c, js
}

// ensure creates imapload's streams and bucket with three replicas, as the
// first command given --replicas 3 does, retrying while the cluster elects
// its leaders.
func ensure(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	var err error
	ok := testkit.Poll(30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err = bus.EnsureSamples(ctx, js, replicated); err != nil {
			return false
		}
		if _, err = bus.EnsureResults(ctx, js, replicated); err != nil {
			return false
		}
		if _, err = bus.EnsureSteps(ctx, js, replicated); err != nil {
			return false
		}
		_, err = bus.EnsureProducers(ctx, js, replicated)
		return err == nil
	})
	if !ok {
		t.Fatalf("ensuring the streams and bucket with 3 replicas: %v", err)
	}
}

// startFleet starts the IMAP server and, connected to the cluster with node
// first in their server lists, the aggregator and the producers ids; it
// waits until both are registered. t's cleanup stops them before the
// cluster.
func startFleet(t *testing.T, c *cluster, first int, ids ...string) *fleet {
	t.Helper()
	f := &fleet{t: t, nc: c.connect(first), ids: ids}
	js, err := jetstream.New(f.nc)
	if err != nil {
		t.Fatalf("jetstream.New() error = %v", err)
	}
	f.js = js
	ensure(t, js)
	f.imap, err = embedded.StartIMAP(&embedded.IMAPOptions{Users: 20})
	if err != nil {
		t.Fatalf("embedded.StartIMAP() error = %v", err)
	}
	t.Cleanup(func() { f.imap.Close() })
	a, err := aggregator.New(c.connect(first), &aggregator.Options{Bus: replicated, Logger: logger(t, "aggregator")})
	if err != nil {
		t.Fatalf("aggregator.New() error = %v", err)
	}
	run(t, "aggregator", a.Run)
	for _, id := range ids {
		p, err := producer.New(c.connect(first), f.producerOptions(id))
		if err != nil {
			t.Fatalf("producer.New(%s) error = %v", id, err)
		}
		run(t, id, p.Run)
	}
	f.awaitRegistered()
	return f
}

func (f *fleet) producerOptions(id string) *producer.Options {
	f.t.Helper()
	accts, err := producer.TemplateAccounts("user%d", 20, f.imap.Password())
	if err != nil {
		f.t.Fatalf("TemplateAccounts() error = %v", err)
	}
	return &producer.Options{ID: id, Addr: f.imap.Addr(), Accounts: accts, Sessions: 4, OpTimeout: 2 * time.Second,
		FlushInterval: 500 * time.Millisecond, Bus: replicated, Seed: 11, Logger: logger(f.t, id)}
}

// run runs fn in a goroutine until t's cleanup cancels its context and
// waits (at most a minute) for it to return; an error is the test's.
func run(t *testing.T, name string, fn func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: Run() error = %v", name, err)
			}
		case <-time.After(time.Minute):
			t.Errorf("%s: Run did not return within a minute of its cancel", name)
		}
	})
}

// logger sends warnings and errors to t's log.
func logger(t *testing.T, name string) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})).With("role", name)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// awaitRegistered waits until every producer has its registry entry.
func (f *fleet) awaitRegistered() {
	f.t.Helper()
	testkit.WaitFor(f.t, 30*time.Second, "the producers to register", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		kv, err := f.js.KeyValue(ctx, messages.ProducersBucket)
		if err != nil {
			return false
		}
		keys, err := kv.Keys(ctx)
		return err == nil && len(keys) == len(f.ids)
	})
}

// step sends run's step command as a request, as the ramp does, waits until
// every producer accepted it and the steps stream stored it.
func (f *fleet) step(run string, step int, rate float64, window time.Duration) {
	f.t.Helper()
	before := stored(f.js, bus.StepsStream)
	cmd := fmt.Sprintf(`{"run":%q,"step":%d,"rate":%g,"duration":%q,"warmup":"1s","stagger":"500ms","producers":%d}`,
		run, step, rate, window.String(), len(f.ids))
	inbox := nats.NewInbox()
	replies, err := f.nc.SubscribeSync(inbox)
	if err != nil {
		f.t.Fatalf("SubscribeSync() error = %v", err)
	}
	defer replies.Unsubscribe()
	if err := f.nc.PublishRequest(messages.StepSubject, inbox, []byte(cmd)); err != nil {
		f.t.Fatalf("PublishRequest(%s) error = %v", messages.StepSubject, err)
	}
	for range f.ids {
		m, err := replies.NextMsg(10 * time.Second)
		if err != nil {
			f.t.Fatalf("step %s: waiting for the producers' answers: %v", cmd, err)
		}
		r, err := messages.DecodeStepReply(m.Data)
		if err != nil || !r.Accepted {
			f.t.Fatalf("step %s: answer %s (%v), want accepted", cmd, m.Data, err)
		}
	}
	testkit.WaitFor(f.t, 10*time.Second, "the step command stored", func() bool { return stored(f.js, bus.StepsStream) > before })
}

// stored is the stream's last sequence (0 when it cannot be had now).
func stored(js jetstream.JetStream, stream string) uint64 {
	if info := streamInfo(js, stream); info != nil {
		return info.State.LastSeq
	}
	return 0
}

// result waits for run's step result in the results stream, then for the
// aggregator to have acknowledged every batch (so that no revision is still
// to come), and returns the step's results, revision 0 first.
func (f *fleet) result(run string, step int, within time.Duration) []*messages.StepResult {
	f.t.Helper()
	var rs []*messages.StepResult
	testkit.WaitFor(f.t, within, fmt.Sprintf("the result of %s step %d", run, step), func() bool {
		rs = f.results(run, step)
		return len(rs) > 0
	})
	testkit.WaitFor(f.t, within, "the aggregator to acknowledge every batch", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c, err := f.js.Consumer(ctx, messages.SamplesStream, "imapload-aggregator")
		if err != nil {
			return false
		}
		i, err := c.Info(ctx)
		return err == nil && i.NumPending == 0 && i.NumAckPending == 0
	})
	return f.results(run, step)
}

// results reads run's step results from the results stream, in order
// (nil while the stream cannot be read).
func (f *fleet) results(run string, step int) []*messages.StepResult {
	f.t.Helper()
	msgs, err := read(f.js, messages.ResultsStream, messages.ResultsSubject(run))
	if err != nil {
		f.t.Logf("reading the results: %v", err)
		return nil
	}
	var out []*messages.StepResult
	for _, data := range msgs {
		if kind, err := messages.ResultKind(data); err != nil || kind != messages.KindStepResult {
			continue
		}
		r, err := messages.DecodeResult(data)
		if err != nil {
			f.t.Fatalf("DecodeResult() error = %v", err)
		}
		if r.Step == step {
			out = append(out, r)
		}
	}
	return out
}

// batches reads run's step's batches from the samples stream, in order.
func (f *fleet) batches(run string, step int) []*messages.SampleBatch {
	f.t.Helper()
	var msgs [][]byte
	var err error
	if !testkit.Poll(waitLong, func() bool {
		msgs, err = read(f.js, messages.SamplesStream, messages.StepSamplesFilter(run, step))
		return err == nil
	}) {
		f.t.Fatalf("reading the batches: %v", err)
	}
	var out []*messages.SampleBatch
	for _, data := range msgs {
		b, err := messages.DecodeBatch(data)
		if err != nil {
			f.t.Fatalf("DecodeBatch() error = %v", err)
		}
		out = append(out, b)
	}
	return out
}

// read returns the data of every message of stream on subject, read by
// sequence with the message-get API: each request is bounded by its context
// and a server going down loses only that request, and the caller tries
// again. (An ordered consumer here hung the suite for 30 minutes after a
// node was killed: its reset retries consumer creation without end and
// Next's wait does not bound it.)
func read(js jetstream.JetStream, stream, subject string) ([][]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("Stream(%s): %w", stream, err)
	}
	var out [][]byte
	for seq := uint64(1); ; {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s on %s from sequence %d: %w", stream, subject, seq, err)
		}
		out = append(out, m.Data)
		seq = m.Sequence + 1
	}
}
