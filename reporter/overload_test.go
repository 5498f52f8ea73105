package reporter

import (
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// overloadRun is a ramp of 100, 200 held and 400 below, a re-offer of 200
// that delivered delivered200 with the fetch P99 interval p99 (step 2's is
// [1, 1.2] ms), and, when more is set, a midpoint of 300.
func overloadRun(delivered200 float64, p99 messages.Interval, more bool) []messages.StepResult {
	step := func(n int, target, delivered float64, ci messages.Interval) messages.StepResult {
		return messages.StepResult{Step: n, TargetRate: target, DeliveredRate: delivered, Ratio: delivered / target, Complete: true, Producers: []string{"p1"},
			Phases: map[string]messages.PhaseResult{"fetch": {Count: 1000, Percentiles: messages.Percentiles{P99: (ci[0] + ci[1]) / 2}, CI: messages.Intervals{P99: ci}}}}
	}
	steps := []messages.StepResult{step(1, 100, 100, messages.Interval{1, 1.2}), step(2, 200, 200, messages.Interval{1, 1.2}),
		step(3, 400, 250, messages.Interval{50, 60}), step(4, 200, delivered200, p99)}
	if more {
		steps = append(steps, step(5, 300, 300, messages.Interval{1, 1.3}))
	}
	return steps
}

// TestBuildRecovered: a re-offer that held again is neither the knee nor
// the last held step; the midpoint after it narrows the bracket; the
// findings say the server recovered, which steps ran after the overload,
// and the same rate's P99 moved beyond its interval (hysteresis).
func TestBuildRecovered(t *testing.T) {
	rep := Build("r", overloadRun(200, messages.Interval{2, 2.4}, true), 0, time.Unix(0, 0))
	if rep.Verdict != messages.RunKnee || rep.Knee == nil || rep.Knee.Step != 3 || rep.LastHeld == nil || rep.LastHeld.Step != 5 {
		t.Fatalf("Build() verdict %q, knee %+v, last held %+v; want a knee at step 3 and the midpoint, step 5, last held", rep.Verdict, rep.Knee, rep.LastHeld)
	}
	all := strings.Join(rep.Findings, "\n")
	for _, w := range []string{
		"steps 4, 5 ran after an overload (step 3 fell below first)",
		"the server recovered after the overload of step 3 (400/s offered, 250/s delivered): step 4 re-offered 200/s and it held again",
		"hysteresis at 200/s: the fetch P99 was 1.10 ms (95% CI 1.00–1.20) before the overload (step 2) and 2.20 ms (2.00–2.40) after it (step 4)",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("Build() findings lack %q; got:\n%s", w, all)
		}
	}
}

// TestBuildNotRecovered: a re-offer that fell below does not pull the
// knee down: the bracket stays the one measured before the overload
// (held 200/s, below 400/s), and a finding says the server did not
// recover, with both figures.
func TestBuildNotRecovered(t *testing.T) {
	rep := Build("r", overloadRun(120, messages.Interval{1, 1.2}, false), 0, time.Unix(0, 0))
	if rep.Verdict != messages.RunKnee || rep.Knee == nil || rep.Knee.Step != 3 || rep.LastHeld == nil || rep.LastHeld.Step != 2 {
		t.Fatalf("Build() verdict %q, knee %+v, last held %+v; want the bracket of before the overload: knee step 3, last held step 2", rep.Verdict, rep.Knee, rep.LastHeld)
	}
	all := strings.Join(rep.Findings, "\n")
	want := "the server did not recover after overload: held 200/s before it (step 2), 120/s delivered after it (step 4, after the overload of step 3 at 400/s and a cool-down)"
	if !strings.Contains(all, want) || strings.Contains(all, "hysteresis") {
		t.Errorf("Build() findings lack %q (and want no hysteresis of P99, whose intervals overlap); got:\n%s", want, all)
	}
	var b strings.Builder
	if err := WriteTable(&b, rep, nil); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "below (re-offer)") {
		t.Errorf("WriteTable():\n%s\nwant step 4 marked below (re-offer)", out)
	}
}

// TestBuildNoneHeld: a run whose every valid step fell below has no knee
// and no "last held: none" knee: its verdict is none_held, naming the
// lowest step, and the exit code is verdict.ExitNoneHeld.
func TestBuildNoneHeld(t *testing.T) {
	steps := kneeSteps([]st{{step: 1, target: 100, ratio: 0.2}, {step: 2, target: 50, ratio: 0.3}, {step: 3, target: 25, ratio: 0.5}})
	rep := Build("r", steps, 0, time.Unix(0, 0))
	if rep.Verdict != messages.RunNoneHeld || rep.Knee != nil || rep.LastHeld != nil {
		t.Fatalf("Build() verdict %q, knee %+v, last held %+v; want none_held, no knee, none held", rep.Verdict, rep.Knee, rep.LastHeld)
	}
	if len(rep.Reasons) != 1 || rep.Reasons[0].Code != messages.ReasonNoneHeld || !strings.Contains(rep.Reasons[0].Detail, "down to step 3 at 25/s offered (12.5/s delivered, ratio 0.50)") {
		t.Errorf("Build() reasons %+v, want one none_held naming step 3 at 25/s", rep.Reasons)
	}
	if got := verdict.ExitCode(rep); got != verdict.ExitNoneHeld {
		t.Errorf("ExitCode() = %d, want %d", got, verdict.ExitNoneHeld)
	}
	var b strings.Builder
	if err := WriteTable(&b, rep, nil); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "verdict:   none held") || strings.Contains(out, "knee:      step") {
		t.Errorf("WriteTable() summary:\n%s\nwant the none-held verdict and no knee step", out)
	}
}
