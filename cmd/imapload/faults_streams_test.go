package main

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/messages"
)

// What the streams of a fault fleet hold, read with the test's own client,
// and what a forger publishes into them.

// streamResults reads every StepResult of run stored in IMAPLOAD_RESULTS,
// per step in the order stored.
func streamResults(t *testing.T, js jetstream.JetStream, run string) map[int][]messages.StepResult {
	t.Helper()
	out := map[int][]messages.StepResult{}
	for _, m := range streamRead(t, js, messages.ResultsStream, messages.ResultsSubject(run)) {
		var r messages.StepResult
		if json.Unmarshal(m.Data(), &r) == nil && r.Kind == messages.KindStepResult {
			out[r.Step] = append(out[r.Step], r)
		}
	}
	return out
}

// latest waits until step n of run has a result in the stream that passes
// ok (nil: any), and returns its highest revision; the failure shows the
// last one seen.
func latest(t *testing.T, js jetstream.JetStream, run string, n int, within time.Duration, ok func(messages.StepResult) bool) messages.StepResult {
	t.Helper()
	var r messages.StepResult
	for deadline := time.Now().Add(within); ; time.Sleep(250 * time.Millisecond) {
		rs := streamResults(t, js, run)[n]
		for i, x := range rs {
			if i == 0 || x.Revision > r.Revision {
				r = x
			}
		}
		if len(rs) > 0 && (ok == nil || ok(r)) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for a result of %s step %d; %d in the stream, the latest: revision %d, complete %v, producers %v, missing %v, lost %d",
				within, run, n, len(rs), r.Revision, r.Complete, r.Producers, r.Missing, r.Lost)
		}
	}
}

// complete is a result from every producer that sent anything.
func complete(r messages.StepResult) bool { return r.Complete && len(r.Missing) == 0 }

// streamBatches reads every batch of run's step stored in IMAPLOAD_SAMPLES,
// one per (producer, seq), and counts what did not decode.
func streamBatches(t *testing.T, js jetstream.JetStream, run string, step int) (map[string]*messages.SampleBatch, int) {
	t.Helper()
	out, bad := map[string]*messages.SampleBatch{}, 0
	for _, m := range streamRead(t, js, messages.SamplesStream, messages.StepSamplesFilter(run, step)) {
		b, err := messages.DecodeBatch(m.Data())
		if err != nil {
			bad++
			continue
		}
		out[b.Producer+"#"+strconv.FormatUint(b.Seq, 10)] = b
	}
	return out, bad
}

// streamRead returns every message of stream on subject, read with an
// ephemeral consumer deleted after; nil while the stream is unreachable.
func streamRead(t *testing.T, js jetstream.JetStream, stream, subject string) []jetstream.Msg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil
	}
	c, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{FilterSubject: subject, AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: 10 * time.Second})
	if err != nil {
		return nil
	}
	defer func() { _ = s.DeleteConsumer(ctx, c.CachedInfo().Name) }()
	var out []jetstream.Msg
	for pending := c.CachedInfo().NumPending; uint64(len(out)) < pending; {
		batch, err := c.Fetch(int(min(pending-uint64(len(out)), 1000)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return out
		}
		n := len(out)
		for m := range batch.Messages() {
			out = append(out, m)
		}
		if len(out) == n {
			t.Logf("reading %s %s: %d of %d messages: %v", stream, subject, n, pending, batch.Error())
			return out
		}
	}
	return out
}

// stepEnd is when the last final batch of run's step was stored (the
// stream's clock): the step's end as the aggregator sees it.
func stepEnd(t *testing.T, js jetstream.JetStream, run string, step int) time.Time {
	t.Helper()
	var end time.Time
	for _, m := range streamRead(t, js, messages.SamplesStream, messages.StepSamplesFilter(run, step)) {
		b, err := messages.DecodeBatch(m.Data())
		md, mdErr := m.Metadata()
		if err == nil && mdErr == nil && b.Final && md.Timestamp.After(end) {
			end = md.Timestamp
		}
	}
	return end
}

// forgeBatches publishes batches as fast as the stream takes them, each with
// its message id, and returns how many and their bytes.
func (f *faultFleet) forgeBatches(t *testing.T, batches func(yield func(*messages.SampleBatch) bool)) (n, size int) {
	t.Helper()
	js := f.asyncJS(t)
	for b := range batches {
		data, err := messages.EncodeBatch(b)
		if err != nil {
			t.Fatalf("EncodeBatch: %v", err)
		}
		f.forgeRaw(t, js, messages.SamplesSubject(b.Run, b.Step, b.Producer), data, messages.BatchMsgID(b.Run, b.Step, b.Producer, b.Seq))
		n, size = n+1, size+len(data)
	}
	f.awaitStored(t, js, n)
	return n, size
}

// forgeEncoded publishes encoded batches of run's steps (seq 0 of producer
// each) as fast as the stream takes them, and returns their bytes.
func (f *faultFleet) forgeEncoded(t *testing.T, run, producer string, steps []int, data [][]byte) (size int) {
	t.Helper()
	js := f.asyncJS(t)
	for i, step := range steps {
		f.forgeRaw(t, js, messages.SamplesSubject(run, step, producer), data[i], messages.BatchMsgID(run, step, producer, 0))
		size += len(data[i])
	}
	f.awaitStored(t, js, len(steps))
	return size
}

func (f *faultFleet) asyncJS(t *testing.T) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(f.nc, jetstream.WithPublishAsyncMaxPending(256))
	if err != nil {
		t.Fatalf("jetstream.New: %v", err)
	}
	return js
}

// awaitStored waits until js has every async publish acknowledged.
func (f *faultFleet) awaitStored(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(2 * time.Minute):
		t.Fatalf("%d forged messages not stored within 2 minutes", n)
	}
}

// forgeRaw publishes data on subject with an async ack, as anyone allowed to
// publish on imapload.samples.> can; with 256 acks outstanding it waits up
// to 30 s for room (a loaded machine stores 220 KB batches slowly).
func (f *faultFleet) forgeRaw(t *testing.T, js jetstream.JetStream, subject string, data []byte, id string) {
	t.Helper()
	m := nats.NewMsg(subject)
	m.Data = data
	if _, err := js.PublishMsgAsync(m, jetstream.WithMsgID(id), jetstream.WithStallWait(30*time.Second)); err != nil {
		t.Fatalf("PublishMsgAsync(%s): %v", subject, err)
	}
}
