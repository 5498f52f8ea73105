package producer

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// TestOutagePublisherCountsOnlyUnacked publishes a step's batches across a
// NATS outage longer than the ack wait and the retry budget: 8 s down with
// a 2 s budget and a 5 s ack wait. Every batch must end either stored or
// counted lost, never both: the stored batches plus the lost counts they
// carry equal the number of batches, as the aggregator's completion rule
// assumes. (Before the fix, batches given up during the outage were stored
// from the client's reconnect buffer after it, and counted lost as well.)
func TestOutagePublisherCountsOnlyUnacked(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel() // waits on NATS outages and timeouts, with servers of its own
	const (
		budget = 2 * time.Second
		outage = 8 * time.Second
		during = 4 // batches cut while NATS is down
	)
	srv, js := outageSamples(t)
	p := newPublisher(js, slog.New(slog.NewTextHandler(testLog{t}, nil)), budget, 1)
	done := make(chan struct{})
	go func() { defer close(done); p.run(context.Background()) }()
	rec := recorder.New("out", 1, "p1", messages.StepInfo{}, nil)
	p.in <- rec.Cut(0, 0, false, messages.Health{})
	waitStored(t, js, 1)

	srv.Shutdown()
	for range during {
		p.in <- rec.Cut(0, 0, false, messages.Health{})
	}
	time.Sleep(outage) // the outage itself: the scenario, not a wait for a result
	srv.Start()
	WaitConnected(t, js.Conn(), 10*time.Second) // it saw the outage: its publishes failed
	p.in <- rec.Cut(0, 0, true, messages.Health{})
	close(p.in)
	select {
	case <-done:
	case <-time.After(budget + ackWait + 30*time.Second):
		t.Fatal("publisher did not return after its final batch")
	}
	checkAccounted(t, js, during+2)
}

// checkAccounted checks that the stored batches and the lost counts they
// carry add up to n, and that the final one is stored.
func checkAccounted(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	seqs, lost, final := storedBatches(t, js)
	if !final || len(seqs)+int(lost) != n {
		t.Errorf("stored batches %v carrying lost %d (final stored: %v); want stored + lost = %d with the final stored",
			seqs, lost, final, n)
	}
	if lost != 0 {
		t.Errorf("lost = %d, want 0: every batch could be stored once NATS was back", lost)
	}
}

// storedBatches reads every batch in the samples stream.
func storedBatches(t *testing.T, js jetstream.JetStream) (seqs []uint64, lost uint64, final bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := js.OrderedConsumer(ctx, messages.SamplesStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatalf("OrderedConsumer() error = %v", err)
	}
	for range 1000 {
		m, err := cons.Next(jetstream.FetchMaxWait(time.Second))
		if err != nil {
			break
		}
		b, err := messages.DecodeBatch(m.Data())
		if err != nil {
			t.Fatalf("DecodeBatch() error = %v", err)
		}
		seqs, lost, final = append(seqs, b.Seq), lost+b.Health.Lost, final || b.Final
		if md, err := m.Metadata(); err == nil && md.NumPending == 0 {
			break
		}
	}
	return seqs, lost, final
}

// waitStored polls until the samples stream holds n messages, for at most 10 s.
func waitStored(t *testing.T, js jetstream.JetStream, n uint64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, err := js.Stream(context.Background(), messages.SamplesStream)
		if err == nil {
			if info, err := st.Info(context.Background()); err == nil && info.State.Msgs >= n {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("samples stream did not hold %d messages within 10 s", n)
		}
	}
}

// testLog sends a log to the test's.
type testLog struct{ t *testing.T }

func (w testLog) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(b))
	return len(b), nil
}

// TestOutagePublisherStopBounded stops a step with NATS down for good: the
// publisher, holding more batches than its queue, gives up within its
// budget (1 s here) plus one ack wait, counting every batch lost, instead of
// retrying each one in turn.
func TestOutagePublisherStopBounded(t *testing.T) {
	t.Parallel() // waits on NATS outages and timeouts, with servers of its own
	const budget = time.Second
	srv, js := outageSamples(t)
	p := newPublisher(js, slog.New(slog.DiscardHandler), budget, 1)
	srv.Shutdown()
	done := make(chan struct{})
	go func() { defer close(done); p.run(context.Background()) }()
	rec := recorder.New("stop", 1, "p1", messages.StepInfo{}, nil)
	n := publishQueue + maxUnacked/2
	for range n {
		p.in <- rec.Cut(0, 0, false, messages.Health{})
	}
	p.in <- rec.Cut(0, 0, true, messages.Health{})
	close(p.in)
	within := budget + ackWait + 10*time.Second // the bound stated on publisher, with room for a busy machine
	select {
	case <-done:
	case <-time.After(within):
		t.Fatalf("publisher still running %v after its final batch with NATS down", within)
	}
	if p.lost != uint64(n+1) {
		t.Errorf("lost = %d after the final batch, want %d (every batch, the final included)", p.lost, n+1)
	}
}

// TestOutagePublisherStopsWithItsContext: with a budget far longer than the
// test (an operator's --publish-retry) and NATS down for good, a publisher
// whose context ends (the producer stopping, after shutdownGrace) stops
// waiting at once and counts every batch lost: the one it kept to retry and
// the final one, never sent.
func TestOutagePublisherStopsWithItsContext(t *testing.T) {
	t.Parallel() // waits on NATS outages and timeouts, with servers of its own
	srv, js := outageSamples(t)
	var logs testkit.Buffer
	p := newPublisher(js, slog.New(slog.NewTextHandler(&logs, nil)), time.Hour, 1)
	srv.Shutdown()
	// Until the client sees the server gone, a batch is written to the dead
	// socket and only its ack wait (5 s) tells; the test wants the outage.
	testkit.WaitFor(t, 10*time.Second, "the client to see NATS down", func() bool { return !js.Conn().IsConnected() })
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()
	rec := recorder.New("stop", 1, "p1", messages.StepInfo{}, nil)
	p.in <- rec.Cut(0, 0, false, messages.Health{})
	testkit.WaitFor(t, 10*time.Second, "the first batch kept to retry", func() bool {
		return strings.Contains(logs.String(), "not acknowledged yet")
	})
	cancel(errShutdownGrace)
	p.in <- rec.Cut(0, 0, true, messages.Health{})
	close(p.in)
	select {
	case <-done:
	case <-time.After(ackWait + 20*time.Second): // a hang guard, not a speed check: an hour without the context
		t.Fatal("publisher still running after its context ended, with NATS down")
	}
	if p.lost != 2 {
		t.Errorf("lost = %d after the final batch, want 2", p.lost)
	}
}

// outageSamples is an outage-ready NATS with the samples stream, and a
// JetStream client whose asynchronous publishes wait ackWait.
func outageSamples(t *testing.T) (*OutageNATS, jetstream.JetStream) {
	t.Helper()
	srv := StartOutageNATS(t)
	js, err := jetstream.New(srv.Connect(), jetstream.WithPublishAsyncTimeout(ackWait))
	if err != nil {
		t.Fatalf("jetstream.New() error = %v", err)
	}
	if _, err := bus.EnsureSamples(context.Background(), js, nil); err != nil {
		t.Fatalf("bus.EnsureSamples() error = %v", err)
	}
	return srv, js
}
