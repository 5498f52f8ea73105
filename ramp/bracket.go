package ramp

import (
	"fmt"
	"strconv"

	"github.com/imapload/imapload/messages"
)

// Kinds of step a Decision offers.
const (
	// KindRamp: a step of the ramp (rising by the factor, or the next of Rates).
	KindRamp = "ramp"
	// KindDown: a step of the downward search after a first step below.
	KindDown = "down"
	// KindRecheck: the re-offer of the highest rate that held, after an
	// overload and a cool-down, to see that the server recovered before
	// any midpoint is judged against it.
	KindRecheck = "recheck"
	// KindRefine: a midpoint of the bisection.
	KindRefine = "refine"
)

// stopKnee is why a ramp that bracketed the knee, and refined it as asked, stops.
const stopKnee = "the knee was found"

// Decision is what the plan does next: offer Rate (and Conns held
// connections) or stop, saying why.
type Decision struct {
	Rate  float64
	Conns int
	// Stop, when not "", ends the run and says why.
	Stop string
	// Kind is one of the Kind… constants.
	Kind string
	// Cooldown is set when the step follows a step that fell below and
	// offers less than it: the server is let recover first, at zero
	// offered load (Options.Cooldown), so that the step measures a server
	// that is not still worn by the overload.
	Cooldown bool
}

// Decide returns the next step given the results so far, in the order
// they ran. A rate ramp rises by the factor to the knee (see Next); when
// its first step already fell below it steps down instead (divided by the
// factor, never under Min) until a step holds, so that a run ends with a
// bracket — the highest rate that held and the lowest that did not — or
// says that no rate down to Min held. Before the bisection that follows
// an overload it re-offers the highest rate that held (KindRecheck), after
// a cool-down, and bisects only when that holds again.
func (p Plan) Decide(done []messages.StepResult) Decision {
	if len(done) >= p.maxSteps() {
		return Decision{Stop: fmt.Sprintf("ran the most steps allowed (%d)", p.maxSteps())}
	}
	if n := len(done); n > 0 && p.verdict(done[n-1]) == messages.VerdictInconclusive {
		return Decision{Stop: fmt.Sprintf("step %d at %.0f/s was inconclusive (%s)", done[n-1].Step, done[n-1].TargetRate, codes(done[n-1]))}
	}
	switch {
	case len(p.Connections) > 0:
		return p.nextConnections(done)
	case len(done) > 0 && p.verdict(done[0]) == messages.VerdictBelow:
		return p.downward(done)
	}
	return p.nextRate(done)
}

// downward is Decide once the first step fell below: the next lower rate
// until one holds, then the refinement between it and the lowest rate
// that fell below.
func (p Plan) downward(done []messages.StepResult) Decision {
	for i, r := range done {
		if p.verdict(r) == messages.VerdictHeld {
			d := p.refine(done, i+1)
			if d.Stop == stopKnee {
				d.Stop = fmt.Sprintf("stepping down from a first step below, %s/s held (step %d): the knee is bracketed", rateWords(r.TargetRate), r.Step)
			}
			return d
		}
	}
	low := done[0]
	for _, r := range done {
		if r.TargetRate < low.TargetRate {
			low = r
		}
	}
	floor := p.min()
	if low.TargetRate <= floor*(1+1e-9) {
		return Decision{Stop: fmt.Sprintf("no rate held down to the floor (--min %s/s): step %d at %s/s fell below too",
			rateWords(floor), low.Step, rateWords(low.TargetRate))}
	}
	return Decision{Rate: max(low.TargetRate/p.factor(), floor), Kind: KindDown, Cooldown: true}
}

// refine is the bisection after the steps done[:from] bracketed the knee.
// When the last of them fell below (an overload), the highest rate that
// held is re-offered first, after a cool-down; a re-offer that does not
// hold ends the run: the server did not recover, and midpoints judged
// against it would pull the bracket down.
func (p Plan) refine(done []messages.StepResult, from int) Decision {
	if p.Refine == 0 {
		return Decision{Stop: stopKnee}
	}
	extra := done[from:]
	if from > 0 && p.verdict(done[from-1]) == messages.VerdictBelow {
		held, _ := p.bounds(done[:from])
		if len(extra) == 0 {
			return Decision{Rate: held, Kind: KindRecheck, Cooldown: true}
		}
		if re := extra[0]; p.verdict(re) != messages.VerdictHeld {
			return Decision{Stop: fmt.Sprintf("the server did not recover after the overload: %s/s held before it, and re-offered at step %d after a cool-down it delivered %s/s; no bisection",
				rateWords(held), re.Step, rateWords(re.DeliveredRate))}
		}
		extra = extra[1:]
	}
	if len(extra) >= p.Refine {
		return Decision{Stop: stopKnee}
	}
	rate, stop := p.bisect(done)
	last := done[len(done)-1]
	return Decision{Rate: rate, Stop: stop, Kind: KindRefine, Cooldown: p.verdict(last) == messages.VerdictBelow && rate < last.TargetRate}
}

// min is the floor of the downward search.
func (p Plan) min() float64 {
	if p.Min > 0 {
		return p.Min
	}
	return min(DefaultMin, p.firstRate())
}

// firstRate is the rate of the first step, 0 when there is none.
func (p Plan) firstRate() float64 {
	if len(p.Rates) > 0 {
		return p.Rates[0]
	}
	return p.Start
}

// rateWords is a rate as a stop line shows it: whole numbers without
// decimals, small rates with up to three significant digits.
func rateWords(r float64) string {
	if r >= 100 {
		return fmt.Sprintf("%.0f", r)
	}
	return strconv.FormatFloat(r, 'g', 3, 64)
}
