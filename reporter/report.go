package reporter

import (
	"cmp"
	"slices"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// Build makes the report of run from its step results: the steps in step
// order, each judged at threshold (verdict.Stamp), the knee, the last step
// that held, the inconclusive steps, the run's verdict with its reasons and
// plain findings. It is pure: now stamps Generated (in UTC). Thresholds are
// left to the caller (verdict.Criteria).
//
// Build expects one result per step; when a step number appears more than
// once, its highest revision wins, and of equal revisions the last
// occurrence in steps (the aggregator may republish a step). A threshold outside (0, 1] means DefaultThreshold.
// The slices of the report are never nil, so that JSON shows [] rather than null.
func Build(run string, steps []messages.StepResult, threshold float64, now time.Time) messages.RunReport {
	threshold = thresholdOrDefault(threshold)
	sorted := stamped(latestPerStep(steps), threshold)
	knee, lastHeld, invalid := verdict.Bracket(sorted, threshold)
	r := messages.RunReport{
		Kind:      messages.KindRunReport,
		Run:       run,
		Threshold: threshold,
		Knee:      knee,
		LastHeld:  lastHeld,
		MostHeld:  verdict.MostHeld(sorted, threshold),
		Invalid:   orEmpty(invalid),
		Findings:  orEmpty(findings(sorted, knee, threshold)),
		Steps:     sorted,
		Generated: now.UTC(),
	}
	verdict.Conclude(&r)
	return r
}

// latestPerStep returns a copy of steps sorted by step number, keeping of
// each step number its highest revision, and of equal revisions the last.
func latestPerStep(steps []messages.StepResult) []messages.StepResult {
	at := make(map[int]int, len(steps)) // step → index in out
	out := make([]messages.StepResult, 0, len(steps))
	for _, s := range steps {
		i, ok := at[s.Step]
		switch {
		case !ok:
			at[s.Step] = len(out)
			out = append(out, s)
		case s.Revision >= out[i].Revision:
			out[i] = s
		}
	}
	slices.SortFunc(out, func(a, b messages.StepResult) int { return cmp.Compare(a.Step, b.Step) })
	return out
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
