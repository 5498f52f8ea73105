package main

import (
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/verdict"
)

// TestRampRunIDReused: `imapload ramp --run x1` twice against one fleet.
// The second is refused before any step command, exit 2, naming the id and
// the way out; `imapload step` for a step that has a result likewise. (The
// second ramp used to be accepted as a duplicate, run nothing, wait a
// minute and exit 1 asking whether an aggregator was running.)
func TestRampRunIDReused(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel()
	f := startVerdictFleet(t, vFleetOptions{name: "reuse", producerArgs: lagTolerant})
	args := []string{"ramp", "--run", "x1", "--rates", "20", "--step-duration", "1s", "--warmup", "200ms", "--stagger", "100ms", "--result-wait", "20s"}
	first := runOnce(t, f.env, 2*time.Minute, args...)
	checkExit(t, first, verdict.ExitOK, "a one-step ramp that holds")
	again := runOnce(t, f.env, time.Minute, args...)
	checkExit(t, again, verdict.ExitUsage, "a run id that has results")
	for _, want := range []string{"run x1 already has results (step 1, the first published ", "use a fresh one, or --run auto"} {
		if !strings.Contains(again.stderr, want) {
			t.Errorf("second ramp --run x1 does not say %q:\n%s", want, again)
		}
	}
	if strings.Contains(again.stdout, "step 1: 20 commands/s") || strings.Contains(again.stderr+again.stdout, "is an aggregator") {
		t.Errorf("second ramp --run x1 offered a step or blamed the aggregator:\n%s", again)
	}
	step := runOnce(t, f.env, time.Minute, "step", "--run", "x1", "--step", "1", "--rate", "20", "--duration", "1s")
	checkExit(t, step, verdict.ExitUsage, "a step that has a result")
	if want := "run x1 step 1 already has a result (published "; !strings.Contains(step.stderr, want) || strings.Contains(step.stdout, "published imapload.step") {
		t.Errorf("step --run x1 --step 1 after the ramp: want %q and nothing published:\n%s", want, step)
	}
}
