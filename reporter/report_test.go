package reporter

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

func TestBuild(t *testing.T) {
	steps := goldenSteps()
	stale := stepResult(4, 2000, 100) // an earlier result of step 4, republished since
	steps = append([]messages.StepResult{stale}, steps...)
	now := time.Date(2025, 3, 14, 16, 9, 26, 0, time.FixedZone("CET", 3600))
	rep := Build("golden", steps, 0, now)
	var order []int
	for _, s := range rep.Steps {
		order = append(order, s.Step)
	}
	if !slices.Equal(order, []int{1, 2, 3, 4, 5}) {
		t.Errorf("Build() steps = %v, want [1 2 3 4 5]", order)
	}
	if rep.Steps[3].DeliveredRate != 1560 {
		t.Errorf("Build() step 4 delivered = %v, want 1560 (the last result given wins)", rep.Steps[3].DeliveredRate)
	}
	if rep.Kind != messages.KindRunReport || rep.Run != "golden" || rep.Threshold != DefaultThreshold {
		t.Errorf("Build() kind, run, threshold = %q, %q, %v, want %q, golden, %v", rep.Kind, rep.Run, rep.Threshold, messages.KindRunReport, DefaultThreshold)
	}
	if !rep.Generated.Equal(fixedNow) || rep.Generated.Location() != time.UTC {
		t.Errorf("Build() generated = %v, want %v in UTC", rep.Generated, fixedNow)
	}
	// Step 3's generator was saturated and step 5 lost a producer: both are
	// inconclusive, and step 3 makes the knee a range.
	if rep.Knee == nil || rep.Knee.Step != 4 || rep.Knee.Low != 1500 || rep.LastHeld == nil || rep.LastHeld.Step != 2 || !slices.Equal(rep.Invalid, []int{3, 5}) {
		t.Errorf("Build() knee %+v, last held %+v, invalid %v, want step 4 from 1500/s, step 2, [3 5]", rep.Knee, rep.LastHeld, rep.Invalid)
	}
}

func TestBuildEmpty(t *testing.T) {
	rep := Build("r", nil, -1, fixedNow)
	if rep.Invalid == nil || rep.Findings == nil || rep.Steps == nil {
		t.Errorf("Build(no steps) invalid %v, findings %v, steps %v: want empty, not nil", rep.Invalid, rep.Findings, rep.Steps)
	}
	if rep.Threshold != DefaultThreshold {
		t.Errorf("Build(threshold -1) threshold = %v, want %v", rep.Threshold, DefaultThreshold)
	}
}

func TestCIText(t *testing.T) {
	open := messages.Interval{12, math.Inf(1)}
	tests := []struct {
		name string
		p    messages.PhaseResult
		iv   messages.Interval
		want string
	}{
		{"two-sided", messages.PhaseResult{}, messages.Interval{1, 2}, "1.00..2.00"},
		{"too few", messages.PhaseResult{TooFew: []string{"p99"}}, open, "≥ 12.0 (too few samples)"},
		{"never sent", messages.PhaseResult{NeverSent: 0.3, Above: []string{"p99"}}, open, "≥ 12.0 (never sent above it)"},
		{"none", messages.PhaseResult{}, messages.Interval{}, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ciText(tt.p, "p99", tt.iv); got != tt.want {
				t.Errorf("ciText(%s) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}
