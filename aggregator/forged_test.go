package aggregator

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// floodSteps is how many forged batches, each for a new step, the flood
// test publishes: as many as froze the landed aggregator.
const floodSteps = 10_000

// forged is a small valid batch of run's step claiming a 24 h window, as
// the flood that froze the landed aggregator was made of.
func forged(run string, step int) *messages.SampleBatch {
	info := messages.StepInfo{FleetRate: 1, Rate: 1, Producers: 1, Duration: int64(24 * time.Hour)}
	return recorder.New(run, step, "forger", info, &recorder.Options{Seed: 1}).Cut(-time.Second, -time.Second, false, messages.Health{})
}

// publishAsync publishes batches as fast as the stream takes them.
func (tb *testBus) publishAsync(t *testing.T, batches func(yield func(*messages.SampleBatch) bool)) (n, size int) {
	t.Helper()
	for b := range batches {
		data, err := messages.EncodeBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		m := nats.NewMsg(messages.SamplesSubject(b.Run, b.Step, b.Producer))
		m.Data = data
		if _, err := tb.js.PublishMsgAsync(m, jetstream.WithMsgID(messages.BatchMsgID(b.Run, b.Step, b.Producer, b.Seq))); err != nil {
			<-tb.js.PublishAsyncComplete()
			if _, err = tb.js.PublishMsgAsync(m); err != nil {
				t.Fatalf("PublishMsgAsync: %v", err)
			}
		}
		n, size = n+1, size+len(data)
	}
	select {
	case <-tb.js.PublishAsyncComplete():
	case <-time.After(60 * time.Second):
		t.Fatal("flood not stored within 60s")
	}
	return n, size
}

// heapWatch samples the live heap until stopped and keeps the highest.
type heapWatch struct {
	stop chan struct{}
	done chan uint64
}

func watchHeap() *heapWatch {
	h := &heapWatch{stop: make(chan struct{}), done: make(chan uint64, 1)}
	go func() {
		var peak uint64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-h.stop:
				h.done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

func (h *heapWatch) peak() uint64 {
	close(h.stop)
	return <-h.done
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC() // the second also empties sync.Pools
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestForgedFloodOfNewSteps is finding 1: 10,000 forged batches, each for
// a new step with a 24 h window, froze the landed aggregator. Now none of
// them opens a step (none has a command), the consumer keeps moving, the
// warnings are a few lines, the heap stays under 128 MB, and a real step
// published behind the flood gets its result.
func TestForgedFloodOfNewSteps(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	logs := &logBuffer{}
	agg := startAgg(t, tb.nc, &Options{Durable: "agg-flood", Logger: logs.logger()})
	heap := watchHeap()
	tb.command(t, "real", 1)
	n, _ := tb.publishAsync(t, func(yield func(*messages.SampleBatch) bool) {
		for i := range floodSteps {
			if !yield(forged("forge", i+1)) {
				return
			}
		}
	})
	for _, b := range stepBatches("real", 1, []string{"a", "b"}, 2) {
		tb.publish(t, b, "")
	}
	in := time.Now()
	got, _ := tb.waitResult(t, "real", 1, 60*time.Second)
	peak := heap.peak()
	t.Logf("%d forged batches: the real step's result %v after its last batch; heap peak %d MB", n, time.Since(in).Round(time.Millisecond), peak>>20)
	if !got.Complete || got.Batches != 6 {
		t.Errorf("real StepResult complete = %v, batches = %d; want true, 6", got.Complete, got.Batches)
	}
	if peak >= 128<<20 {
		t.Errorf("heap peaked at %d MB during the flood, want under 128 MB", peak>>20)
	}
	testkit.WaitFor(t, 60*time.Second, "every forged batch settled", func() bool { return tb.consumed(t, "agg-flood", 0) })
	msg := "aggregator: batch rejected: " + ReasonNoCommand
	if got := agg.a.warn.total(msg); got != uint64(n) {
		t.Errorf("batches rejected for %q = %d, want %d", ReasonNoCommand, got, n)
	}
	if lines := logs.count(msg); lines > 20 {
		t.Errorf("%d log lines for %d rejected batches, want a few (rate-limited)", lines, n)
	}
	if r := tb.results(t, "forge"); len(r) != 0 {
		t.Errorf("results for forged steps = %d, want 0", len(r))
	}
}

// bigForged are large valid batches, each for a new step of run.
func bigForged(run string, count, size int) func(yield func(*messages.SampleBatch) bool) {
	info := messages.StepInfo{FleetRate: 1e6, Rate: 1e6, Producers: 1, Duration: int64(24 * time.Hour)}
	rec := recorder.New(run, 1, "forger", info, &recorder.Options{Seed: 1, Reservoir: size})
	for _, ph := range []messages.Phase{messages.List, messages.Select, messages.Fetch, messages.Store} {
		for i := range 2 * size {
			d := time.Duration(100+i*7919%100_000) * time.Microsecond
			rec.Record(ph, d, d/2)
		}
	}
	proto := rec.Cut(0, time.Second, false, messages.Health{})
	return func(yield func(*messages.SampleBatch) bool) {
		for i := range count {
			b := *proto
			b.Step = i + 1
			if !yield(&b) {
				return
			}
		}
	}
}

// TestForgedBytesLeaveNoHeap is finding 3: 240 MB of forged but valid
// batches raised the landed aggregator's heap by 256 MB for good. Now they
// are rejected without being kept, and once the flood and a real step are
// through, the live heap is back near where it started.
func TestForgedBytesLeaveNoHeap(t *testing.T) {
	t.Parallel() // a NATS server of its own
	testkit.Require(t, testkit.Long)
	tb := startBus(t)
	startAgg(t, tb.nc, &Options{Durable: "agg-bytes"})
	tb.command(t, "warm", 1)
	for _, b := range stepBatches("warm", 1, []string{"a"}, 1) {
		tb.publish(t, b, "")
	}
	tb.waitResult(t, "warm", 1, 20*time.Second)
	base := liveHeap()
	count := 1100 // 240 MB, as in the finding
	if raceEnabled || testing.Short() {
		count = 200 // the race detector makes each batch a few times slower to store
	}
	_, size := tb.publishAsync(t, bigForged("bytes", count, 8192))
	tb.command(t, "real", 1)
	for _, b := range stepBatches("real", 1, []string{"a", "b"}, 2) {
		tb.publish(t, b, "")
	}
	tb.waitResult(t, "real", 1, 60*time.Second)
	testkit.WaitFor(t, 60*time.Second, "every forged batch settled", func() bool { return tb.consumed(t, "agg-bytes", 0) })
	if r := tb.results(t, "bytes"); len(r) != 0 {
		t.Errorf("results for forged steps = %d, want 0", len(r))
	}
	// The in-process server caches a stream's blocks for 10 s after their
	// last use: poll, and give it a few times that.
	var after uint64
	testkit.WaitFor(t, 60*time.Second, "the live heap back near where it started", func() bool {
		after = liveHeap()
		return after <= base+32<<20
	})
	t.Logf("forged %d MB: live heap %d MB before, %d MB after", size>>20, base>>20, after>>20)
}

// TestForgedBatchesCannotReshapeStep is finding 2 end to end: forged
// batches published around a real step leave its result as the real
// batches alone make it, and a step never commanded gets no result.
func TestForgedBatchesCannotReshapeStep(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	tb.command(t, "r1", 1)
	real := stepBatches("r1", 1, []string{"a", "b"}, 2)
	early := forgeFrom(real[0], "0", 0) // sorts first: the landed pool took the step's shape from it
	early.Info.Duration = int64(time.Millisecond)
	tb.publish(t, early, "")
	huge := forgeFrom(real[2], "c", 1)
	huge.Scheduled, huge.Completed = 1e15, 1e15
	tb.publish(t, huge, "")
	for i := range 4 {
		wrap := forgeFrom(real[2], "d", uint64(i+1))
		wrap.Scheduled, wrap.Completed = 1<<62, 1<<62
		tb.publish(t, wrap, "")
	}
	for _, b := range stepBatches("r1", 999, []string{"a"}, 1) {
		tb.publish(t, b, "")
	}
	for _, b := range real {
		tb.publish(t, b, "")
	}
	startAgg(t, tb.nc, &Options{Durable: "agg-reshape"})
	got, _ := tb.waitResult(t, "r1", 1, 20*time.Second)
	if want := poolOf(t, real).Result(); canonical(t, got) != canonical(t, want) {
		t.Errorf("StepResult with forged batches =\n%s\nwant (real batches only)\n%s", canonical(t, got), canonical(t, want))
	}
	if len(got.Rejected) == 0 {
		t.Errorf("StepResult.Rejected is empty, want the forged batches counted by reason")
	}
	testkit.WaitFor(t, 20*time.Second, "every batch settled", func() bool { return tb.consumed(t, "agg-reshape", 0) })
	for _, m := range tb.results(t, "r1") {
		if r := decodeResult(t, m.Data); r.Step != 1 {
			t.Errorf("result published for step %d, never commanded", r.Step)
		}
	}
}

func decodeResult(t *testing.T, data []byte) messages.StepResult {
	t.Helper()
	var r messages.StepResult
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("result JSON: %v", err)
	}
	return r
}

// TestCommandBehindBatch publishes a step's batches a few milliseconds
// before its command, as the server may store them: they wait for it (were
// they rejected, no later batch would open the step).
func TestCommandBehindBatch(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	startAgg(t, tb.nc, &Options{Durable: "agg-behind"})
	batches := stepBatches("r1", 1, []string{"a"}, 1)
	for _, b := range batches {
		tb.publish(t, b, "")
	}
	tb.command(t, "r1", 1)
	got, _ := tb.waitResult(t, "r1", 1, 20*time.Second)
	if want := poolOf(t, batches).Result(); canonical(t, got) != canonical(t, want) {
		t.Errorf("StepResult =\n%s\nwant\n%s", canonical(t, got), canonical(t, want))
	}
}

// TestMaxOpenSteps runs more steps at once than may be open: the others
// wait, and every step gets its result.
func TestMaxOpenSteps(t *testing.T) {
	t.Parallel() // a NATS server of its own
	tb := startBus(t)
	var all [][]*messages.SampleBatch
	for step := 1; step <= 3; step++ {
		tb.command(t, "r1", step)
		batches := stepBatches("r1", step, []string{"a"}, 1)
		all = append(all, batches)
		for _, b := range batches[:1] { // accepted, then slow
			tb.publish(t, b, "")
		}
	}
	logs := &logBuffer{}
	startAgg(t, tb.nc, &Options{Durable: "agg-max", MaxOpenSteps: 2, Logger: logs.logger()})
	testkit.WaitFor(t, 20*time.Second, "a batch delayed for room", func() bool { return logs.count("too many open steps") > 0 })
	for _, batches := range all {
		for _, b := range batches[1:] {
			tb.publish(t, b, "")
		}
	}
	for step := 1; step <= 3; step++ {
		got, _ := tb.waitResult(t, "r1", step, 20*time.Second)
		if want := poolOf(t, all[step-1]).Result(); canonical(t, got) != canonical(t, want) {
			t.Errorf("StepResult of step %d =\n%s\nwant\n%s", step, canonical(t, got), canonical(t, want))
		}
	}
}
