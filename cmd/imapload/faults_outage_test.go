package main

import (
	"github.com/imapload/imapload/internal/testkit"
	"testing"
	"time"
)

// outage SIGKILLs the NATS process, holds it down for hold, and starts it
// again on the same port and store.
func (f *faultFleet) outage(t *testing.T, hold time.Duration) {
	t.Helper()
	kill(t, f.natsP)
	time.Sleep(hold) // the outage itself, for its stated length
	f.startNATS(t)
}

// TestFaultNATSOutageLong is issue 10's findings 4 and 5: the NATS process
// is SIGKILLed 3 s into a 20 s step's window and restarted 40 s later on the
// same port and store directory. The producers hold their batches through
// the outage and publish them after; the step's latest result revision is
// complete, from every producer, none lost, with every stored batch pooled
// once. Then a step without an explicit producer count (the producers count
// themselves in the registry, a memory-storage bucket the restart emptied)
// is accepted by every producer and gets its result.
// (With the producers' former 30 s retry budget they gave up the held
// batches, finals included, 10 s before NATS was back.)
func TestFaultNATSOutageLong(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel()
	const run = "fault-out40"
	f := startFaultFleet(t, faultOptions{name: "fout40"})
	w := watchWindow(t, f.nc, run)
	f.step(t, run, 1, 40, 20*time.Second)
	w.awaitWindow(t, 1, 3*time.Second, time.Minute, f.ids...)
	f.outage(t, 40*time.Second)
	up := time.Now()

	r := latest(t, f.js, run, 1, 2*time.Minute, complete)
	t.Logf("step 1 after a 40 s outage: revision %d %v after NATS came back; %d batches, %d scheduled, %d succeeded, lost %d, duplicates %d",
		r.Revision, time.Since(up).Round(100*time.Millisecond), r.Batches, r.Scheduled, r.Succeeded, r.Lost, r.Duplicates)
	f.checkWhole(t, r)
	for _, p := range f.producers {
		if p.exited() {
			t.Errorf("%s exited during the outage (%v)", p.name, p.waitErr)
		}
	}

	awaitProducers(t, f.nc, f.ids...)
	f.step(t, run, 2, 40, 3*time.Second)
	r2 := latest(t, f.js, run, 2, time.Minute, complete)
	f.checkWhole(t, r2)
	t.Logf("step 2 after the restart, no --producers: %d batches, %d succeeded", r2.Batches, r2.Succeeded)
}

// TestFaultNATSOutageShort: the NATS process is SIGKILLed 1 s into a 6 s
// step's window and restarted 6 s later. Nothing is lost or counted twice:
// the step's latest result is complete, none lost, and pools each of the
// stream's batches once. Then (finding 5) a step without an explicit
// producer count is accepted by every producer (they recreated the
// memory-storage registry bucket the restart emptied) and gets its result.
func TestFaultNATSOutageShort(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel()
	const run = "fault-out6"
	f := startFaultFleet(t, faultOptions{name: "fout6"})
	w := watchWindow(t, f.nc, run)
	f.step(t, run, 1, 40, 6*time.Second)
	w.awaitWindow(t, 1, time.Second, time.Minute, f.ids...)
	f.outage(t, 6*time.Second)
	r := latest(t, f.js, run, 1, 2*time.Minute, complete)
	t.Logf("step 1 after a 6 s outage: revision %d, %d batches, %d scheduled, lost %d, duplicates %d", r.Revision, r.Batches, r.Scheduled, r.Lost, r.Duplicates)
	f.checkWhole(t, r)

	awaitProducers(t, f.nc, f.ids...)
	f.step(t, run, 2, 40, 3*time.Second)
	r2 := latest(t, f.js, run, 2, time.Minute, complete)
	f.checkWhole(t, r2)
	t.Logf("step 2 after the restart, no --producers: %d batches, %d succeeded", r2.Batches, r2.Succeeded)
}
