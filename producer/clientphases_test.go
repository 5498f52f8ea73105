package producer_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// clientPhases are the commands real clients send beside the default mix,
// each its own phase.
var clientPhases = []string{"status", "search_date", "search_header", "body", "copy", "move", "expunge", "noop", "idle"}

// TestClientPhases runs, for each client command, a short step whose mix
// names it beside APPEND (messages of imapload's own for MOVE and EXPUNGE)
// and FETCH (sizes for the body FETCH's choice), against the embedded
// server seeded with 5 messages per INBOX. Each phase has successes and no
// error the server caused; the integrity checks of the APPENDs are counted.
func TestClientPhases(t *testing.T) {
	t.Parallel()
	f := newFleet(t, nil)
	f.start(f.options("cp", 4))
	f.waitLive(1)
	runClientPhases(t, f, "cp", `"rate":120,"warmup":"300ms","duration":"1s","stagger":"100ms"`)
}

// runClientPhases runs, on the fleet's only producer, id, one step per
// client phase with the rate and timing in shape, and a mix naming the
// phase beside APPEND and FETCH, fetching recent messages. Each phase must
// have successes and no error the server caused, and the APPENDs'
// integrity checks must have run and passed.
func runClientPhases(t *testing.T, f *fleet, id, shape string) {
	t.Helper()
	var checks messages.Checks
	for i, name := range clientPhases {
		t.Run(name, func(t *testing.T) {
			bs := f.runStep(id, id, i+1, fmt.Sprintf(`%s,"mix":{%q:4,"append":1,"fetch":1},"fetch_target":"recent"`, shape, name))
			p, _ := messages.ParsePhase(name)
			if ok := checkPhase(t, bs, p); ok == 0 {
				t.Errorf("phase %s: no success in the window, want some", name)
			} else {
				t.Logf("%s: %d succeeded, service P50 %v", name, ok, quantile(t, bs, p, service, 0.5))
			}
			for _, b := range bs {
				checks.Add(b.Checks)
			}
		})
	}
	t.Logf("integrity checks %+v", checks)
	if checks.Run == 0 || checks.Failed != 0 || checks.Unaddressable != 0 {
		t.Errorf("integrity checks = %+v, want some run, none failed, every APPEND addressable (UIDPLUS)", checks)
	}
}

// checkPhase fails on any error of any phase that is not the generator's,
// and returns the successes of phase p.
func checkPhase(t *testing.T, bs []*messages.SampleBatch, p messages.Phase) (ok uint64) {
	t.Helper()
	for _, b := range bs {
		for _, ps := range b.Phases {
			if ps.Phase == p {
				ok += ps.Succeeded
			}
			for _, e := range ps.Errors {
				if !strings.HasPrefix(e.Kind, messages.GeneratorKind) {
					t.Errorf("phase %v: %d errors of kind %q (e.g. %q), want none the server caused", ps.Phase, e.Count, e.Kind, e.Example)
				}
			}
		}
	}
	return ok
}
