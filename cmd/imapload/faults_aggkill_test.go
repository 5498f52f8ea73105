package main

import (
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
)

// TestFaultAggregatorKilled SIGKILLs the aggregator process three times:
// one second into step 1's window; at step 2's end (stopped with SIGSTOP
// two seconds into the window, so that it cannot publish, and killed once
// every producer's final batch is on the wire); and between steps 2 and 3. Each time a new
// aggregator process starts on the same durable. Every step gets exactly
// one result (revision 0), complete, from every producer, with the batches
// and scheduled commands the stream holds, each counted once.
func TestFaultAggregatorKilled(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel()
	const run = "fault-agg"
	f := startFaultFleet(t, faultOptions{name: "fagg"})
	w := watchWindow(t, f.nc, run)
	b := watchBatches(t, f.nc, run)

	f.step(t, run, 1, 40, 3*time.Second)
	w.awaitWindow(t, 1, time.Second, time.Minute, f.ids...)
	kill(t, f.aggP)
	f.startAggregator(t)
	latest(t, f.js, run, 1, time.Minute, nil)

	f.step(t, run, 2, 40, 3*time.Second)
	w.awaitWindow(t, 2, 2*time.Second, time.Minute, f.ids...)
	if err := f.aggP.cmd.Process.Signal(syscall.SIGSTOP); err != nil { // it cannot publish step 2 before it dies
		t.Fatalf("SIGSTOP %s: %v", f.aggP.name, err)
	}
	testkit.WaitFor(t, time.Minute, "every producer's final batch of step 2", func() bool {
		return slices.Equal(b.finals(2), f.ids)
	})
	kill(t, f.aggP)
	published := len(streamResults(t, f.js, run)[2])
	f.startAggregator(t)
	restarted := time.Now()
	latest(t, f.js, run, 2, time.Minute, nil)
	t.Logf("step 2: %d result(s) stored when the aggregator was killed at the step's end; the next one published it %v after its start (a held message comes back after the consumer's AckWait)",
		published, time.Since(restarted).Round(100*time.Millisecond))

	kill(t, f.aggP)
	f.startAggregator(t)
	f.step(t, run, 3, 40, 3*time.Second)
	latest(t, f.js, run, 3, time.Minute, nil)

	f.awaitSettled(t, time.Minute)
	f.checkOnce(t, run, 3)
}
