package main

import (
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

func TestDemoFindings(t *testing.T) {
	setup := demoSetup{capacity: 667, bcryptCost: 7, slowFraction: 0.05, slowDelay: 30 * time.Millisecond}
	held := messages.StepResult{Step: 1, TargetRate: 400, Ratio: 1,
		Phases: map[string]messages.PhaseResult{
			"login": {Bimodal: &messages.Bimodality{LowMode: 3.5, HighMode: 14, LowShare: 0.6, HighShare: 0.4}},
			"fetch": {Percentiles: messages.Percentiles{P99: 36}},
		},
		AverageP99Fallacy: map[string]float64{"fetch": -0.25, "login": -0.5}}
	plain := messages.StepResult{Step: 1, TargetRate: 400, Ratio: 1, Phases: map[string]messages.PhaseResult{}}
	tests := []struct {
		name   string
		report messages.RunReport
		want   []string
		not    []string // what the report's findings or its verdict already print
	}{
		{
			name: "knee and findings",
			report: messages.RunReport{Verdict: messages.RunKnee, Steps: []messages.StepResult{held},
				Knee: &messages.Knee{Step: 2, Rate: 800, DeliveredRate: 560}, LastHeld: &messages.StepRef{Step: 1, Rate: 400}},
			want: []string{
				"capacity: the server was set to 667 commands/s; the knee is at 800/s offered (step 2, 560/s delivered) and the last step that held offered 400/s",
				"login cost: the server was set to cache logins and pay bcrypt cost 7 on a miss, which gives two modes: the findings above find login bimodal from step 1",
				"slow backend: 5% of the accounts pay 30ms more per mailbox command: the tail that averaging the per-producer P99s would understate, as the findings above say of fetch",
			},
			not: []string{"3.50 ms", "60%", "27.0 ms", "25%"},
		},
		{
			name: "a gap too small for the report's findings is the demo's to give",
			report: messages.RunReport{Verdict: messages.RunNoKnee, Steps: []messages.StepResult{{Step: 1, TargetRate: 400, Ratio: 1,
				Phases: map[string]messages.PhaseResult{"fetch": {Percentiles: messages.Percentiles{P99: 36}}}, AverageP99Fallacy: map[string]float64{"fetch": -0.05}}}},
			want: []string{"at step 1 the pooled P99 of fetch is 36.0 ms, while the average of the per-producer P99s would say 34.2 ms (5% low)"},
		},
		{
			name:   "every step held",
			report: messages.RunReport{Verdict: messages.RunNoKnee, Steps: []messages.StepResult{plain}},
			want: []string{"no knee was found: raise --max", "login was not found bimodal in any step",
				"no phase's per-producer P99s disagreed enough to matter"},
		},
		{
			name: "a busy host: no knee, and why",
			report: messages.RunReport{Verdict: messages.RunInconclusive, Steps: []messages.StepResult{plain}, Invalid: []int{1},
				Reasons: []messages.Reason{{Code: messages.ReasonHostOverloaded, Detail: "step 1 at 100/s: fell behind", Remedy: "run them where CPU is idle"}}},
			want: []string{"the run could not measure it (inconclusive: host_overloaded; why and what to do: see the verdict above)"},
			not:  []string{"fell behind", "run them where CPU is idle"},
		},
		{
			name: "a knee between inconclusive steps is a range",
			report: messages.RunReport{Verdict: messages.RunKnee, Steps: []messages.StepResult{plain},
				Knee: &messages.Knee{Step: 5, Rate: 1600, Low: 800, Uncertain: []int{4}}, LastHeld: &messages.StepRef{Step: 3, Rate: 400}},
			want: []string{"the knee is between 800/s and 1600/s offered (steps [4] in between were inconclusive)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(demoFindings(tt.report, setup), "\n")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("demoFindings() =\n%s\nwant it to contain %q", got, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("demoFindings() =\n%s\nrepeats %q, which the report already prints", got, n)
				}
			}
			if strings.Contains(got, "raise --max") && len(tt.report.Invalid) > 0 {
				t.Errorf("demoFindings() advises raising --max although steps %v were invalid", tt.report.Invalid)
			}
		})
	}
}
