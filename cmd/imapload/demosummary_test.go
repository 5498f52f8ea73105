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
	}{
		{
			name: "knee and findings",
			report: messages.RunReport{Steps: []messages.StepResult{held},
				Knee: &messages.Knee{Step: 2, Rate: 800, DeliveredRate: 560}, LastHeld: &messages.StepRef{Step: 1, Rate: 400}},
			want: []string{
				"capacity: the server was set to 667 commands/s; the knee is at 800/s offered (step 2, 560/s delivered) and the last step that held offered 400/s",
				"login cost: bimodal at step 1 — 60% at 3.50 ms (login cache hits) and 40% at 14.00 ms (bcrypt cost 7 on a cache miss)",
				"at step 1 the pooled P99 of fetch is 36.0 ms, while the average of the per-producer P99s would say 27.0 ms (25% low)",
			},
		},
		{
			name:   "every step held",
			report: messages.RunReport{Steps: []messages.StepResult{plain}},
			want: []string{"no knee was found; raise --max", "login was not found bimodal in any step",
				"no phase's per-producer P99s disagreed enough to matter"},
		},
		{
			name:   "saturated generators hide the knee",
			report: messages.RunReport{Steps: []messages.StepResult{plain}, Invalid: []int{3, 4}},
			want:   []string{"no knee was found: the generators fell behind their schedule at steps [3 4]"},
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
			if strings.Contains(got, "raise --max") && len(tt.report.Invalid) > 0 {
				t.Errorf("demoFindings() advises raising --max although steps %v were invalid", tt.report.Invalid)
			}
		})
	}
}
