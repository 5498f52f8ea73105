package producer

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// startTestJetStream starts embedded NATS and returns a JetStream client on
// it, as the producer makes one.
func startTestJetStream(t *testing.T) jetstream.JetStream {
	t.Helper()
	_, nc := embedded.NATSForTest(t)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(ackWait))
	if err != nil {
		t.Fatalf("jetstream.New() error = %v", err)
	}
	return js
}

// TestPublisherCountsLostBatches publishes while the samples stream does not
// exist (an outage as JetStream sees it), then after it is created: the lost
// batch is logged and counted in the next batch's Health.Lost, and a batch
// the contract refuses is logged as a bug and counted the same way.
func TestPublisherCountsLostBatches(t *testing.T) {
	js := startTestJetStream(t)
	var logs bytes.Buffer
	p := newPublisher(js, slog.New(slog.NewTextHandler(&logs, nil)), 0, 1)
	rec := recorder.New("pub", 1, "p1", messages.StepInfo{}, nil)

	p.ship(rec.Cut(0, 0, false, messages.Health{})) // seq 0: no stream yet, lost
	if p.lost != 1 || !strings.Contains(logs.String(), "sample batch lost") {
		t.Fatalf("after a failed publish: lost = %d, log %q; want 1 and a log line", p.lost, logs.String())
	}
	if _, err := bus.EnsureSamples(context.Background(), js, nil); err != nil {
		t.Fatalf("bus.EnsureSamples() error = %v", err)
	}
	bad := rec.Cut(0, 0, false, messages.Health{})
	bad.Completed = bad.Scheduled + 1 // a batch the contract refuses: our bug
	p.ship(bad)                       // seq 1: refused by EncodeBatch, lost
	if p.lost != 2 || !strings.Contains(logs.String(), "BUG") {
		t.Fatalf("after an unencodable batch: lost = %d; want 2 and a BUG log line", p.lost)
	}
	p.ship(rec.Cut(0, 0, true, messages.Health{})) // seq 2: published, carries Lost 2
	if p.lost != 0 {
		t.Fatalf("after a successful publish: lost = %d, want 0", p.lost)
	}
	st, err := js.Stream(context.Background(), messages.SamplesStream)
	if err != nil {
		t.Fatalf("Stream() error = %v", err)
	}
	m, err := st.GetLastMsgForSubject(context.Background(), messages.SamplesSubject("pub", 1, "p1"))
	if err != nil {
		t.Fatalf("GetLastMsgForSubject() error = %v", err)
	}
	b, err := messages.DecodeBatch(m.Data)
	if err != nil {
		t.Fatalf("DecodeBatch() error = %v", err)
	}
	if b.Seq != 2 || b.Health.Lost != 2 || m.Header.Get(bus.ContentType) != bus.MsgpackType ||
		m.Header.Get(jetstream.MsgIDHeader) != messages.BatchMsgID("pub", 1, "p1", 2) {
		t.Errorf("stored batch seq %d lost %d headers %v; want seq 2, lost 2, msgpack, its message id", b.Seq, b.Health.Lost, m.Header)
	}
}

// TestPublisherRetriesUntilStored checks that a retried publish is stored
// once: the stream deduplicates on the batch's message id.
func TestPublisherRetriesUntilStored(t *testing.T) {
	js := startTestJetStream(t)
	st, err := bus.EnsureSamples(context.Background(), js, nil)
	if err != nil {
		t.Fatalf("bus.EnsureSamples() error = %v", err)
	}
	p := newPublisher(js, slog.New(slog.DiscardHandler), time.Second, 1)
	b := recorder.New("dup", 1, "p1", messages.StepInfo{}, nil).Cut(0, 0, true, messages.Health{})
	for range 3 {
		if err := p.publish(b); err != nil {
			t.Fatalf("publish() error = %v", err)
		}
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatalf("Info() error = %v", err)
	}
	if info.State.Msgs != 1 {
		t.Errorf("stream holds %d messages after 3 publishes of one batch, want 1", info.State.Msgs)
	}
}
