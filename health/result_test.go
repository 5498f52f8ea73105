package health_test

import (
	"fmt"
	"testing"

	"github.com/imapload/imapload/health"
	"github.com/imapload/imapload/messages"
)

func result(run string, step int, verdict string) *messages.StepResult {
	return &messages.StepResult{
		Kind: messages.KindStepResult, Run: run, Step: step, TargetRate: 400, OfferedRate: 400,
		DeliveredRate: 300, Ratio: 0.75, Complete: true, Producers: []string{"p1", "p2"}, Verdict: verdict,
		Scheduled: 4000, Succeeded: 3000, Dropped: 500,
		Phases: map[string]messages.PhaseResult{"fetch": {Percentiles: messages.Percentiles{P99: 12.5}}},
		Errors: []messages.ErrorGroup{
			{Phase: "fetch", Kind: "timeout", Count: 300}, {Phase: "fetch", Kind: "NO", Count: 200},
			{Phase: "bogus", Kind: "x", Count: 7}, // not a phase: never a label
		},
		Health:   messages.HealthSummary{LagP99Max: 4, CPUMax: 0.5},
		Revision: 1,
	}
}

func TestObserveResult(t *testing.T) {
	m := health.NewMetrics(nil)
	m.ObserveResult(result("r1", 4, messages.VerdictHeld))
	m.ObserveResult(result("r1", 4, messages.VerdictBelow)) // a revision replaces it
	m.ObserveResult(nil)
	fams := scrape(t, m)
	step := []string{"run=r1", "step=4"}
	tests := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"imapload_results_total", nil, 2},
		{"imapload_step_target_rate", step, 400},
		{"imapload_step_offered_rate", step, 400},
		{"imapload_step_delivered_rate", step, 300},
		{"imapload_step_ratio", step, 0.75},
		{"imapload_step_revision", step, 1},
		{"imapload_step_scheduled", step, 4000},
		{"imapload_step_succeeded", step, 3000},
		{"imapload_step_dropped", step, 500},
		{"imapload_step_complete", step, 1},
		{"imapload_step_producers", step, 2},
		{"imapload_step_schedule_lag_p99_max_seconds", step, 0.004},
		{"imapload_step_cpu_max_cores", step, 0.5},
		{"imapload_step_verdict", append(step, "verdict=below"), 1},
		{"imapload_step_verdict", append(step, "verdict=held"), 0},
		{"imapload_step_verdict", append(step, "verdict=inconclusive"), 0},
		{"imapload_step_errors", append(step, "phase=fetch"), 500},
		{"imapload_step_errors", append(step, "phase=login"), 0},
		{"imapload_step_response_p99_seconds", append(step, "phase=fetch"), 0.0125},
	}
	for _, tt := range tests {
		t.Run(tt.name+fmt.Sprint(tt.labels), func(t *testing.T) {
			if got, ok := value(fams, tt.name, tt.labels...); !ok || got != tt.want {
				t.Errorf("%s%v = %v (present %v), want %v", tt.name, tt.labels, got, ok, tt.want)
			}
		})
	}
	if n := len(fams["imapload_step_errors"].GetMetric()); n != messages.NumPhases {
		t.Errorf("imapload_step_errors has %d series, want one per phase (%d)", n, messages.NumPhases)
	}
}

func TestObserveResultUnknownVerdict(t *testing.T) {
	m := health.NewMetrics(nil)
	m.ObserveResult(result("r1", 1, "maybe"))
	if f := scrape(t, m)["imapload_step_verdict"]; f != nil {
		t.Errorf("imapload_step_verdict has %d series for an unknown verdict, want none", len(f.GetMetric()))
	}
}
