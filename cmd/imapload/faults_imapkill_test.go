package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// TestFaultIMAPServerKilled SIGKILLs the IMAP server process 1 s into a 6 s
// step's window and starts it again on the same port 2 s later. The step
// gets a result, complete, from both producers, with the failures grouped by
// (phase, kind), each group once, most frequent first; the producers keep
// running, and the next step, against the new server, succeeds.
func TestFaultIMAPServerKilled(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel()
	const run = "fault-imap"
	f := startFaultFleet(t, faultOptions{name: "fimap"})
	w := watchWindow(t, f.nc, run)
	f.step(t, run, 1, 40, 6*time.Second)
	w.awaitWindow(t, 1, time.Second, time.Minute, f.ids...)
	kill(t, f.imapP)
	time.Sleep(2 * time.Second) // the outage itself, for its stated length
	f.startIMAP(t)

	r := latest(t, f.js, run, 1, time.Minute, nil)
	f.checkWhole(t, r)
	t.Logf("step 1, server killed for 2 s: %d scheduled, %d succeeded, %d dropped", r.Scheduled, r.Succeeded, r.Dropped)
	checkErrorGroups(t, r)
	for _, p := range f.producers {
		if p.exited() {
			t.Errorf("%s exited (%v) when the IMAP server was killed", p.name, p.waitErr)
		}
	}
	f.step(t, run, 2, 40, 3*time.Second)
	r2 := latest(t, f.js, run, 2, time.Minute, nil)
	f.checkWhole(t, r2)
	t.Logf("step 2, against the new server: %d scheduled, %d succeeded, %d error groups", r2.Scheduled, r2.Succeeded, len(r2.Errors))
	if r2.Succeeded == 0 {
		t.Errorf("step 2 after the restart: %d of %d scheduled commands succeeded, want some", r2.Succeeded, r2.Scheduled)
	}
}

// checkErrorGroups checks that r has errors, each (phase, kind) group once
// with a count, most frequent first, and logs them.
func checkErrorGroups(t *testing.T, r messages.StepResult) {
	t.Helper()
	if len(r.Errors) == 0 {
		t.Fatalf("step %d: no errors, want the failures of the killed server (%d scheduled, %d succeeded)", r.Step, r.Scheduled, r.Succeeded)
	}
	seen := map[string]bool{}
	for i, e := range r.Errors {
		key := e.Phase + ": " + e.Kind
		t.Logf("step %d error group %s: %d", r.Step, key, e.Count)
		if seen[key] || e.Count == 0 {
			t.Errorf("step %d error group %q: repeated or empty (count %d)", r.Step, key, e.Count)
		}
		seen[key] = true
		if i > 0 && e.Count > r.Errors[i-1].Count {
			t.Errorf("step %d error groups not most frequent first: %s", r.Step, fmt.Sprint(r.Errors))
		}
	}
}
