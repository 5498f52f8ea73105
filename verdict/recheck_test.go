package verdict_test

import (
	"slices"
	"testing"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// stampedStep is a valid step at rate with the delivered ratio, judged.
func stampedStep(step int, rate, ratio float64) messages.StepResult {
	r := messages.StepResult{Step: step, TargetRate: rate, DeliveredRate: rate * ratio, Ratio: ratio, OfferedRate: rate, Producers: []string{"p1"}, Complete: true}
	verdict.Stamp(&r, 0)
	return r
}

func TestRechecks(t *testing.T) {
	tests := []struct {
		name  string
		steps []messages.StepResult
		want  []verdict.Recheck
	}{
		{"a re-offer after an overload", []messages.StepResult{stampedStep(1, 100, 1), stampedStep(2, 200, 0.5), stampedStep(3, 100, 0.6)},
			[]verdict.Recheck{{Step: 3, Before: 1, Overload: 2}}},
		{"the highest overload between", []messages.StepResult{stampedStep(1, 100, 1), stampedStep(2, 200, 0.5), stampedStep(3, 400, 0.3), stampedStep(4, 100, 1)},
			[]verdict.Recheck{{Step: 4, Before: 1, Overload: 3}}},
		{"a downward search re-offers nothing", []messages.StepResult{stampedStep(1, 100, 0.5), stampedStep(2, 50, 0.8), stampedStep(3, 25, 1)}, nil},
		{"a midpoint is no re-offer", []messages.StepResult{stampedStep(1, 100, 1), stampedStep(2, 200, 0.5), stampedStep(3, 150, 1)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := verdict.Rechecks(tt.steps, 0); !slices.Equal(got, tt.want) {
				t.Errorf("Rechecks() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestBracketNoneHeld: steps all below have no knee under Bracket (Knee
// still names the first below), and Conclude makes the run none_held,
// exit 6.
func TestBracketNoneHeld(t *testing.T) {
	steps := []messages.StepResult{stampedStep(1, 100, 0.5), stampedStep(2, 50, 0.6)}
	if k, _, _ := verdict.Knee(steps, 0); k == nil || k.Step != 2 {
		t.Errorf("Knee() = %+v, want step 2 (the lowest below)", k)
	}
	knee, held, _ := verdict.Bracket(steps, 0)
	if knee != nil || held != nil {
		t.Fatalf("Bracket() = %+v, %+v, want no knee and none held", knee, held)
	}
	r := messages.RunReport{Steps: steps}
	verdict.Conclude(&r)
	if r.Verdict != messages.RunNoneHeld || len(r.Reasons) != 1 || r.Reasons[0].Code != messages.ReasonNoneHeld || verdict.ExitCode(r) != verdict.ExitNoneHeld {
		t.Errorf("Conclude() verdict %q, reasons %+v, exit %d; want none_held, exit %d", r.Verdict, r.Reasons, verdict.ExitCode(r), verdict.ExitNoneHeld)
	}
}
