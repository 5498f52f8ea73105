package ramp

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// outcome is what a simulated server does at a rate: the delivered ratio,
// and a reason the step could not be measured ("" when it could).
type outcome func(rate float64) (ratio float64, reason string)

// result is a step result as the aggregator stamps it.
func result(step int, rate, ratio float64, reason string) messages.StepResult {
	r := messages.StepResult{Step: step, TargetRate: rate, Ratio: ratio, OfferedRate: rate,
		Producers: []string{"p1"}, Complete: true}
	switch reason {
	case messages.ReasonHostOverloaded, messages.ReasonGeneratorSaturated:
		r.GeneratorSaturated = true
		r.PerProducer = []messages.ProducerBreakdown{{Producer: "p1", Saturated: true, LagCause: reason}}
	case messages.ReasonIncomplete:
		r.Missing = []string{"p1"}
	}
	verdict.Stamp(&r, 0.9)
	return r
}

// run feeds Plan.Next with results from o until it stops, and returns the
// rates it chose and why it stopped.
func run(p Plan, o outcome) ([]float64, string) {
	var done []messages.StepResult
	var rates []float64
	for range 50 {
		r, stop := p.Next(done)
		if stop != "" {
			return rates, stop
		}
		rates = append(rates, r)
		q, why := o(r)
		done = append(done, result(len(done)+1, r, q, why))
	}
	return rates, "did not stop"
}

func capacity(c float64) outcome {
	return func(r float64) (float64, string) { return min(1, c/r), "" }
}

// at makes the step at rate bad inconclusive for reason, else capacity c.
func at(c, bad float64, reason string) outcome {
	return func(r float64) (float64, string) {
		if r == bad {
			return 0.5, reason
		}
		return min(1, c/r), ""
	}
}

func TestPlanNext(t *testing.T) {
	tests := []struct {
		name     string
		plan     Plan
		outcome  outcome
		want     []float64
		wantStop string
	}{
		{"doubling stops one step past the knee", Plan{Start: 100, AfterKnee: 1}, capacity(500), []float64{100, 200, 400, 800, 1600}, "knee was found"},
		{"no step past the knee by default", Plan{Start: 100}, capacity(500), []float64{100, 200, 400, 800}, "knee was found"},
		{"no knee below the maximum", Plan{Start: 100, Max: 450}, capacity(1e6), []float64{100, 200, 400}, "maximum (450/s)"},
		{"max steps", Plan{Start: 1, MaxSteps: 3}, capacity(1e6), []float64{1, 2, 4}, "most steps allowed (3)"},
		{"explicit rates cut at the knee", Plan{Rates: []float64{10, 20, 30, 40, 50}}, capacity(25), []float64{10, 20, 30}, "knee"},
		{"a first step below steps down until one holds", Plan{Start: 1000, AfterKnee: 1}, capacity(100), []float64{1000, 500, 250, 125, 62.5}, "knee"},
		{"the downward search bisects its bracket", Plan{Start: 1000, Refine: 1}, capacity(100), []float64{1000, 500, 250, 125, 62.5, 93.75}, "knee"},
		{"no rate down to the floor", Plan{Start: 100, Min: 10}, capacity(1), []float64{100, 50, 25, 12.5, 10}, "no rate held down to the floor (--min 10/s): step 5 at 10/s fell below too"},
		{"the default floor is one per second", Plan{Start: 4}, capacity(0.1), []float64{4, 2, 1}, "floor (--min 1/s)"},
		{"a first rate under the default floor is its own", Plan{Rates: []float64{0.5}}, capacity(0.1), []float64{0.5}, "floor (--min 0.5/s)"},
		{"refine re-offers the last held rate, then bisects", Plan{Start: 100, Refine: 2}, capacity(500), []float64{100, 200, 400, 800, 400, 600, 500}, "knee"},
		{"an inconclusive step stops the ramp", Plan{Start: 100}, at(500, 200, messages.ReasonHostOverloaded), []float64{100, 200}, "step 2 at 200/s was inconclusive (host_overloaded)"},
		{"an inconclusive step past the knee stops it too", Plan{Start: 100, AfterKnee: 3}, at(300, 800, messages.ReasonIncomplete), []float64{100, 200, 400, 800}, "inconclusive (incomplete)"},
		{"an inconclusive midpoint ends the refinement", Plan{Start: 100, Refine: 3}, at(500, 600, messages.ReasonGeneratorSaturated), []float64{100, 200, 400, 800, 400, 600}, "step 6 at 600/s was inconclusive (generator_saturated)"},
		{"never more than 8× the highest rate that held", Plan{Rates: []float64{100, 200, 10000}}, capacity(1e6), []float64{100, 200}, "more than 8× the highest that held (200/s)"},
		{"a larger jump when asked", Plan{Rates: []float64{100, 200, 10000}, MaxJump: 100}, capacity(1e6), []float64{100, 200, 10000}, "rates are done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, stop := run(tt.plan, tt.outcome)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Plan.Next rates = %v, want %v", got, tt.want)
			}
			if !strings.Contains(stop, tt.wantStop) {
				t.Errorf("Plan.Next stop = %q, want it to say %q", stop, tt.wantStop)
			}
		})
	}
}

// TestPlanBisectNeverRepeats: a midpoint already measured ends the refinement
// instead of being offered again (seen against Dovecot: an invalid 6,600/s
// offered three times).
func TestPlanBisectNeverRepeats(t *testing.T) {
	p := Plan{Rates: []float64{400, 800}, Refine: 5}
	done := []messages.StepResult{
		result(1, 400, 1, ""), result(2, 800, 0.5, ""), result(3, 400, 1, ""),
		result(4, 600, 0.5, messages.ReasonHostOverloaded), result(5, 200, 1, ""),
	}
	if rate, stop := p.Next(done); rate != 0 || !strings.Contains(stop, "600/s was measured already (step 4)") {
		t.Errorf("Plan.Next = %v, %q, want a stop naming step 4", rate, stop)
	}
	close := []messages.StepResult{result(1, 400, 1, ""), result(2, 800, 0.5, ""), result(3, 400, 1, ""), result(4, 790, 0.5, ""), result(5, 785, 1, "")}
	if rate, stop := p.Next(close); rate != 0 || !strings.Contains(stop, "within 2%") {
		t.Errorf("Plan.Next = %v, %q, want a stop within 2%%", rate, stop)
	}
}

func TestPlanValidate(t *testing.T) {
	tests := []struct {
		name string
		plan Plan
		want string // "" = valid
	}{
		{"defaults from a start", Plan{Start: 100}, ""},
		{"explicit rates", Plan{Rates: []float64{1, 2}}, ""},
		{"factor below one", Plan{Start: 100, Factor: 0.5}, "factor 0.5"},
		{"factor one", Plan{Start: 100, Factor: 1}, "factor 1"},
		{"no start", Plan{}, "start 0"},
		{"negative start", Plan{Start: -5}, "start -5"},
		{"threshold above one", Plan{Start: 1, Threshold: 2}, "threshold 2"},
		{"negative threshold", Plan{Start: 1, Threshold: -0.1}, "threshold -0.1"},
		{"max below start", Plan{Start: 100, Max: 50}, "max 50"},
		{"negative after-knee", Plan{Start: 1, AfterKnee: -1}, "after-knee -1"},
		{"negative refine", Plan{Start: 1, Refine: -1}, "refine -1"},
		{"negative max steps", Plan{Start: 1, MaxSteps: -1}, "max steps -1"},
		{"max jump of one", Plan{Start: 1, MaxJump: 1}, "max jump 1"},
		{"a zero rate", Plan{Rates: []float64{1, 0}}, "rate 0"},
		{"a floor above the start", Plan{Start: 100, Min: 200}, "min 200"},
		{"a negative floor", Plan{Start: 100, Min: -1}, "min -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.plan.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Plan.Validate() = %v, want nil", err)
			case tt.want != "" && (!errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Plan.Validate() = %v, want ErrPlan naming %q", err, tt.want)
			}
		})
	}
}
