package verdict_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// held, below and unsure are stamped steps at the default threshold: a
// clean step at ratio 1, a clean step at ratio 0.5, and a step whose
// producer's host was overloaded (ratio 0.5: it would be below if valid).
func held(step int, rate float64) messages.StepResult  { return stamp(clean(step, rate, 1)) }
func below(step int, rate float64) messages.StepResult { return stamp(clean(step, rate, 0.5)) }
func unsure(step int, rate float64) messages.StepResult {
	return stamp(overloaded(step, rate))
}

// ratioStep is a clean step at ratio, stamped at the default threshold.
func ratioStep(step int, rate, ratio float64) messages.StepResult {
	return stamp(clean(step, rate, ratio))
}

// issueSteps is the run of the issue: 100, 200 and 400/s held, 800 and
// 1600/s inconclusive (host overloaded), 3200/s below.
func issueSteps() []messages.StepResult {
	return []messages.StepResult{
		held(1, 100), held(2, 200), held(3, 400),
		unsure(4, 800), unsure(5, 1600), below(6, 3200),
	}
}

// kneeWant is what a test expects of a knee; a zero step means none.
type kneeWant struct {
	step      int
	rate, low float64
	uncertain []int
}

func (w kneeWant) String() string {
	if w.step == 0 {
		return "no knee"
	}
	return fmt.Sprintf("step %d at %v low %v uncertain %v", w.step, w.rate, w.low, w.uncertain)
}

func kneeGot(k *messages.Knee) kneeWant {
	if k == nil {
		return kneeWant{}
	}
	return kneeWant{step: k.Step, rate: k.Rate, low: k.Low, uncertain: k.Uncertain}
}

func (w kneeWant) equal(o kneeWant) bool {
	return w.step == o.step && w.rate == o.rate && w.low == o.low && slices.Equal(w.uncertain, o.uncertain)
}

func TestKnee(t *testing.T) {
	tests := []struct {
		name        string
		steps       []messages.StepResult
		threshold   float64
		want        kneeWant
		wantHeld    int // step number; 0 = none
		wantInvalid []int
	}{
		{name: "no steps"},
		{name: "every step held: the highest rate is the last held",
			steps:    []messages.StepResult{held(1, 400), held(2, 100), held(3, 200)},
			wantHeld: 1},
		{name: "the first below in rate order, not run order",
			steps:    []messages.StepResult{held(1, 100), below(2, 400), below(3, 200), held(4, 150)},
			want:     kneeWant{step: 3, rate: 200},
			wantHeld: 4},
		{name: "the first step below: no step held",
			steps: []messages.StepResult{below(1, 100), below(2, 200)},
			want:  kneeWant{step: 1, rate: 100}},
		{name: "same rate: step order",
			steps:    []messages.StepResult{below(2, 100), held(1, 100)},
			want:     kneeWant{step: 2, rate: 100},
			wantHeld: 1},
		{name: "an inconclusive step is never the knee nor the last held",
			steps: []messages.StepResult{held(1, 100), unsure(2, 200),
				stamp(with(clean(3, 400, 0.5), lagging("p1", messages.ReasonGeneratorSaturated)))},
			wantHeld: 1, wantInvalid: []int{2, 3}},
		{name: "only inconclusive steps",
			steps:       []messages.StepResult{unsure(2, 200), unsure(1, 100)},
			wantInvalid: []int{1, 2}},
		{name: "inconclusive steps between the last held and the knee make a range",
			steps:    []messages.StepResult{held(1, 100), unsure(2, 200), unsure(3, 400), below(4, 800)},
			want:     kneeWant{step: 4, rate: 800, low: 200, uncertain: []int{2, 3}},
			wantHeld: 1, wantInvalid: []int{2, 3}},
		{name: "the range in rate order when run out of order",
			steps:    []messages.StepResult{held(1, 100), unsure(2, 1600), unsure(3, 800), below(4, 3200)},
			want:     kneeWant{step: 4, rate: 3200, low: 800, uncertain: []int{2, 3}},
			wantHeld: 1, wantInvalid: []int{2, 3}},
		{name: "a range with no held step",
			steps:       []messages.StepResult{unsure(1, 100), below(2, 200)},
			want:        kneeWant{step: 2, rate: 200, low: 100, uncertain: []int{1}},
			wantInvalid: []int{1}},
		{name: "an inconclusive step below the last held makes no range",
			steps:    []messages.StepResult{unsure(1, 100), held(2, 200), below(3, 400)},
			want:     kneeWant{step: 3, rate: 400},
			wantHeld: 2, wantInvalid: []int{1}},
		{name: "an inconclusive step above the knee makes no range",
			steps:    []messages.StepResult{held(1, 100), below(2, 200), unsure(3, 400)},
			want:     kneeWant{step: 2, rate: 200},
			wantHeld: 1, wantInvalid: []int{3}},
		{name: "a recovery after the knee keeps the first dip",
			steps:    []messages.StepResult{held(1, 100), below(2, 200), held(3, 400), held(4, 800)},
			want:     kneeWant{step: 2, rate: 200},
			wantHeld: 1},
		{name: "a retried step that held closes the range",
			steps:    []messages.StepResult{held(1, 100), unsure(2, 200), held(3, 200), below(4, 400)},
			want:     kneeWant{step: 4, rate: 400},
			wantHeld: 3, wantInvalid: []int{2}},
		{name: "the issue's run", steps: issueSteps(),
			want:     kneeWant{step: 6, rate: 3200, low: 800, uncertain: []int{4, 5}},
			wantHeld: 3, wantInvalid: []int{4, 5}},
		{name: "judged at the given threshold", threshold: 0.8,
			steps:    []messages.StepResult{ratioStep(1, 100, 0.95), ratioStep(2, 200, 0.85), ratioStep(3, 400, 0.79)},
			want:     kneeWant{step: 3, rate: 400},
			wantHeld: 2},
		{name: "a ratio equal to the threshold holds", threshold: 0.8,
			steps:    []messages.StepResult{ratioStep(1, 100, 0.8), ratioStep(2, 200, 0.5)},
			want:     kneeWant{step: 2, rate: 200},
			wantHeld: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			order := stepNumbers(tt.steps)
			knee, lastHeld, invalid := verdict.Knee(tt.steps, tt.threshold)
			if got := kneeGot(knee); !got.equal(tt.want) {
				t.Errorf("Knee(%s) knee = %v, want %v", tt.name, got, tt.want)
			}
			if got := heldStep(lastHeld); got != tt.wantHeld {
				t.Errorf("Knee(%s) lastHeld = step %d, want step %d", tt.name, got, tt.wantHeld)
			}
			if !slices.Equal(invalid, tt.wantInvalid) {
				t.Errorf("Knee(%s) invalid = %v, want %v", tt.name, invalid, tt.wantInvalid)
			}
			if got := stepNumbers(tt.steps); !slices.Equal(got, order) {
				t.Errorf("Knee(%s) reordered its argument: %v, was %v", tt.name, got, order)
			}
		})
	}
}

// The knee and the last held step carry the step's own figures.
func TestKneeFigures(t *testing.T) {
	steps := []messages.StepResult{ratioStep(1, 100, 0.97), ratioStep(2, 200, 0.6)}
	knee, lastHeld, _ := verdict.Knee(steps, 0)
	want := messages.Knee{Step: 2, Rate: 200, DeliveredRate: 120, Ratio: 0.6, Threshold: verdict.DefaultThreshold}
	if knee == nil || !kneeEqual(*knee, want) {
		t.Errorf("Knee(...) knee = %+v, want %+v", knee, want)
	}
	wantRef := messages.StepRef{Step: 1, Rate: 100, DeliveredRate: 97, Ratio: 0.97}
	if lastHeld == nil || *lastHeld != wantRef {
		t.Errorf("Knee(...) lastHeld = %+v, want %+v", lastHeld, wantRef)
	}
}

func kneeEqual(a, b messages.Knee) bool {
	return a.Step == b.Step && a.Rate == b.Rate && a.DeliveredRate == b.DeliveredRate && a.Ratio == b.Ratio &&
		a.Threshold == b.Threshold && a.Low == b.Low && slices.Equal(a.Uncertain, b.Uncertain)
}

func TestByRate(t *testing.T) {
	steps := []messages.StepResult{clean(1, 400, 1), clean(3, 100, 1), clean(2, 100, 1), clean(4, 200, 1)}
	var got []int
	for _, s := range verdict.ByRate(steps) {
		got = append(got, s.Step)
	}
	if want := []int{2, 3, 4, 1}; !slices.Equal(got, want) {
		t.Errorf("ByRate(steps 1@400, 3@100, 2@100, 4@200) = steps %v, want %v", got, want)
	}
}

func stepNumbers(steps []messages.StepResult) []int {
	var out []int
	for _, s := range steps {
		out = append(out, s.Step)
	}
	return out
}

func heldStep(r *messages.StepRef) int {
	if r == nil {
		return 0
	}
	return r.Step
}
