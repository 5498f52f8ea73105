package aggregator

import (
	"slices"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// TestSharedIDNamed: two processes run as producer "a" (one --id copied into
// two containers) beside "b". Their batches carry the same sequence numbers,
// so the second process's are pooled as duplicates and half of "a"'s load
// vanishes from the counts. The result names the id and its two instances as
// the cause (shared_id, inconclusive), never a rate_mismatch.
func TestSharedIDNamed(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	tb.command(t, "r1", 1)
	first := stepBatches("r1", 1, []string{"a", "b"}, 2)
	second := stepBatches("r1", 1, []string{"a", "b"}, 2)
	instance := map[string]string{"a": "1111aaaa", "b": "2222bbbb"}
	for _, b := range first {
		tb.publish(t, b, messages.InstanceBatchMsgID(b.Run, b.Step, b.Producer, instance[b.Producer], b.Seq))
	}
	for _, b := range second {
		if b.Producer == "a" { // the second process with id "a"
			tb.publish(t, b, messages.InstanceBatchMsgID(b.Run, b.Step, b.Producer, "3333cccc", b.Seq))
		}
	}
	startAgg(t, tb.nc, &Options{Durable: "agg-shared"})
	got, _ := tb.waitResult(t, "r1", 1, 10*time.Second)
	want := []messages.SharedID{{Producer: "a", Instances: []string{"1111aaaa", "3333cccc"}}}
	if !slices.EqualFunc(got.SharedIDs, want, func(x, y messages.SharedID) bool {
		return x.Producer == y.Producer && slices.Equal(x.Instances, y.Instances)
	}) {
		t.Errorf("SharedIDs = %+v, want %+v", got.SharedIDs, want)
	}
	if got.Verdict != messages.VerdictInconclusive || !verdict.Has(got, messages.ReasonSharedID) || verdict.Has(got, messages.ReasonRateMismatch) {
		t.Errorf("verdict %s, reasons %+v; want inconclusive for shared_id alone", got.Verdict, got.Reasons)
	}
	if got.Duplicates == 0 {
		t.Errorf("duplicates = 0, want the second process's batches counted as duplicates")
	}
}

// TestOneInstanceNotShared: a producer that restarts between steps has a new
// instance, but within one step each id has one: nothing is named.
func TestOneInstanceNotShared(t *testing.T) {
	p := poolOf(t, stepBatches("r1", 1, []string{"a", "b"}, 2))
	p.From("a", "1111aaaa")
	p.From("b", "2222bbbb")
	p.From("a", "1111aaaa")
	p.From("b", "") // an id without an instance says nothing
	if r := p.Result(); len(r.SharedIDs) != 0 || verdict.Has(r, messages.ReasonSharedID) {
		t.Errorf("SharedIDs = %+v, reasons %+v; want none", r.SharedIDs, r.Reasons)
	}
}
