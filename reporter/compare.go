package reporter

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/imapload/imapload/messages"
)

// A fixed threshold makes "where the server falls over" a number that can be
// compared between runs — but only up to what each run could resolve. A
// ramp knows the knee lies above the last rate that held and at or below the
// first that did not: a difference between two runs is real only when those
// ranges do not overlap. Likewise a P99 is known to within its interval, and
// only P99s at the same offered rate are comparable.

// Comparison is several runs side by side, in time order.
type Comparison struct {
	Runs []CompareRun `json:"runs"`
}

// CompareRun is one run of a Comparison.
type CompareRun struct {
	Run string `json:"run"`
	// When is when its newest step result was made (UTC).
	When    time.Time `json:"when"`
	Verdict string    `json:"verdict"`
	// Knee and LastHeld are the run report's.
	Knee     *messages.Knee    `json:"knee"`
	LastHeld *messages.StepRef `json:"last_held"`
	// KneeRange is where the first rate the server did not sustain lies:
	// above [0] and at most [1], commands/s; [1] is open (null) when no
	// step fell below the threshold, and [0] is 0 when none held.
	KneeRange messages.Interval `json:"knee_range"`
	// P99 is each phase's response-time P99 at the last held step, with its
	// interval, ms.
	P99 map[string]ComparedP99 `json:"p99,omitempty"`
	// KneeChange compares the knee with the previous run's: "higher",
	// "lower", or "same" when the ranges overlap (the difference, if any, is
	// within the step spacing). Empty for the first run.
	KneeChange string `json:"knee_change,omitempty"`
}

// ComparedP99 is one phase's P99 at a run's last held step.
type ComparedP99 struct {
	P99 float64           `json:"p99"`
	CI  messages.Interval `json:"ci"`
	// Change compares it with the previous run's at the same phase:
	// "higher", "lower", "same" (intervals overlap), or "other rate" when
	// the two last held steps were offered different rates.
	Change string `json:"change,omitempty"`
}

// Changes.
const (
	ChangeHigher    = "higher"
	ChangeLower     = "lower"
	ChangeSame      = "same"
	ChangeOtherRate = "other rate"
)

// Compare lines up reports in time order and says, run by run, whether the
// knee and each P99 moved by more than the measurement can resolve.
func Compare(reports []messages.RunReport) Comparison {
	runs := make([]CompareRun, 0, len(reports))
	for _, r := range reports {
		runs = append(runs, compareRun(r))
	}
	slices.SortStableFunc(runs, func(a, b CompareRun) int { return a.When.Compare(b.When) })
	for i := 1; i < len(runs); i++ {
		compareWith(&runs[i], runs[i-1])
	}
	return Comparison{Runs: runs}
}

func compareRun(r messages.RunReport) CompareRun {
	c := CompareRun{Run: r.Run, When: newest(r), Verdict: r.Verdict, Knee: r.Knee, LastHeld: r.LastHeld,
		KneeRange: messages.Interval{0, math.Inf(1)}}
	if r.LastHeld != nil {
		c.KneeRange[0] = r.LastHeld.Rate
		c.P99 = p99At(r, r.LastHeld.Step)
	}
	if r.Knee != nil {
		c.KneeRange[1] = r.Knee.Rate
	}
	return c
}

// newest is when the newest step result of r was made, or r's own time.
func newest(r messages.RunReport) time.Time {
	t := r.Generated
	if len(r.Steps) > 0 {
		t = slices.MaxFunc(r.Steps, func(a, b messages.StepResult) int { return a.Generated.Compare(b.Generated) }).Generated
	}
	return t.UTC()
}

// p99At returns the P99 of each measured phase of step.
func p99At(r messages.RunReport, step int) map[string]ComparedP99 {
	i := slices.IndexFunc(r.Steps, func(s messages.StepResult) bool { return s.Step == step })
	if i < 0 {
		return nil
	}
	out := map[string]ComparedP99{}
	for name, p := range r.Steps[i].Phases {
		if p.Count > 0 {
			out[name] = ComparedP99{P99: p.P99, CI: p.CI.P99}
		}
	}
	return out
}

// compareWith compares c with the run before it.
func compareWith(c *CompareRun, prev CompareRun) {
	c.KneeChange = change(c.KneeRange, prev.KneeRange)
	for name, p := range c.P99 {
		q, ok := prev.P99[name]
		switch {
		case !ok:
			continue
		case c.LastHeld.Rate != prev.LastHeld.Rate:
			p.Change = ChangeOtherRate
		default:
			p.Change = change(p.CI, q.CI)
		}
		c.P99[name] = p
	}
}

// change says whether the quantity known to lie in a moved from the one in
// b: only when the ranges are disjoint.
func change(a, b messages.Interval) string {
	switch {
	case a[0] >= b[1]:
		return ChangeHigher
	case b[0] >= a[1]:
		return ChangeLower
	}
	return ChangeSame
}

// comparePhases lists the phases any run measured, in the contract's order.
func comparePhases(c Comparison) []string {
	var names []string
	for _, ph := range messages.Phases() {
		if slices.ContainsFunc(c.Runs, func(r CompareRun) bool { _, ok := r.P99[ph.String()]; return ok }) {
			names = append(names, ph.String())
		}
	}
	return names
}

// Only returns c with the P99 of the named phases alone (for a narrower
// table); c is not changed.
func (c Comparison) Only(phases []string) Comparison {
	runs := slices.Clone(c.Runs)
	for i, r := range runs {
		kept := map[string]ComparedP99{}
		for _, ph := range phases {
			if p, ok := r.P99[strings.TrimSpace(ph)]; ok {
				kept[strings.TrimSpace(ph)] = p
			}
		}
		runs[i].P99 = kept
	}
	return Comparison{Runs: runs}
}
