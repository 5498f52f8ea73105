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
	var checks messages.Checks
	for i, name := range clientPhases {
		t.Run(name, func(t *testing.T) {
			bs := f.runStep("cp", "cp", i+1, fmt.Sprintf(`"rate":120,"warmup":"300ms","duration":"1s","stagger":"100ms",
				"mix":{%q:4,"append":1,"fetch":1},"fetch_target":"recent"`, name))
			p, _ := messages.ParsePhase(name)
			ok := checkPhase(t, bs, p)
			if ok == 0 {
				t.Errorf("phase %s: no success in the window, want some", name)
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
