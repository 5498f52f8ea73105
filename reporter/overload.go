package reporter

import (
	"fmt"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// overloadFindings speak of the steps that ran after an overload (steps,
// in step order): which they are, whether the re-offer of a rate that had
// held held again (the server recovered, or not), and whether the same
// rate's latencies differ before and after beyond their intervals
// (hysteresis).
func overloadFindings(steps []messages.StepResult, threshold float64) []string {
	var out []string
	if f := afterOverloadFinding(steps); f != "" {
		out = append(out, f)
	}
	for _, rc := range verdict.Rechecks(steps, threshold) {
		before, after, over := stepNumbered(steps, rc.Before), stepNumbered(steps, rc.Step), stepNumbered(steps, rc.Overload)
		out = append(out, recheckFinding(before, after, over, threshold))
		out = append(out, hysteresisFindings(before, after)...)
	}
	return out
}

// afterOverloadFinding names the steps that offered less than a step that
// had fallen below before them: they measured a server that had been
// overloaded.
func afterOverloadFinding(steps []messages.StepResult) string {
	var over *messages.StepResult
	var after []int
	first := 0
	for i := range steps {
		s := &steps[i]
		if over != nil && s.TargetRate < over.TargetRate && !isInconclusive(s) {
			after = append(after, s.Step)
		}
		if s.Verdict == messages.VerdictBelow && (over == nil || s.TargetRate > over.TargetRate) {
			over = s
			if first == 0 {
				first = s.Step
			}
		}
	}
	if len(after) == 0 {
		return ""
	}
	they := "they"
	if len(after) == 1 {
		they = "it"
	}
	return fmt.Sprintf("%s ran after an overload (step %d fell below first) at lower rates: %s measured a server that had been overloaded",
		stepsWord(after), first, they)
}

// recheckFinding says whether a re-offer after an overload held again.
func recheckFinding(before, after, over *messages.StepResult, threshold float64) string {
	if stepVerdict(after, threshold) == messages.VerdictHeld {
		return fmt.Sprintf("the server recovered after the overload of step %d (%s/s offered, %s/s delivered): step %d re-offered %s/s and it held again (%s/s delivered, %s/s at step %d before)",
			over.Step, rate(over.TargetRate), rate(over.DeliveredRate), after.Step, rate(after.TargetRate), rate(after.DeliveredRate), rate(before.DeliveredRate), before.Step)
	}
	return fmt.Sprintf("the server did not recover after overload: held %s/s before it (step %d), %s/s delivered after it (step %d, after the overload of step %d at %s/s and a cool-down); the bracket was measured before the overload, and what the server sustains after one may be lower",
		rate(before.TargetRate), before.Step, rate(after.DeliveredRate), after.Step, over.Step, rate(over.TargetRate))
}

// hysteresisFindings compare a rate's latencies before and after an
// overload, phase by phase: a P50 or P99 whose 95% intervals do not
// overlap changed beyond what the measurement resolves.
func hysteresisFindings(before, after *messages.StepResult) []string {
	var out []string
	for _, name := range phaseNames(before.Phases) {
		a, ok := after.Phases[name]
		if !ok {
			continue
		}
		b := before.Phases[name]
		for _, q := range []struct {
			label  string
			bv, av float64
			bi, ai messages.Interval
		}{{"P50", b.P50, a.P50, b.CI.P50, a.CI.P50}, {"P99", b.P99, a.P99, b.CI.P99, a.CI.P99}} {
			if !apart(q.bi, q.ai) {
				continue
			}
			out = append(out, fmt.Sprintf("hysteresis at %s/s: the %s %s was %s ms (95%% CI %s–%s) before the overload (step %d) and %s ms (%s–%s) after it (step %d), beyond their intervals",
				rate(before.TargetRate), name, q.label, ms(q.bv), ms(q.bi[0]), ms(q.bi[1]), before.Step, ms(q.av), ms(q.ai[0]), ms(q.ai[1]), after.Step))
		}
	}
	return out
}

// apart reports whether two closed intervals are known and do not overlap.
func apart(a, b messages.Interval) bool {
	if a.Open() || b.Open() || a == (messages.Interval{}) || b == (messages.Interval{}) {
		return false
	}
	return a[1] < b[0] || b[1] < a[0]
}

// stepNumbered is the step numbered n among steps.
func stepNumbered(steps []messages.StepResult, n int) *messages.StepResult {
	for i := range steps {
		if steps[i].Step == n {
			return &steps[i]
		}
	}
	return nil
}
