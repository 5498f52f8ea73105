package reporter

import (
	"cmp"
	"slices"

	"github.com/imapload/imapload/messages"
)

// DefaultThreshold is the delivered/target ratio under which a step is the
// knee: the server delivered less than 90% of what was offered.
const DefaultThreshold = 0.9

// FindKnee finds the knee of a ramp: the first valid step, in ascending
// TargetRate order (then step number), whose Ratio is below threshold. A ratio
// equal to the threshold holds.
//
// A step whose GeneratorSaturated is set measured the load generator, not the
// server: it is listed in invalid (ascending step numbers), skipped, and never
// declared the knee.
//
// lastHeld is the last valid step before the knee whose Ratio is at least the
// threshold (with no knee, the last valid step that held); nil if none.
//
// The knee is the FIRST dip, even when a later step recovers: delivered rates
// are noisy, but a server that once fell behind at a given offered rate cannot
// be trusted at it, and "first step below the threshold" is a rule that two
// runs can be compared by. Report findings point out a recovery.
//
// A threshold that is not a positive number means DefaultThreshold.
func FindKnee(steps []messages.StepResult, threshold float64) (knee *messages.Knee, lastHeld *messages.StepRef, invalid []int) {
	threshold = thresholdOrDefault(threshold)
	for _, s := range byRate(steps) {
		switch {
		case s.GeneratorSaturated:
			invalid = append(invalid, s.Step)
		case knee != nil:
		case s.Ratio < threshold:
			knee = &messages.Knee{Step: s.Step, Rate: s.TargetRate, DeliveredRate: s.DeliveredRate, Ratio: s.Ratio, Threshold: threshold}
		default:
			lastHeld = refOf(s)
		}
	}
	slices.Sort(invalid)
	return knee, lastHeld, invalid
}

// byRate returns pointers to steps in ascending TargetRate, then Step, order.
func byRate(steps []messages.StepResult) []*messages.StepResult {
	ps := make([]*messages.StepResult, len(steps))
	for i := range steps {
		ps[i] = &steps[i]
	}
	slices.SortStableFunc(ps, func(a, b *messages.StepResult) int {
		return cmp.Or(cmp.Compare(a.TargetRate, b.TargetRate), cmp.Compare(a.Step, b.Step))
	})
	return ps
}

func refOf(s *messages.StepResult) *messages.StepRef {
	return &messages.StepRef{Step: s.Step, Rate: s.TargetRate, DeliveredRate: s.DeliveredRate, Ratio: s.Ratio}
}

// thresholdOrDefault maps anything but a positive finite number to
// DefaultThreshold.
func thresholdOrDefault(t float64) float64 {
	if !(t > 0) || t > 1e9 {
		return DefaultThreshold
	}
	return t
}
