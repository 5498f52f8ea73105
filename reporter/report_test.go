package reporter

import (
	"slices"
	"strings"
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
	if rep.Knee == nil || rep.Knee.Step != 4 || rep.LastHeld == nil || rep.LastHeld.Step != 2 || !slices.Equal(rep.Invalid, []int{3}) {
		t.Errorf("Build() knee %+v, last held %+v, invalid %v, want step 4, step 2, [3]", rep.Knee, rep.LastHeld, rep.Invalid)
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

func TestFindings(t *testing.T) {
	tests := []struct {
		name  string
		steps []messages.StepResult
		want  []string // substrings, each in some finding
		not   []string // substrings in no finding
	}{
		{name: "no knee", steps: kneeSteps([]st{{step: 1, ratio: 1}, {step: 2, ratio: 0.95}}),
			want: []string{"no knee: every valid step delivered at least 90% of its target, up to step 2 at 2000/s offered (1900/s delivered)"}},
		{name: "no valid step", steps: kneeSteps([]st{{step: 1, ratio: 0.5, saturated: true}}),
			want: []string{"no valid step", "step 1: generator saturated on a producer — not a server measurement"}},
		{name: "knee at the first valid step", steps: kneeSteps([]st{{step: 1, ratio: 0.5, saturated: true}, {step: 2, ratio: 0.6}}),
			want: []string{"the knee is the first valid step (step 2, 2000/s)"}},
		{name: "recovery after the knee", steps: kneeSteps([]st{{step: 1, ratio: 1}, {step: 2, ratio: 0.8}, {step: 3, ratio: 0.95}, {step: 4, ratio: 0.97}}),
			want: []string{"steps 3, 4 held again after the knee at step 2", "knee stays the first step below the threshold"}},
		{name: "knee without errors", steps: kneeSteps([]st{{step: 1, ratio: 1}, {step: 2, ratio: 0.8}}),
			want: []string{"at the knee (step 2) no command failed"}, not: []string{"first valid step", "held again"}},
		{name: "knee errors, most frequent first, ties in session order", steps: withErrors(kneeSteps([]st{{step: 1, ratio: 0.5}})),
			want: []string{`the top errors were: select "NO [LIMIT] too many" (9), login "NO [AUTHENTICATIONFAILED]" (5), fetch "BAD x" (5)`}},
		{name: "incomplete, lost and corrupt", steps: withBookkeeping(kneeSteps([]st{{step: 1, ratio: 1}})),
			want: []string{"step 1: incomplete — the aggregator timed out", "step 1: 2 batches lost by producers and 1 corrupt"}},
		{name: "saturated producers named from the breakdown", steps: withSaturatedBreakdown(kneeSteps([]st{{step: 1, ratio: 1, saturated: true}})),
			want: []string{"step 1: generator saturated on p7, p9"}},
		{name: "golden", steps: goldenSteps(),
			want: []string{
				"login is bimodal at steps 1, 2, 3, 4, 5; at step 1: 62% at 0.210 ms (likely cache hits) and 38% at 58.0 ms",
				"producer p3 departs from the pool at step 4: its P99 is 5.1x the pool's",
				"averaging the per-producer P99s would understate the pooled P99 of fetch by 35% (step 4)",
				"step 5: 1 producer missing (p3)",
				"step 5: the fetch p99.9 of the merged sketches lies outside the sampled 95% interval",
			},
			not: []string{"pooled P99 of login"}},
		{name: "fallacy overstating, bimodal fetch, deviant at two steps", steps: withMore(kneeSteps([]st{{step: 1, ratio: 1}, {step: 2, ratio: 1}})),
			want: []string{
				"would overstate the pooled P99 of select by 20% (step 2)",
				"fetch is bimodal at step 2: 50% at 1.00 ms and 50% at 100 ms — its",
				"producer p4 departs from the pool at steps 1, 2 (at step 1: P99 9.00 ms",
			},
			not: []string{"likely cache hits"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Build("r", tt.steps, 0, fixedNow).Findings
			all := strings.Join(got, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("Build().Findings lack %q; got:\n%s", w, all)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(all, n) {
					t.Errorf("Build().Findings contain %q; got:\n%s", n, all)
				}
			}
		})
	}
}

func withErrors(steps []messages.StepResult) []messages.StepResult {
	steps[0].Errors = []messages.ErrorGroup{
		{Phase: "login", Kind: "NO [AUTHENTICATIONFAILED]", Count: 5},
		{Phase: "select", Kind: "NO [LIMIT] too many", Count: 9},
		{Phase: "fetch", Kind: "BAD x", Count: 5},
		{Phase: "store", Kind: "BAD y", Count: 1},
	}
	return steps
}

func withBookkeeping(steps []messages.StepResult) []messages.StepResult {
	steps[0].Complete, steps[0].Lost, steps[0].Corrupt = false, 2, 1
	return steps
}

func withSaturatedBreakdown(steps []messages.StepResult) []messages.StepResult {
	steps[0].PerProducer = []messages.ProducerBreakdown{{Producer: "p7", Saturated: true}, {Producer: "p8"}, {Producer: "p9", Saturated: true}}
	return steps
}

func withMore(steps []messages.StepResult) []messages.StepResult {
	steps[0].AverageP99Fallacy = map[string]float64{"select": 0.12}
	steps[1].AverageP99Fallacy = map[string]float64{"select": 0.2, "fetch": 0.05}
	steps[1].Phases = map[string]messages.PhaseResult{"fetch": {Bimodal: &messages.Bimodality{LowMode: 1, HighMode: 100, LowShare: 0.5, HighShare: 0.5}}}
	for i := range steps {
		steps[i].PerProducer = []messages.ProducerBreakdown{{Producer: "p4", P99: 9 * float64(i+1), Share: 0.1, Deviant: true}}
	}
	return steps
}
