package main

import (
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/verdict"
)

// TestRampWithoutAggregator: with no aggregator running, the live line
// stops when the step's window is over, one line says what the ramp waits
// for and who sends it, and the run ends as one that could not be carried out (exit 1), naming the command
// that starts an aggregator. (It used to repeat the progress line for the
// whole wait.)
func TestRampWithoutAggregator(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel()
	f := startVerdictFleet(t, vFleetOptions{name: "noagg", noAggregator: true})
	o := runOnce(t, f.env, 2*time.Minute, "ramp", "--run", "noagg", "--rates", "20",
		"--step-duration", "2s", "--warmup", "500ms", "--stagger", "200ms", "--result-wait", "6s")
	checkExit(t, o, verdict.ExitError, "no step result: the run could not be carried out")
	if want := "step 1: window over; waiting up to 6s for its result from the aggregator (imapload aggregator)"; !strings.Contains(o.stdout, want) {
		t.Errorf("ramp output lacks %q:\n%s", want, o)
	}
	// The window is 2.5 s: a line every 2 s, and one as it ends.
	if n := strings.Count(o.stdout, "step 1  "); n > 3 {
		t.Errorf("ramp printed the progress line %d times, want at most 3 (not through the wait):\n%s", n, o.stdout)
	}
	if !strings.Contains(o.stderr+o.stdout, "imapload aggregator") {
		t.Errorf("ramp's error does not name the command that starts an aggregator:\n%s", o)
	}
}
