package ramp

import (
	"slices"
	"testing"

	"github.com/imapload/imapload/messages"
)

// run feeds Plan.Next with results whose ratio comes from ratio(rate), until
// it stops, and returns the rates it chose.
func run(p Plan, ratio func(rate float64) (float64, bool)) []float64 {
	var done []messages.StepResult
	var rates []float64
	for range 50 {
		r, ok := p.Next(done)
		if !ok {
			return rates
		}
		rates = append(rates, r)
		q, sat := ratio(r)
		done = append(done, messages.StepResult{Step: len(done) + 1, TargetRate: r, Ratio: q, GeneratorSaturated: sat})
	}
	return rates
}

func capacity(c float64) func(float64) (float64, bool) {
	return func(r float64) (float64, bool) { return min(1, c/r), false }
}

func TestPlanNext(t *testing.T) {
	tests := []struct {
		name  string
		plan  Plan
		ratio func(float64) (float64, bool)
		want  []float64
	}{
		{"doubling stops one step past the knee", Plan{Start: 100, Threshold: 0.9, AfterKnee: 1}, capacity(500), []float64{100, 200, 400, 800, 1600}},
		{"no step past the knee", Plan{Start: 100, Threshold: 0.9}, capacity(500), []float64{100, 200, 400, 800}},
		{"no knee below the maximum", Plan{Start: 100, Max: 450, Threshold: 0.9}, capacity(1e6), []float64{100, 200, 400}},
		{"max steps", Plan{Start: 1, MaxSteps: 3, Threshold: 0.9}, capacity(1e6), []float64{1, 2, 4}},
		{"explicit rates cut at the knee", Plan{Rates: []float64{10, 20, 30, 40, 50}, Threshold: 0.9}, capacity(25), []float64{10, 20, 30}},
		{"knee at the first step", Plan{Start: 1000, Threshold: 0.9, AfterKnee: 1}, capacity(100), []float64{1000, 2000}},
		{"refine bisects between held and knee", Plan{Start: 100, Threshold: 0.9, Refine: 2}, capacity(500), []float64{100, 200, 400, 800, 600, 500}},
		{"saturated step is never the knee", Plan{Start: 100, Threshold: 0.9},
			func(r float64) (float64, bool) {
				if r == 200 {
					return 0.5, true
				}
				return min(1, 500/r), false
			}, []float64{100, 200, 400, 800}},
		{"no start rate", Plan{Threshold: 0.9}, capacity(1), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := run(tt.plan, tt.ratio); !slices.Equal(got, tt.want) {
				t.Errorf("Plan.Next rates = %v, want %v", got, tt.want)
			}
		})
	}
}
