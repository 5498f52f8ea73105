package reporter

import (
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// findingsOf returns the findings of steps, with the knee FindKnee finds.
// The steps carry no verdict unless a case gives one by hand: the findings
// then judge them as before verdicts (saturated → inconclusive).
func findingsOf(steps []messages.StepResult) []string {
	sorted := latestPerStep(steps)
	knee, _, _ := FindKnee(sorted, DefaultThreshold)
	return findings(sorted, knee, DefaultThreshold)
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
		{name: "held up to an inconclusive step", steps: kneeSteps([]st{{step: 1, ratio: 1}, {step: 2, ratio: 0.95}, {step: 3, ratio: 0.5, saturated: true}}),
			want: []string{"up to step 2 at 2000/s offered (1900/s delivered); the steps above it were inconclusive, so where the knee lies is not known"},
			not:  []string{"no knee"}},
		{name: "no valid step", steps: kneeSteps([]st{{step: 1, ratio: 0.5, saturated: true}}),
			want: []string{"no valid step: every step was inconclusive"},
			not:  []string{"add producers or give them more CPU — "}},
		{name: "no hint to start lower at the first valid step (the ramp searches down)", steps: kneeSteps([]st{{step: 1, ratio: 0.5, saturated: true}, {step: 2, ratio: 0.6}}),
			not: []string{"first valid step", "start the ramp lower"}},
		{name: "recovery after the knee", steps: kneeSteps([]st{{step: 1, ratio: 1}, {step: 2, ratio: 0.8}, {step: 3, ratio: 0.95}, {step: 4, ratio: 0.97}}),
			want: []string{"steps 3, 4 held again after the knee at step 2", "knee stays the first step below the threshold"}},
		{name: "knee without errors", steps: kneeSteps([]st{{step: 1, ratio: 1}, {step: 2, ratio: 0.8}}),
			want: []string{"at the knee (step 2) no command failed"}, not: []string{"first valid step", "held again"}},
		{name: "knee errors, most frequent first, ties in session order", steps: withErrors(kneeSteps([]st{{step: 1, ratio: 0.5}})),
			want: []string{`the top errors were: select "NO [LIMIT] too many" (9), login "NO [AUTHENTICATIONFAILED]" (5), fetch "BAD x" (5)`}},
		{name: "incomplete, lost and corrupt", steps: withBookkeeping(kneeSteps([]st{{step: 1, ratio: 1}})),
			want: []string{"step 1: incomplete — the aggregator timed out", "step 1: 2 batches lost by producers and 1 corrupt"}},
		{name: "golden", steps: goldenSteps(),
			want: []string{
				"login is bimodal at steps 1, 2, 4, 5; at step 1: two populations, 62% of the commands around 0.210 ms and 38% around 58.0 ms — its percentiles describe neither; possibly cache hits and password-hash misses",
				"producer p3 departs from the pool at step 4: its P99 is 5.1x the pool's",
				"averaging the per-producer P99s would understate the pooled P99 of fetch by 35% (step 4)",
				"step 5: 1 producer missing (p3)",
				"step 5: the fetch p99.9 of the merged sketches lies outside the sampled 95% interval",
			},
			not: []string{"pooled P99 of login", "fast one from", "at steps 1, 2, 3"}},
		{name: "fallacy overstating, bimodal fetch, deviant at two steps", steps: withMore(kneeSteps([]st{{step: 1, ratio: 1}, {step: 2, ratio: 1}})),
			want: []string{
				"would overstate the pooled P99 of select by 20% (step 2)",
				"fetch is bimodal at step 2: two populations, 50% of the commands around 1.00 ms and 50% around 100 ms — its percentiles describe neither",
				"producer p4 departs from the pool at steps 1, 2 (at step 1: P99 9.00 ms",
			},
			not: []string{"possibly", "cache hits"}},
		{name: "bimodal login separated by producers", steps: withLoginSplit(kneeSteps([]st{{step: 1, ratio: 1}}), 0.66),
			want: []string{"66% of the commands around 0.200 ms and 34% around 60.0 ms (the fast one from p1, p2, the slow one from p3)"}},
		{name: "bimodal login not separated by producers", steps: withLoginSplit(kneeSteps([]st{{step: 1, ratio: 1}}), 0.5),
			want: []string{"50% of the commands around 0.200 ms and 50% around 60.0 ms — its"},
			not:  []string{"fast one from", "p1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all := strings.Join(findingsOf(tt.steps), "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("findings() lack %q; got:\n%s", w, all)
				}
			}
			for _, n := range append(tt.not, "likely") {
				if strings.Contains(all, n) {
					t.Errorf("findings() contain %q; got:\n%s", n, all)
				}
			}
		})
	}
}

// TestFindingsSkipInconclusive gives an inconclusive step everything a
// finding could quote: no finding names it (the table lists it, with why).
func TestFindingsSkipInconclusive(t *testing.T) {
	steps := withMore(kneeSteps([]st{{step: 1, ratio: 1}, {step: 2, ratio: 1}, {step: 3, ratio: 0.5}}))
	bad := &steps[1]
	bad.Verdict = messages.VerdictInconclusive
	bad.Reasons = []messages.Reason{{Code: messages.ReasonHostOverloaded, Detail: "p2 waited for a CPU 35% of the time", Remedy: "run the producers where CPU is idle"}}
	bad.Missing, bad.Complete, bad.Lost, bad.Dropped = []string{"p9"}, false, 3, 40
	bad.Errors = []messages.ErrorGroup{{Phase: "fetch", Kind: "BAD z", Count: 7}}
	bad.Phases["fetch"] = messages.PhaseResult{Bimodal: bad.Phases["fetch"].Bimodal, Disagree: []string{"p99"}}
	for _, f := range findingsOf(steps) {
		if strings.Contains(f, "step 2") || strings.Contains(f, "steps 1, 2") || strings.Contains(f, "bimodal") {
			t.Errorf("findings() quote inconclusive step 2: %q", f)
		}
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

// withLoginSplit makes login bimodal (0.2 and 60 ms, lowShare fast) where
// p1 and p2 (two thirds of the completions) have P99s under a millisecond.
func withLoginSplit(steps []messages.StepResult, lowShare float64) []messages.StepResult {
	steps[0].Phases = map[string]messages.PhaseResult{"login": {Count: 900,
		Bimodal: &messages.Bimodality{LowMode: 0.2, HighMode: 60, LowShare: lowShare, HighShare: 1 - lowShare, Separation: 5}}}
	steps[0].PerProducer = []messages.ProducerBreakdown{
		{Producer: "p1", P99: 0.5, Share: 0.33}, {Producer: "p2", P99: 0.6, Share: 0.33}, {Producer: "p3", P99: 70, Share: 0.34},
	}
	return steps
}

func TestRejectedFindings(t *testing.T) {
	steps := []messages.StepResult{{Step: 1}, {Step: 2, Rejected: map[string]uint64{"window": 2, "fleet_rate": 1}}}
	got := rejectedFindings(steps)
	want := "step 2: 3 batch(es) refused for disagreeing with the step's command (fleet_rate ×1, window ×2) and left out; check who publishes on imapload.samples"
	if len(got) != 1 || got[0] != want {
		t.Errorf("rejectedFindings() = %q, want [%q]", got, want)
	}
}

// TestWriteList: a list printed after the table (the demo's) has the
// findings' bullet and folds to TableWidth, its text intact.
func TestWriteList(t *testing.T) {
	long := strings.Repeat("the server fell behind its schedule ", 6)
	var b strings.Builder
	if err := WriteList(&b, []string{"short", long}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "  - short\n  - the server") {
		t.Errorf("WriteList() = %q, want each item after %q", out, itemIndent)
	}
	if n := longest(out); n > TableWidth {
		t.Errorf("WriteList() longest line %d columns, want ≤ %d:\n%s", n, TableWidth, out)
	}
	if got, want := unfolded(out), "- short - "+strings.TrimSpace(long); got != want {
		t.Errorf("WriteList() unfolded = %q, want %q", got, want)
	}
}
