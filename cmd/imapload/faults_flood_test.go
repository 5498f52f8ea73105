package main

import (
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// faultMemoryBound is the aggregator process's peak resident set the
// hostile-input tests allow (issue 10).
const faultMemoryBound = 128 << 20

// forgedNewStep is a small valid batch for run's step, a step nobody
// commanded, claiming a 24 h window: the flood of finding 1.
func forgedNewStep(run string, step int) *messages.SampleBatch {
	info := messages.StepInfo{FleetRate: 1, Rate: 1, Producers: 1, Duration: int64(24 * time.Hour)}
	return recorder.New(run, step, "forger", info, &recorder.Options{Seed: 1}).Cut(-time.Second, -time.Second, false, messages.Health{})
}

// floodNewSteps yields count forged batches of run, steps from first on.
func floodNewSteps(run string, first, count int) func(yield func(*messages.SampleBatch) bool) {
	return func(yield func(*messages.SampleBatch) bool) {
		for i := range count {
			if !yield(forgedNewStep(run, first+i)) {
				return
			}
		}
	}
}

// TestFaultFloodOfNewSteps is issue 10's finding 1 with real processes:
// 10,000 forged batches, each for a new step without a command and with a
// 24 h window, are published around a real step: half before its command,
// half while it runs. The real step's result is complete, from every
// producer (it was not closed at its deadline), pooling the real batches
// alone; no forged step gets a result; the aggregator's peak resident set
// stays under 128 MB. The delay from the step's end (the last final batch
// stored) to its result is logged, not asserted.
func TestFaultFloodOfNewSteps(t *testing.T) {
	t.Parallel()
	const run, forge, flood = "fault-flood", "fault-forge", 10_000
	f := startFaultFleet(t, faultOptions{name: "fflood"})
	start := time.Now()
	n1, _ := f.forgeBatches(t, floodNewSteps(forge, 1, flood/2))
	f.step(t, run, 1, 40, 3*time.Second)
	n2, _ := f.forgeBatches(t, floodNewSteps(forge, flood/2+1, flood/2))
	t.Logf("%d forged batches stored in %v", n1+n2, time.Since(start).Round(time.Millisecond))

	r := latest(t, f.js, run, 1, time.Minute, nil)
	f.checkWhole(t, r)
	end := stepEnd(t, f.js, run, 1)
	f.awaitSettled(t, 2*time.Minute)
	peak := vmHWM(t, f.aggP)
	t.Logf("the real step's result %v after its last final batch was stored; aggregator VmHWM %d MB; %d log lines about rejected batches",
		r.Generated.Sub(end).Round(time.Millisecond), peak>>20, strings.Count(f.aggP.stderr.String(), "rejected"))
	if peak >= faultMemoryBound {
		t.Errorf("aggregator VmHWM = %d MB after %d forged batches, want under %d MB", peak>>20, n1+n2, faultMemoryBound>>20)
	}
	if got := streamResults(t, f.js, forge); len(got) != 0 {
		t.Errorf("%d forged steps got a result, want none", len(got))
	}
}
