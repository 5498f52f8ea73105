package reporter

import (
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// DefaultThreshold is the delivered/target ratio under which a step is the
// knee: the server delivered less than 90% of what was offered.
const DefaultThreshold = verdict.DefaultThreshold

// FindKnee finds the knee of a ramp by verdict.Knee, after judging each step
// at threshold (verdict.Stamp): the first valid step, in ascending target
// rate order, below the threshold. Inconclusive steps are listed in invalid
// and never the knee nor the last held step.
//
// A threshold outside (0, 1] means DefaultThreshold.
func FindKnee(steps []messages.StepResult, threshold float64) (knee *messages.Knee, lastHeld *messages.StepRef, invalid []int) {
	return verdict.Knee(stamped(steps, threshold), threshold)
}

// stamped returns a copy of steps, each judged at threshold.
func stamped(steps []messages.StepResult, threshold float64) []messages.StepResult {
	out := make([]messages.StepResult, len(steps))
	for i, s := range steps {
		verdict.Stamp(&s, threshold)
		out[i] = s
	}
	return out
}

// thresholdOrDefault maps anything but a ratio in (0, 1] to DefaultThreshold.
func thresholdOrDefault(t float64) float64 { return verdict.Threshold(t) }

// byRate returns pointers to steps in ascending target rate, then step, order.
func byRate(steps []messages.StepResult) []*messages.StepResult { return verdict.ByRate(steps) }
