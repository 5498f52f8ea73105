package verdict

import (
	"math"

	"github.com/imapload/imapload/messages"
)

// Recheck is a step that re-offered a rate that had held (Before), after
// a step at a higher rate fell below (Overload): the ramp's check that the
// server recovered from the overload before it bisects.
type Recheck struct {
	Step     int // the re-offer
	Before   int // the earlier step at the same rate, which held
	Overload int // the step below between them, at the highest rate
}

// Rechecks finds the re-offers among stamped steps at threshold, in step
// order. A re-offer is never the knee nor the last held step (Knee): the
// bracket is the one measured before the overload, and what the rate did
// after it is a finding (recovered, or not).
func Rechecks(steps []messages.StepResult, threshold float64) []Recheck {
	var out []Recheck
	for i := range steps {
		if rc, ok := recheckOf(steps, i, Threshold(threshold)); ok {
			out = append(out, rc)
		}
	}
	return out
}

// recheckOf says whether steps[i] re-offers a rate that held before an
// overload. Steps are taken in step order.
func recheckOf(steps []messages.StepResult, i int, threshold float64) (Recheck, bool) {
	s := steps[i]
	if Of(s, threshold) == messages.VerdictInconclusive {
		return Recheck{}, false
	}
	rc := Recheck{Step: s.Step}
	var overloadRate float64
	for _, b := range steps {
		switch {
		case b.Step >= s.Step:
		case rc.Before == 0 && sameRate(b.TargetRate, s.TargetRate) && Of(b, threshold) == messages.VerdictHeld:
			rc.Before = b.Step
		case rc.Before != 0 && b.TargetRate > s.TargetRate && b.TargetRate > overloadRate && Of(b, threshold) == messages.VerdictBelow:
			rc.Overload, overloadRate = b.Step, b.TargetRate
		}
	}
	return rc, rc.Before != 0 && rc.Overload != 0
}

// sameRate reports whether two offered rates are the same (within 0.5%).
func sameRate(a, b float64) bool { return math.Abs(a-b) <= 0.005*math.Max(a, b) }
