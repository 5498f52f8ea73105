package producer

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/testkit/natstest"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// startTestJetStream starts embedded NATS and returns a JetStream client on
// it, as the producer makes one.
func startTestJetStream(t *testing.T) jetstream.JetStream {
	t.Helper()
	_, nc := natstest.Start(t)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(ackWait))
	if err != nil {
		t.Fatalf("jetstream.New() error = %v", err)
	}
	return js
}

// TestPublisherCountsLostBatches publishes while the samples stream does not
// exist (an outage as JetStream sees it), then after it is created: the
// batch sent without waiting, once its answer is seen, is kept and stored once the stream is back, not
// counted lost; a batch the contract refuses is logged as a bug and counted
// lost in the next batch's Health.Lost.
func TestPublisherCountsLostBatches(t *testing.T) {
	js := startTestJetStream(t)
	var logs bytes.Buffer
	p := newPublisher(js, slog.New(slog.NewTextHandler(&logs, nil)), 0, 1)
	rec := recorder.New("pub", 1, "p1", messages.StepInfo{}, nil)
	ctx := context.Background()

	p.ship(ctx, rec.Cut(0, 0, false, messages.Health{})) // seq 0: no stream yet, sent without waiting
	p.reap(ctx, true)                                    // its answer, as the next batch would see it: kept
	if p.lost != 0 || len(p.unacked) != 1 || !strings.Contains(logs.String(), "not acknowledged yet") {
		t.Fatalf("after a failed publish: lost = %d, unacked %d, log %q; want 0, 1 and a log line", p.lost, len(p.unacked), logs.String())
	}
	if _, err := bus.EnsureSamples(ctx, js, nil); err != nil {
		t.Fatalf("bus.EnsureSamples() error = %v", err)
	}
	bad := rec.Cut(0, 0, false, messages.Health{})
	bad.Completed = bad.Scheduled + 1 // a batch the contract refuses: our bug
	p.ship(ctx, bad)                  // seq 1: refused by EncodeBatch, lost; seq 0 published again, stored
	if p.lost != 1 || len(p.unacked) != 0 || !strings.Contains(logs.String(), "BUG") {
		t.Fatalf("after an unencodable batch: lost = %d, unacked %d; want 1, 0 and a BUG log line", p.lost, len(p.unacked))
	}
	p.ship(ctx, rec.Cut(0, 0, true, messages.Health{})) // seq 2: published, carries Lost 1
	if p.lost != 0 {
		t.Fatalf("after a successful publish: lost = %d, want 0", p.lost)
	}
	seqs, lost, final := storedBatches(t, js)
	if !slices.Equal(seqs, []uint64{0, 2}) || lost != 1 || !final {
		t.Errorf("stored batches %v carrying lost %d, final %v; want [0 2], 1, true", seqs, lost, final)
	}
	st, err := js.Stream(ctx, messages.SamplesStream)
	if err != nil {
		t.Fatalf("Stream() error = %v", err)
	}
	m, err := st.GetLastMsgForSubject(ctx, messages.SamplesSubject("pub", 1, "p1"))
	if err != nil {
		t.Fatalf("GetLastMsgForSubject() error = %v", err)
	}
	if m.Header.Get(bus.ContentType) != bus.MsgpackType || m.Header.Get(jetstream.MsgIDHeader) != messages.BatchMsgID("pub", 1, "p1", 2) {
		t.Errorf("stored final batch headers %v; want msgpack and its message id", m.Header)
	}
}

// TestPublisherLosesUnackedAtFinal checks that a batch never acknowledged
// (the stream never exists) is counted lost once the budget is spent, at
// the final batch, and not before.
func TestPublisherLosesUnackedAtFinal(t *testing.T) {
	js := startTestJetStream(t)
	var logs bytes.Buffer
	p := newPublisher(js, slog.New(slog.NewTextHandler(&logs, nil)), 0, 1)
	rec := recorder.New("pub", 1, "p1", messages.StepInfo{}, nil)
	ctx := context.Background()
	p.ship(ctx, rec.Cut(0, 0, false, messages.Health{}))
	if p.lost != 0 {
		t.Fatalf("after a first failed publish: lost = %d, want 0 (kept to retry)", p.lost)
	}
	p.ship(ctx, rec.Cut(0, 0, true, messages.Health{}))
	if p.lost != 2 || len(p.unacked) != 0 || !strings.Contains(logs.String(), "sample batch lost") {
		t.Errorf("after the final batch: lost = %d, unacked %d; want 2 (batch 0 and the final), 0, and log lines", p.lost, len(p.unacked))
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
	o, err := p.encode(b)
	if err != nil {
		t.Fatalf("encode() error = %v", err)
	}
	for range 3 {
		if err := p.publish(context.Background(), o); err != nil {
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
