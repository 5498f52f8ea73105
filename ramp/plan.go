package ramp

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// Defaults of a Plan.
const (
	DefaultFactor   = 2
	DefaultMaxSteps = 12
	DefaultMaxJump  = 8
	// DefaultMin is the floor of the downward search, commands/s: a server
	// that cannot sustain one command a second is broken, not loaded.
	DefaultMin = 1
)

// Plan decides offered rates. It is a pure function of the results so far,
// which it judges itself (verdict.Of at Threshold, from their Reasons).
type Plan struct {
	// Rates, when set, is the exact list of rates to try in order.
	Rates []float64
	// Start is the first rate when Rates is empty (commands/s).
	Start float64
	// Factor multiplies the rate from step to step; 0 means DefaultFactor.
	Factor float64
	// Max is the highest rate to offer; 0 means no maximum.
	Max float64
	// Min is the floor of the downward search: when the first step falls
	// below, the plan divides the lowest rate offered by Factor, never
	// under Min, until a step holds; 0 means DefaultMin (or the first
	// rate, when that is lower).
	Min float64
	// MaxSteps bounds the number of steps; 0 means DefaultMaxSteps.
	MaxSteps int
	// MaxJump bounds the next rate to this many times the highest rate that
	// held, so a ramp never runs far past what it has measured; 0 means
	// DefaultMaxJump.
	MaxJump float64
	// Threshold is the delivered/target ratio below which a step is the knee;
	// 0 means verdict.DefaultThreshold.
	Threshold float64
	// AfterKnee is how many steps to run past the knee (0: stop at it).
	AfterKnee int
	// Refine is how many bisection steps to run between the last step that
	// held and the knee, after the ramp.
	Refine int
	// Connections, when set, makes the plan a connection ramp: step i holds
	// Connections[i] IDLE connections (fleet-wide, ascending) while offering
	// the fixed Rate, and the knee is the first step below on the rate or on
	// the connections (verdict.Below). Rates, Start and Refine are unused.
	Connections []int
	// Rate is a connection ramp's fixed command rate (commands/s).
	Rate float64
}

// ErrPlan reports impossible plan settings.
var ErrPlan = errors.New("ramp: impossible plan")

// Validate refuses settings no ramp can run: every problem is listed.
func (p Plan) Validate() error {
	var bad []string
	check := func(ok bool, format string, a ...any) {
		if !ok {
			bad = append(bad, fmt.Sprintf(format, a...))
		}
	}
	for _, r := range p.Rates {
		check(r > 0 && r <= messages.MaxRate, "rate %v: want > 0 and ≤ %g", r, float64(messages.MaxRate))
	}
	if len(p.Connections) > 0 {
		p.validateConnections(check)
	} else if len(p.Rates) == 0 {
		check(p.Start > 0 && p.Start <= messages.MaxRate, "start %v: want > 0 and ≤ %g", p.Start, float64(messages.MaxRate))
		check(p.Factor == 0 || p.Factor > 1 && !math.IsInf(p.Factor, 0), "factor %v: want > 1 (rates must rise)", p.Factor)
		check(p.Max == 0 || p.Max >= p.Start, "max %v: want 0 (none) or ≥ start %v", p.Max, p.Start)
	}
	check(p.Threshold == 0 || p.Threshold > 0 && p.Threshold <= 1, "threshold %v: want a ratio in (0, 1]", p.Threshold)
	check(p.MaxSteps >= 0, "max steps %d: want ≥ 1 (0: default %d)", p.MaxSteps, DefaultMaxSteps)
	check(p.MaxJump == 0 || p.MaxJump > 1, "max jump %v: want > 1", p.MaxJump)
	check(p.AfterKnee >= 0, "after-knee %d: want ≥ 0", p.AfterKnee)
	check(p.Refine >= 0, "refine %d: want ≥ 0", p.Refine)
	check(p.Max >= 0, "max %v: want ≥ 0", p.Max)
	check(p.Min >= 0 && p.Min <= messages.MaxRate, "min %v: want ≥ 0 (0: default %g/s)", p.Min, float64(DefaultMin))
	if first := p.firstRate(); p.Min > 0 && first > 0 {
		check(p.Min <= first, "min %v: want ≤ the first rate %v (the floor of the downward search)", p.Min, first)
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrPlan, strings.Join(bad, "; "))
}

// validateConnections checks a connection ramp's settings.
func (p Plan) validateConnections(check func(bool, string, ...any)) {
	check(p.Rate > 0 && p.Rate <= messages.MaxRate, "connection ramp rate %v: want > 0 and ≤ %g", p.Rate, float64(messages.MaxRate))
	check(len(p.Rates) == 0, "rates %v: a connection ramp keeps one rate", p.Rates)
	check(p.Refine == 0, "refine %d: a connection ramp does not bisect", p.Refine)
	for i, c := range p.Connections {
		check(c > 0 && c <= messages.MaxConnections, "connections %d: want 1..%d", c, messages.MaxConnections)
		check(i == 0 || c > p.Connections[i-1], "connections %v: want them rising", p.Connections)
	}
}

// NextStep is Decide without the cool-down: the rate of the next step
// and, for a connection ramp, the connections it holds.
func (p Plan) NextStep(done []messages.StepResult) (rate float64, conns int, stop string) {
	d := p.Decide(done)
	return d.Rate, d.Conns, d.Stop
}

// nextConnections is Decide for a connection ramp.
func (p Plan) nextConnections(done []messages.StepResult) Decision {
	end := min(len(p.Connections), p.maxSteps())
	if k := p.firstKnee(done); k >= 0 {
		end = min(end, k+1+p.AfterKnee)
		if len(done) >= end {
			return Decision{Stop: "the knee was found"}
		}
	}
	if len(done) >= end {
		return Decision{Stop: "every step held; the plan's connections are done"}
	}
	return Decision{Rate: p.Rate, Conns: p.Connections[len(done)], Kind: KindRamp}
}

func (p Plan) factor() float64 {
	if p.Factor == 0 {
		return DefaultFactor
	}
	return p.Factor
}

func (p Plan) maxSteps() int {
	if p.MaxSteps <= 0 {
		return DefaultMaxSteps
	}
	return p.MaxSteps
}

func (p Plan) maxJump() float64 {
	if p.MaxJump == 0 {
		return DefaultMaxJump
	}
	return p.MaxJump
}

// Next returns the rate of the next step given the results so far, in the
// order they ran; when the run is over it returns 0 and why it stopped.
func (p Plan) Next(done []messages.StepResult) (rate float64, stop string) {
	d := p.Decide(done)
	return d.Rate, d.Stop
}

// nextRate is Decide for a rate ramp whose first step held: up by the
// factor to the knee and AfterKnee steps past it, then the refinement.
func (p Plan) nextRate(done []messages.StepResult) Decision {
	k := p.firstKnee(done)
	rampEnd := p.rampLen()
	if k >= 0 {
		rampEnd = min(rampEnd, k+1+p.AfterKnee)
	}
	if len(done) < rampEnd {
		rate, stop := p.capped(done, p.rampRate(len(done)))
		return Decision{Rate: rate, Stop: stop, Kind: KindRamp}
	}
	switch {
	case k < 0 && p.Max > 0 && len(p.Rates) == 0:
		return Decision{Stop: fmt.Sprintf("every step held up to the maximum (%.0f/s)", p.Max)}
	case k < 0:
		return Decision{Stop: "every step held; the plan's rates are done"}
	}
	return p.refine(done, rampEnd)
}

// capped returns rate, or stops when it is more than MaxJump times the
// highest rate that held.
func (p Plan) capped(done []messages.StepResult, rate float64) (float64, string) {
	held, _ := p.bounds(done)
	if held > 0 && rate > p.maxJump()*held {
		return 0, fmt.Sprintf("the next rate, %.0f/s, is more than %g× the highest that held (%.0f/s); give --max-jump or --rates to go further", rate, p.maxJump(), held)
	}
	return rate, ""
}

// rampLen is the number of steps of the ramp when no knee cuts it short.
func (p Plan) rampLen() int {
	if len(p.Rates) > 0 {
		return min(len(p.Rates), p.maxSteps())
	}
	if !(p.Start > 0) || p.factor() <= 1 {
		return 0
	}
	n := 0
	for r := p.Start; n < p.maxSteps() && (p.Max <= 0 || r <= p.Max); r *= p.factor() {
		n++
	}
	return n
}

// rampRate is the i-th rate of the ramp (from 0), i < rampLen.
func (p Plan) rampRate(i int) float64 {
	if len(p.Rates) > 0 {
		return p.Rates[i]
	}
	r := p.Start
	for range i {
		r *= p.factor()
	}
	return r
}

// verdict judges r at the plan's threshold.
func (p Plan) verdict(r messages.StepResult) string { return verdict.Of(r, p.Threshold) }

// firstKnee is the index in done of the ramp's knee, found by the one knee
// rule (verdict.Knee, as the reporter finds it) over the shortest prefix of
// done that ends the ramp (its knee and AfterKnee steps past it), so that the
// bisection's steps never move it; over all of done while the ramp runs; -1
// if there is none.
func (p Plan) firstKnee(done []messages.StepResult) int {
	k := -1
	for n := 1; n <= len(done); n++ {
		if k = p.kneeIn(done[:n]); k >= 0 && n >= k+1+p.AfterKnee {
			return k
		}
	}
	return k
}

// kneeIn is the index in steps of their knee, or -1.
func (p Plan) kneeIn(steps []messages.StepResult) int {
	knee, _, _ := verdict.Knee(steps, p.Threshold)
	if knee == nil {
		return -1
	}
	return slices.IndexFunc(steps, func(r messages.StepResult) bool { return r.Step == knee.Step })
}

// bounds are the highest rate that held and the lowest that fell below.
func (p Plan) bounds(done []messages.StepResult) (held, below float64) {
	for _, r := range done {
		switch p.verdict(r) {
		case messages.VerdictHeld:
			held = max(held, r.TargetRate)
		case messages.VerdictBelow:
			if below == 0 || r.TargetRate < below {
				below = r.TargetRate
			}
		}
	}
	return held, below
}

// bisect returns the midpoint between the highest rate that held and the
// lowest that fell below, or stops when they are within 2% of each other or
// the midpoint was measured already.
func (p Plan) bisect(done []messages.StepResult) (float64, string) {
	held, below := p.bounds(done)
	if below == 0 || held >= below || below-held < below*0.02 {
		return 0, "the knee is located to within 2%"
	}
	mid := (held + below) / 2
	for _, r := range done {
		if math.Abs(r.TargetRate-mid) < mid*0.005 {
			return 0, fmt.Sprintf("the midpoint %.0f/s was measured already (step %d)", mid, r.Step)
		}
	}
	return mid, ""
}

// codes lists a step's reason codes.
func codes(r messages.StepResult) string {
	var c []string
	for _, x := range r.Reasons {
		c = append(c, x.Code)
	}
	return strings.Join(c, ", ")
}
