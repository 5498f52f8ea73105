package verdict

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/imapload/imapload/messages"
)

// Criteria are a run's pass/fail thresholds, in the spirit of k6's. The zero
// value has none. They are judged on the steps that held.
type Criteria struct {
	// KneeAbove, when > 0, requires the server to have held at this rate or
	// more, with no knee at or below it (--expect-knee-above).
	KneeAbove float64
	// MaxP99 bounds a phase's response-time P99 on every held step (--max-p99).
	MaxP99 []PhaseLimit
	// MaxErrorRate, when set, bounds failed ÷ sent commands on every held
	// step (--max-error-rate), errors imapload caused left out.
	MaxErrorRate *float64
}

// PhaseLimit is one --max-p99 PHASE=DURATION.
type PhaseLimit struct {
	Phase string
	Max   time.Duration
}

// Check judges r (with Knee, LastHeld and stamped Steps) against c.
func (c Criteria) Check(r messages.RunReport) []messages.ThresholdCheck {
	var out []messages.ThresholdCheck
	if c.KneeAbove > 0 {
		out = append(out, c.kneeAbove(r))
	}
	for _, l := range c.MaxP99 {
		out = append(out, maxP99(r, l))
	}
	if c.MaxErrorRate != nil {
		out = append(out, maxErrorRate(r, *c.MaxErrorRate))
	}
	return out
}

func (c Criteria) kneeAbove(r messages.RunReport) messages.ThresholdCheck {
	t := messages.ThresholdCheck{Name: fmt.Sprintf("expect-knee-above %g/s", c.KneeAbove)}
	switch low := kneeLow(r.Knee); {
	case r.LastHeld == nil || r.LastHeld.Rate < c.KneeAbove:
		t.Detail = fmt.Sprintf("no step at or above %g/s held", c.KneeAbove)
		if r.LastHeld != nil {
			t.Detail = fmt.Sprintf("the highest rate that held is %.0f/s", r.LastHeld.Rate)
		}
	case r.Knee != nil && low <= c.KneeAbove:
		t.Detail = fmt.Sprintf("the knee is at %.0f/s", low)
	default:
		t.Pass = true
		t.Detail = fmt.Sprintf("held at %.0f/s", r.LastHeld.Rate)
	}
	return t
}

// kneeLow is the lowest rate the knee may be at.
func kneeLow(k *messages.Knee) float64 {
	if k == nil {
		return 0
	}
	if k.Low > 0 {
		return k.Low
	}
	return k.Rate
}

func maxP99(r messages.RunReport, l PhaseLimit) messages.ThresholdCheck {
	limit := float64(l.Max) / float64(time.Millisecond)
	name := fmt.Sprintf("max-p99 %s=%v", l.Phase, l.Max)
	return perHeldStep(name, r.Steps, func(s messages.StepResult) (measured bool, over string) {
		p, ok := s.Phases[l.Phase]
		if ok && (p.P99 > limit || slices.Contains(p.Above, "p99")) {
			over = fmt.Sprintf("step %d %.1f ms", s.Step, p.P99)
		}
		return ok, over
	})
}

func maxErrorRate(r messages.RunReport, limit float64) messages.ThresholdCheck {
	return perHeldStep(fmt.Sprintf("max-error-rate %g", limit), r.Steps, func(s messages.StepResult) (bool, string) {
		failed, sent := Failed(s)
		if sent > 0 && float64(failed)/float64(sent) > limit {
			return true, fmt.Sprintf("step %d %.2g", s.Step, float64(failed)/float64(sent))
		}
		return true, ""
	})
}

// perHeldStep judges a criterion on every held step: judge says whether the
// step measured what the criterion is about and, if it breached it, how.
// The check fails when no held step measured it or any breached it.
func perHeldStep(name string, steps []messages.StepResult, judge func(messages.StepResult) (measured bool, over string)) messages.ThresholdCheck {
	t := messages.ThresholdCheck{Name: name}
	var over []string
	held, measured := heldSteps(steps), 0
	for _, s := range held {
		m, o := judge(s)
		if m {
			measured++
		}
		if o != "" {
			over = append(over, o)
		}
	}
	switch {
	case len(held) == 0:
		t.Detail = "no step held"
	case measured == 0:
		t.Detail = "no held step measured it"
	case len(over) > 0:
		t.Detail = "over at " + strings.Join(over, ", ")
	default:
		t.Pass, t.Detail = true, fmt.Sprintf("within it on %d held step(s)", len(held))
	}
	return t
}

func heldSteps(steps []messages.StepResult) []messages.StepResult {
	var out []messages.StepResult
	for _, s := range steps {
		if s.Verdict == messages.VerdictHeld {
			out = append(out, s)
		}
	}
	return out
}
