package reporter

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/imapload/imapload/messages"
)

// FallacyNote is the smallest relative gap between the average of the
// per-producer P99s and the pooled P99 that is worth a finding (the demo
// refers to that finding rather than repeat it).
const FallacyNote = 0.10

// topErrors is how many error kinds the knee finding and the table name.
const topErrors = 3

// findings returns plain sentences about steps (sorted by step number): the
// knee and what happened there, refused batches, steps whose counts are short, bimodal phases, producers that depart from the pool, the
// averaging fallacy, and percentiles where sketch and sample disagree. An
// inconclusive step is never quoted as evidence: no finding names it (the
// table lists the inconclusive steps once, with their reasons under each).
func findings(steps []messages.StepResult, knee *messages.Knee, threshold float64) []string {
	ok := conclusive(steps)
	out := kneeFindings(steps, ok, knee, threshold)
	out = append(out, overloadFindings(steps, threshold)...)
	out = append(out, serverFindings(steps, ok, knee, threshold)...)
	out = append(out, rejectedFindings(steps)...)
	for i := range ok {
		out = append(out, stepFindings(&ok[i])...)
	}
	out = append(out, bimodalFindings(ok)...)
	out = append(out, deviantFindings(ok)...)
	out = append(out, fallacyFindings(ok)...)
	return append(out, disagreeFindings(ok)...)
}

// rejectedFindings names the steps for which the aggregator refused batches
// that disagreed with the step's command: none was pooled, but someone
// published them (a stale producer, a forged message).
func rejectedFindings(steps []messages.StepResult) []string {
	var out []string
	for _, s := range steps {
		if len(s.Rejected) == 0 {
			continue
		}
		var parts []string
		total := uint64(0)
		for _, reason := range slices.Sorted(maps.Keys(s.Rejected)) {
			parts = append(parts, fmt.Sprintf("%s ×%d", reason, s.Rejected[reason]))
			total += s.Rejected[reason]
		}
		out = append(out, fmt.Sprintf("step %d: %d batch(es) refused for disagreeing with the step's command (%s) and left out; check who publishes on imapload.samples", s.Step, total, strings.Join(parts, ", ")))
	}
	return out
}

// conclusive returns the steps that are not inconclusive, in their order.
func conclusive(steps []messages.StepResult) []messages.StepResult {
	out := make([]messages.StepResult, 0, len(steps))
	for i := range steps {
		if !isInconclusive(&steps[i]) {
			out = append(out, steps[i])
		}
	}
	return out
}

// kneeFindings speaks of the knee among ok, the conclusive steps of steps.
func kneeFindings(steps, ok []messages.StepResult, knee *messages.Knee, threshold float64) []string {
	valid := byRate(ok)
	switch {
	case len(steps) == 0:
		return nil
	case len(valid) == 0:
		return []string{"no valid step: every step was inconclusive, so no rate is known to hold"}
	case knee == nil:
		return noKneeFindings(steps, valid, threshold)
	}
	out := recoveryFindings(valid, knee, threshold)
	return append(out, kneeErrors(ok, knee.Step)...)
}

// noKneeFindings says that every valid step held, when they all did, and
// whether inconclusive steps above them leave the knee unknown.
func noKneeFindings(steps []messages.StepResult, valid []*messages.StepResult, threshold float64) []string {
	for _, s := range valid {
		if stepVerdict(s, threshold) != messages.VerdictHeld {
			return nil // not a clean ramp: the run verdict says why
		}
	}
	top := valid[len(valid)-1]
	held := fmt.Sprintf("every valid step delivered at least %s of its target, up to step %d at %s/s offered (%s/s delivered)",
		percent(threshold), top.Step, rate(top.TargetRate), rate(top.DeliveredRate))
	if slices.ContainsFunc(steps, func(s messages.StepResult) bool { return s.TargetRate > top.TargetRate }) {
		return []string{held + "; the steps above it were inconclusive, so where the knee lies is not known"}
	}
	return []string{"no knee: " + held}
}

// recoveryFindings points out valid steps above the knee's rate that held
// again: the knee stays the first dip.
func recoveryFindings(valid []*messages.StepResult, knee *messages.Knee, threshold float64) []string {
	var again []int
	seenKnee := false
	for _, s := range valid {
		if seenKnee && stepVerdict(s, threshold) == messages.VerdictHeld {
			again = append(again, s.Step)
		}
		seenKnee = seenKnee || s.Step == knee.Step
	}
	if len(again) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s held again after the knee at step %d: the delivered series is not monotone (noise, or a server that recovered); the knee stays the first step below the threshold",
		stepsWord(again), knee.Step)}
}

// kneeErrors names the top errors at the knee, which must be among the
// conclusive steps ok.
func kneeErrors(ok []messages.StepResult, step int) []string {
	i := slices.IndexFunc(ok, func(s messages.StepResult) bool { return s.Step == step })
	if i < 0 {
		return nil
	}
	errs := sortedErrors(ok[i].Errors)
	if len(errs) == 0 {
		return []string{fmt.Sprintf("at the knee (step %d) no command failed: the server fell behind by slowing down, not by refusing", step)}
	}
	parts := make([]string, 0, topErrors)
	for _, e := range errs[:min(topErrors, len(errs))] {
		parts = append(parts, fmt.Sprintf("%s %q (%d)", e.Phase, clip(e.Kind, 80), e.Count))
	}
	return []string{fmt.Sprintf("at the knee (step %d) the top errors were: %s", step, strings.Join(parts, ", "))}
}

// sortedErrors returns a copy of errs, most frequent first, then by phase and kind.
func sortedErrors(errs []messages.ErrorGroup) []messages.ErrorGroup {
	out := slices.Clone(errs)
	slices.SortStableFunc(out, func(a, b messages.ErrorGroup) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(phaseOrder(a.Phase), phaseOrder(b.Phase)), strings.Compare(a.Kind, b.Kind))
	})
	return out
}

// stepFindings says why a conclusive step's counts may be short.
func stepFindings(s *messages.StepResult) []string {
	var out []string
	if len(s.Missing) > 0 {
		out = append(out, fmt.Sprintf("step %d: %s missing (%s): the delivered rate counts only the producers that sent their final batch",
			s.Step, plural(len(s.Missing), "producer"), strings.Join(s.Missing, ", ")))
	} else if !s.Complete {
		out = append(out, fmt.Sprintf("step %d: incomplete — the aggregator timed out before every final batch arrived", s.Step))
	}
	if s.Lost+s.Corrupt > 0 {
		out = append(out, fmt.Sprintf("step %d: %d batches lost by producers and %d corrupt: its counts are too low", s.Step, s.Lost, s.Corrupt))
	}
	if s.Dropped > 0 {
		out = append(out, fmt.Sprintf("step %d: the generators dropped %d scheduled commands (no free session)", s.Step, s.Dropped))
	}
	return out
}

// allPhases lists the phase names of every step, in session order.
func allPhases(steps []messages.StepResult) []string {
	union := map[string]messages.PhaseResult{}
	for _, s := range steps {
		for name := range s.Phases {
			union[name] = messages.PhaseResult{}
		}
	}
	return phaseNames(union)
}

// deviantFindings names each producer that departs from the pool once, with
// the steps where it did and its figures at the first of them.
func deviantFindings(steps []messages.StepResult) []string {
	at := map[string][]int{}
	first := map[string]messages.ProducerBreakdown{}
	for _, s := range steps {
		for _, p := range s.PerProducer {
			if !p.Deviant {
				continue
			}
			if _, ok := first[p.Producer]; !ok {
				first[p.Producer] = p
			}
			at[p.Producer] = append(at[p.Producer], s.Step)
		}
	}
	names := make([]string, 0, len(at))
	for name := range at {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]string, 0, len(names))
	for _, name := range names {
		out = append(out, deviantSentence(first[name], at[name]))
	}
	return out
}

func deviantSentence(p messages.ProducerBreakdown, at []int) string {
	reason := ""
	if p.Reason != "" {
		reason = ": " + p.Reason
	}
	where := ""
	if len(at) > 1 {
		where = fmt.Sprintf("at step %d: ", at[0])
	}
	return fmt.Sprintf("producer %s departs from the pool at %s%s (%sP99 %s ms, %s of the completions); shown beside the pool, never averaged into it",
		p.Producer, stepsWord(at), reason, where, ms(p.P99), percent(p.Share))
}

// fallacyFindings quantifies, per phase at its worst step, how wrong the
// average of the per-producer P99s would have been.
func fallacyFindings(steps []messages.StepResult) []string {
	worst := map[string]float64{}
	worstStep := map[string]int{}
	for _, s := range steps {
		for phase, v := range s.AverageP99Fallacy {
			if math.Abs(v) > math.Abs(worst[phase]) {
				worst[phase], worstStep[phase] = v, s.Step
			}
		}
	}
	var out []string
	for _, phase := range phaseNames(toPhaseSet(worst)) {
		v := worst[phase]
		if math.Abs(v) < FallacyNote {
			continue
		}
		verb := "understate"
		if v > 0 {
			verb = "overstate"
		}
		out = append(out, fmt.Sprintf("averaging the per-producer P99s would %s the pooled P99 of %s by %s (step %d); the report uses pooled percentiles only",
			verb, phase, percent(math.Abs(v)), worstStep[phase]))
	}
	return out
}

func toPhaseSet(m map[string]float64) map[string]messages.PhaseResult {
	set := make(map[string]messages.PhaseResult, len(m))
	for k := range m {
		set[k] = messages.PhaseResult{}
	}
	return set
}

// disagreeFindings lists phases whose sketch percentiles fell outside the
// sample's 95% interval.
func disagreeFindings(steps []messages.StepResult) []string {
	var out []string
	for _, s := range steps {
		for _, name := range phaseNames(s.Phases) {
			if d := s.Phases[name].Disagree; len(d) > 0 {
				verb := "lies"
				if len(d) > 1 {
					verb = "lie"
				}
				out = append(out, fmt.Sprintf("step %d: the %s %s of the merged sketches %s outside the sampled 95%% interval (expected by chance about 1 time in 20 per percentile)",
					s.Step, name, strings.Join(d, ", "), verb))
			}
		}
	}
	return out
}
