package messages

import (
	"strings"
	"testing"
)

func TestStepSummary(t *testing.T) {
	r := noisyResult()
	r.Attempted, r.Succeeded = 1000, 988
	r.Revision, r.Missing = 1, []string{"p2"}
	r.Phases["login"] = PhaseResult{Count: 10, Percentiles: Percentiles{P99: 45.06}}
	want := "step 3 (revision 1): below: 3598.4 of 4000/s delivered (89.9%); p99 login 45.1 ms, fetch 12.3 ms; 1.2% failed; missing p2"
	if got := r.Summary(); got != want {
		t.Errorf("Summary() =\n%q\nwant\n%q", got, want)
	}
}

func TestStepSummaryInconclusive(t *testing.T) {
	r := StepResult{Step: 2, Verdict: VerdictInconclusive, TargetRate: 100, DeliveredRate: 99.96, Ratio: 0.9996,
		Reasons: []Reason{{Code: ReasonHostOverloaded}, {Code: ReasonHostOverloaded}, {Code: ReasonIncomplete}}}
	want := "step 2: inconclusive (host_overloaded, incomplete): 100 of 100/s delivered (99.9%)"
	if got := r.Summary(); got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
}

func TestRunSummary(t *testing.T) {
	tests := []struct {
		name string
		rep  RunReport
		want string
	}{
		{"knee", RunReport{Run: "r1", Verdict: RunKnee, Knee: &Knee{Step: 4, Rate: 8000}, LastHeld: &StepRef{Step: 3, Rate: 4000}, Steps: make([]StepResult, 4)},
			"run r1: knee at 8000/s (step 4), last held 4000/s (step 3); 4 steps"},
		{"knee range", RunReport{Run: "r1", Verdict: RunKnee, Knee: &Knee{Step: 4, Rate: 8000, Low: 6000}, Steps: make([]StepResult, 4)},
			"run r1: knee at 8000/s (step 4), somewhere from 6000/s; 4 steps"},
		{"no knee", RunReport{Run: "r2", Verdict: RunNoKnee, LastHeld: &StepRef{Step: 2, Rate: 2000}, Steps: make([]StepResult, 2)},
			"run r2: no knee, last held 2000/s (step 2); 2 steps"},
		{"failing", RunReport{Run: "r3", Verdict: RunFailing, Reasons: []Reason{{Code: ReasonFailing}},
			TopErrors: []ErrorGroup{{Phase: "login", Kind: "NO [AUTHENTICATIONFAILED]\r\nx"}}, Steps: make([]StepResult, 1)},
			"run r3: failing; top error login: NO [AUTHENTICATIONFAILED]  x; 1 step"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.rep.Summary()
			if got != tt.want {
				t.Errorf("Summary() =\n%q\nwant\n%q", got, tt.want)
			}
			if strings.ContainsAny(got, "\r\n") {
				t.Errorf("Summary() %q holds a line break", got)
			}
		})
	}
}
