package reporter

import (
	"reflect"
	"testing"

	"github.com/imapload/imapload/messages"
)

// st is a step of the knee tables: target rate 1000·n unless given.
type st struct {
	step      int
	target    float64
	ratio     float64
	saturated bool
}

func kneeSteps(in []st) []messages.StepResult {
	out := make([]messages.StepResult, len(in))
	for i, s := range in {
		target := s.target
		if target == 0 {
			target = 1000 * float64(s.step)
		}
		out[i] = messages.StepResult{Step: s.step, TargetRate: target, DeliveredRate: s.ratio * target, Ratio: s.ratio, GeneratorSaturated: s.saturated, Complete: true, Producers: []string{"p1"}}
	}
	return out
}

func TestFindKnee(t *testing.T) {
	tests := []struct {
		name      string
		steps     []st
		threshold float64
		wantKnee  int // 0 = no knee
		wantHeld  int // 0 = none held
		wantBad   []int
	}{
		{name: "empty input"},
		{name: "no knee", steps: []st{{step: 1, ratio: 1}, {step: 2, ratio: 0.99}, {step: 3, ratio: 0.95}}, wantHeld: 3},
		{name: "knee at the first step", steps: []st{{step: 1, ratio: 0.5}, {step: 2, ratio: 0.4}}, wantKnee: 1},
		{name: "noisy series: the knee is the first dip, not a later one",
			steps:    []st{{step: 1, ratio: 1}, {step: 2, ratio: 0.97}, {step: 3, ratio: 0.85}, {step: 4, ratio: 0.93}, {step: 5, ratio: 0.7}},
			wantKnee: 3, wantHeld: 2},
		{name: "saturated step before the would-be knee is skipped",
			steps:    []st{{step: 1, ratio: 1}, {step: 2, ratio: 0.95}, {step: 3, ratio: 0.6, saturated: true}, {step: 4, ratio: 0.8}},
			wantKnee: 4, wantHeld: 2, wantBad: []int{3}},
		{name: "saturated step at the would-be knee is never the knee",
			steps:    []st{{step: 1, ratio: 1}, {step: 2, ratio: 0.7, saturated: true}, {step: 3, ratio: 0.92}, {step: 4, ratio: 0.5}},
			wantKnee: 4, wantHeld: 3, wantBad: []int{2}},
		{name: "saturated steps after the knee are still listed",
			steps:    []st{{step: 1, ratio: 1}, {step: 2, ratio: 0.5}, {step: 3, ratio: 0.6, saturated: true}},
			wantKnee: 2, wantHeld: 1, wantBad: []int{3}},
		{name: "a saturated step that delivered its target held",
			steps:    []st{{step: 1, ratio: 1}, {step: 2, ratio: 0.95, saturated: true}, {step: 3, ratio: 0.5}},
			wantKnee: 3, wantHeld: 2},
		{name: "every step saturated: no knee, nothing held",
			steps:   []st{{step: 1, ratio: 0.2, saturated: true}, {step: 2, ratio: 0.1, saturated: true}},
			wantBad: []int{1, 2}},
		{name: "ratio exactly at the threshold holds",
			steps:    []st{{step: 1, ratio: 1}, {step: 2, ratio: 0.9}, {step: 3, ratio: 0.89}},
			wantKnee: 3, wantHeld: 2},
		{name: "custom threshold", threshold: 0.95,
			steps:    []st{{step: 1, ratio: 1}, {step: 2, ratio: 0.93}},
			wantKnee: 2, wantHeld: 1},
		{name: "zero threshold means the default", threshold: 0,
			steps:    []st{{step: 1, ratio: 0.91}, {step: 2, ratio: 0.89}},
			wantKnee: 2, wantHeld: 1},
		{name: "steps taken in target-rate order, not step order",
			steps:    []st{{step: 2, target: 1000, ratio: 0.5}, {step: 1, target: 500, ratio: 1}, {step: 3, target: 750, ratio: 0.95}},
			wantKnee: 2, wantHeld: 3},
		{name: "equal target rates ordered by step number",
			steps:    []st{{step: 2, target: 1000, ratio: 1}, {step: 1, target: 1000, ratio: 0.8}},
			wantKnee: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			knee, held, invalid := FindKnee(kneeSteps(tt.steps), tt.threshold)
			if got := kneeStep(knee); got != tt.wantKnee {
				t.Errorf("FindKnee() knee = step %d, want step %d (0 = none)", got, tt.wantKnee)
			}
			if got := heldStep(held); got != tt.wantHeld {
				t.Errorf("FindKnee() lastHeld = step %d, want step %d (0 = none)", got, tt.wantHeld)
			}
			if !reflect.DeepEqual(invalid, tt.wantBad) {
				t.Errorf("FindKnee() invalid = %v, want %v", invalid, tt.wantBad)
			}
		})
	}
}

func TestFindKneeFields(t *testing.T) {
	steps := kneeSteps([]st{{step: 1, ratio: 1}, {step: 2, ratio: 0.5}})
	knee, held, _ := FindKnee(steps, 0.8)
	wantKnee := &messages.Knee{Step: 2, Rate: 2000, DeliveredRate: 1000, Ratio: 0.5, Threshold: 0.8,
		Below: "command rate: delivered 1000.0 of 2000.0/s (50.0%, under 80%)"}
	if !reflect.DeepEqual(knee, wantKnee) {
		t.Errorf("FindKnee() knee = %+v, want %+v", knee, wantKnee)
	}
	wantHeld := &messages.StepRef{Step: 1, Rate: 1000, DeliveredRate: 1000, Ratio: 1}
	if !reflect.DeepEqual(held, wantHeld) {
		t.Errorf("FindKnee() lastHeld = %+v, want %+v", held, wantHeld)
	}
}

func kneeStep(k *messages.Knee) int {
	if k == nil {
		return 0
	}
	return k.Step
}

func heldStep(h *messages.StepRef) int {
	if h == nil {
		return 0
	}
	return h.Step
}
