package verdict

import (
	"cmp"
	"slices"

	"github.com/imapload/imapload/messages"
)

// Knee finds the knee of stamped steps: the first valid step, in ascending
// TargetRate order (then step number), whose verdict is below. A ratio equal
// to the threshold holds.
//
// Inconclusive steps are listed in invalid (ascending step numbers) and are
// never the knee nor the last held step. When some lie between the last step
// that held and the knee, the knee is a range: Low is the lowest of their
// rates and Uncertain lists them, since the server may already have fallen
// behind there.
//
// lastHeld is the last valid step before the knee that held (with no knee,
// the last valid step that held); nil if none.
//
// A re-offer after an overload (Rechecks) is neither: the bracket is the
// one measured before the overload.
//
// The knee is the FIRST dip, even when a later step recovers: a server that
// once fell behind at an offered rate cannot be trusted at it, and "first
// step below the threshold" is a rule two runs can be compared by.
func Knee(steps []messages.StepResult, threshold float64) (knee *messages.Knee, lastHeld *messages.StepRef, invalid []int) {
	threshold = Threshold(threshold)
	rechecks := map[int]bool{}
	for _, rc := range Rechecks(inStepOrder(steps), threshold) {
		rechecks[rc.Step] = true
	}
	var pending []*messages.StepResult // inconclusive since the last held step
	for _, s := range ByRate(steps) {
		switch v := Of(*s, threshold); {
		case rechecks[s.Step]:
		case v == messages.VerdictInconclusive:
			invalid = append(invalid, s.Step)
			if knee == nil {
				pending = append(pending, s)
			}
		case knee != nil:
		case v == messages.VerdictBelow:
			knee = kneeOf(s, threshold, pending)
		default:
			lastHeld, pending = refOf(s), nil
		}
	}
	slices.Sort(invalid)
	return knee, lastHeld, invalid
}

// Bracket is Knee for a run's report: a knee needs a step that held under
// it, so a run whose valid steps all fell below has none (Conclude makes it
// RunNoneHeld, naming the lowest of them), never "a knee at the first
// step, last held: none".
func Bracket(steps []messages.StepResult, threshold float64) (knee *messages.Knee, lastHeld *messages.StepRef, invalid []int) {
	knee, lastHeld, invalid = Knee(steps, threshold)
	if lastHeld == nil {
		knee = nil
	}
	return knee, lastHeld, invalid
}

func kneeOf(s *messages.StepResult, threshold float64, pending []*messages.StepResult) *messages.Knee {
	k := &messages.Knee{Step: s.Step, Rate: s.TargetRate, DeliveredRate: s.DeliveredRate, Ratio: s.Ratio, Threshold: threshold,
		Connections: offeredConns(s), Below: Below(*s, threshold)}
	for _, p := range pending {
		if p.TargetRate >= s.TargetRate {
			continue
		}
		if k.Low == 0 || p.TargetRate < k.Low {
			k.Low = p.TargetRate
		}
		k.Uncertain = append(k.Uncertain, p.Step)
	}
	slices.Sort(k.Uncertain)
	return k
}

// ByRate returns pointers to steps in ascending TargetRate, then offered held
// connections (a connection ramp keeps the rate), then Step, order.
func ByRate(steps []messages.StepResult) []*messages.StepResult {
	ps := make([]*messages.StepResult, len(steps))
	for i := range steps {
		ps[i] = &steps[i]
	}
	slices.SortStableFunc(ps, func(a, b *messages.StepResult) int {
		return cmp.Or(cmp.Compare(a.TargetRate, b.TargetRate), cmp.Compare(offeredConns(a), offeredConns(b)), cmp.Compare(a.Step, b.Step))
	})
	return ps
}

func refOf(s *messages.StepResult) *messages.StepRef {
	return &messages.StepRef{Step: s.Step, Rate: s.TargetRate, DeliveredRate: s.DeliveredRate, Ratio: s.Ratio}
}

// offeredConns is the held connections a step offered; 0 without any.
func offeredConns(s *messages.StepResult) int {
	if s.Connections == nil {
		return 0
	}
	return s.Connections.Offered
}

// inStepOrder is steps sorted by step number (a copy when they are not).
func inStepOrder(steps []messages.StepResult) []messages.StepResult {
	if slices.IsSortedFunc(steps, byStep) {
		return steps
	}
	out := slices.Clone(steps)
	slices.SortStableFunc(out, byStep)
	return out
}

func byStep(a, b messages.StepResult) int { return cmp.Compare(a.Step, b.Step) }
