package ramp

import "github.com/imapload/imapload/messages"

// Plan decides offered rates. It is a pure function of the results so far.
type Plan struct {
	// Rates, when set, is the exact list of rates to try in order.
	Rates []float64
	// Start is the first rate when Rates is empty (commands/s).
	Start float64
	// Factor multiplies the rate from step to step (default 2).
	Factor float64
	// Max is the highest rate to offer; 0 means no maximum.
	Max float64
	// MaxSteps bounds the number of steps (default 12).
	MaxSteps int
	// Threshold is the delivered/target ratio below which a step is the knee.
	Threshold float64
	// AfterKnee is how many steps to run past the knee (default 1).
	AfterKnee int
	// Refine is how many bisection steps to run between the last step that
	// held and the knee, after the ramp.
	Refine int
}

func (p Plan) factor() float64 {
	if p.Factor <= 1 {
		return 2
	}
	return p.Factor
}

func (p Plan) maxSteps() int {
	if p.MaxSteps <= 0 {
		return 12
	}
	return p.MaxSteps
}

// Next returns the rate of the next step given the results so far, in the
// order they ran, or ok=false when the run is over.
func (p Plan) Next(done []messages.StepResult) (rate float64, ok bool) {
	if len(done) >= p.maxSteps() {
		return 0, false
	}
	rampEnd := p.rampLen()
	k := firstKnee(done, p.Threshold)
	if k >= 0 {
		rampEnd = min(rampEnd, k+1+p.AfterKnee)
	}
	if len(done) < rampEnd {
		return p.rampRate(len(done)), true
	}
	if k < 0 || len(done)-rampEnd >= p.Refine {
		return 0, false
	}
	return bisect(done, p.Threshold)
}

// rampLen is the number of steps of the ramp when no knee cuts it short.
func (p Plan) rampLen() int {
	if len(p.Rates) > 0 {
		return min(len(p.Rates), p.maxSteps())
	}
	if p.Start <= 0 {
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

// valid reports whether a step measured the server (its generators kept up).
func valid(r messages.StepResult) bool { return !r.GeneratorSaturated }

// firstKnee is the index of the first valid step below threshold, or -1.
func firstKnee(done []messages.StepResult, threshold float64) int {
	for i, r := range done {
		if valid(r) && r.Ratio < threshold {
			return i
		}
	}
	return -1
}

// bisect returns the midpoint between the highest valid rate that held and
// the lowest valid rate that did not, or ok=false when they are too close.
func bisect(done []messages.StepResult, threshold float64) (float64, bool) {
	held, failed := 0.0, 0.0
	for _, r := range done {
		switch {
		case !valid(r):
		case r.Ratio >= threshold && r.TargetRate > held:
			held = r.TargetRate
		case r.Ratio < threshold && (failed == 0 || r.TargetRate < failed):
			failed = r.TargetRate
		}
	}
	if failed == 0 || held >= failed || failed-held < failed*0.02 {
		return 0, false
	}
	return (held + failed) / 2, true
}
