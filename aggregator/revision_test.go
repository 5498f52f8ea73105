package aggregator

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go/jetstream"
)

// revisions returns run's step results of step, by revision.
func (tb *testBus) revisions(t *testing.T, run string, step int) map[int]*jetstream.RawStreamMsg {
	t.Helper()
	out := map[int]*jetstream.RawStreamMsg{}
	for _, m := range tb.results(t, run) {
		var r messages.StepResult
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Fatalf("result JSON: %v", err)
		}
		if r.Kind == messages.KindStepResult && r.Step == step {
			if out[r.Revision] != nil {
				t.Errorf("step %d revision %d published twice", step, r.Revision)
			}
			out[r.Revision] = m
		}
	}
	return out
}

// TestLateBatchesPublishRevision is finding 4 of issue 10 in miniature:
// batches held through an outage reach the stream after the step's
// deadline. The step is published without them, then re-opened by them and
// published again, complete, as revision 1; late messages that add nothing
// (a duplicate) publish no revision, and neither does a restarted
// aggregator that replays the stream.
func TestLateBatchesPublishRevision(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	tb.command(t, "r1", 9)
	all := stepBatches("r1", 9, []string{"a", "b"}, 3)
	var late []*messages.SampleBatch
	for _, b := range all {
		if b.Producer == "b" && b.Seq > 0 {
			late = append(late, b)
			continue
		}
		tb.publish(t, b, "")
	}
	opts := &Options{Durable: "agg-late", StepTimeout: 300 * time.Millisecond}
	agg := startAgg(t, tb.nc, opts)
	first, _ := tb.waitResult(t, "r1", 9, 10*time.Second)
	if first.Complete || len(first.Missing) != 1 || first.Revision != 0 {
		t.Fatalf("first StepResult complete = %v, missing = %v, revision = %d; want false, [b], 0", first.Complete, first.Missing, first.Revision)
	}
	for _, b := range late {
		tb.publish(t, b, "")
	}
	testkit.WaitFor(t, 10*time.Second, "revision 1", func() bool { return tb.revisions(t, "r1", 9)[1] != nil })
	raw := tb.revisions(t, "r1", 9)[1]
	got := decodeResult(t, raw.Data)
	if want := poolOf(t, all).Result(); canonical(t, got) != canonical(t, want) {
		t.Errorf("revision 1 =\n%s\nwant (every batch pooled)\n%s", canonical(t, got), canonical(t, want))
	}
	if !got.Complete || got.ThroughSeq <= first.ThroughSeq {
		t.Errorf("revision 1 complete = %v, through_seq = %d (revision 0: %d); want true, higher", got.Complete, got.ThroughSeq, first.ThroughSeq)
	}
	if id := raw.Header.Get(jetstream.MsgIDHeader); id != messages.ResultMsgID("r1", 9, 1) {
		t.Errorf("revision 1 Nats-Msg-Id = %q, want %q", id, messages.ResultMsgID("r1", 9, 1))
	}

	tb.publish(t, late[0], "") // stored again under a new message id: a duplicate batch
	testkit.WaitFor(t, 10*time.Second, "the duplicate settled", func() bool { return tb.consumed(t, "agg-late", 0) })
	agg.stop(t)
	startAgg(t, tb.nc, &Options{Durable: "agg-late-2", StepTimeout: 300 * time.Millisecond})
	testkit.WaitFor(t, 10*time.Second, "the second aggregator to go through the stream", func() bool { return tb.consumed(t, "agg-late-2", 0) })
	// Nothing is left unacknowledged: a re-opened step holds its anchor until it closes.
	if revs := tb.revisions(t, "r1", 9); len(revs) != 2 {
		t.Errorf("step results of step 9 = %d revisions, want 2 (a duplicate and a replay add none)", len(revs))
	}
}
