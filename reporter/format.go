package reporter

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
)

// ms formats a latency in milliseconds with about three significant digits
// and no exponent: 0.210, 1.23, 58.3, 412.
func ms(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// rate formats commands per second: whole numbers from 100 up, one decimal below.
func rate(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// ratio formats a delivered/target ratio with two decimals.
func ratio(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// percent formats a share (0.62) as a whole percentage ("62%").
func percent(v float64) string { return strconv.FormatFloat(100*v, 'f', 0, 64) + "%" }

// joinInts lists step numbers: "2, 3, 5".
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// plural returns "1 producer" or "2 producers".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// stepsWord returns "step 3" or "steps 3, 4".
func stepsWord(ns []int) string {
	if len(ns) == 1 {
		return "step " + strconv.Itoa(ns[0])
	}
	return "steps " + joinInts(ns)
}

// phaseNames returns the phase names of a step in session order (dial, login,
// list…), then any name unknown to this version, sorted.
func phaseNames(phases map[string]messages.PhaseResult) []string {
	names := make([]string, 0, len(phases))
	for name := range phases {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(phaseOrder(a), phaseOrder(b)), strings.Compare(a, b))
	})
	return names
}

func phaseOrder(name string) int {
	p, err := messages.ParsePhase(name)
	if err != nil {
		return messages.NumPhases
	}
	return int(p)
}

// failed is a phase's failed commands, attempted − succeeded.
func failed(p messages.PhaseResult) uint64 {
	if p.Succeeded > p.Attempted {
		return 0
	}
	return p.Attempted - p.Succeeded
}

// clip shortens s to at most n runes, marking the cut with "...".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

// stepVerdict is s.Verdict. A result that predates verdicts (empty) is
// inconclusive when its generator was saturated, else held or below by the
// threshold, as before.
func stepVerdict(s *messages.StepResult, threshold float64) string {
	switch {
	case s.Verdict != "":
		return s.Verdict
	case s.GeneratorSaturated:
		return messages.VerdictInconclusive
	case s.Ratio < thresholdOrDefault(threshold):
		return messages.VerdictBelow
	}
	return messages.VerdictHeld
}

// isInconclusive reports whether s cannot be quoted as evidence.
func isInconclusive(s *messages.StepResult) bool {
	return stepVerdict(s, DefaultThreshold) == messages.VerdictInconclusive
}

// stepReasons are s.Reasons. A saturated result that predates verdicts gets
// one generator_saturated reason (package verdict counts a lag of unknown
// cause as saturation) from the health figures such results carry.
func stepReasons(s *messages.StepResult) []messages.Reason {
	if s.Verdict != "" || len(s.Reasons) > 0 || !s.GeneratorSaturated {
		return s.Reasons
	}
	code := messages.ReasonGeneratorSaturated
	return []messages.Reason{{Code: code, Remedy: verdict.Remedy(code),
		Detail: fmt.Sprintf("%s fell behind its schedule (schedule lag P99 up to %s ms, producer CPU up to %.2f cores)",
			saturatedOn(s), ms(s.Health.LagP99Max), s.Health.CPUMax)}}
}

// saturatedOn names the producers that fell behind.
func saturatedOn(s *messages.StepResult) string {
	names := s.Health.SaturatedProducers
	if len(names) == 0 {
		for _, p := range s.PerProducer {
			if p.Saturated {
				names = append(names, p.Producer)
			}
		}
	}
	if len(names) == 0 {
		return "a producer"
	}
	return strings.Join(names, ", ")
}

// reasonText is "code: detail (remedy: …)", the remedy being the reason's own.
func reasonText(rs messages.Reason) string {
	text := rs.Code
	if rs.Detail != "" {
		text += ": " + rs.Detail
	}
	if rs.Remedy != "" {
		text += " (remedy: " + rs.Remedy + ")"
	}
	return text
}

// reasonCodes lists the distinct codes of the reasons of steps, in order.
func reasonCodes(steps []*messages.StepResult) []string {
	var codes []string
	for _, s := range steps {
		for _, rs := range stepReasons(s) {
			if !slices.Contains(codes, rs.Code) {
				codes = append(codes, rs.Code)
			}
		}
	}
	return codes
}

// runVerdict is r.Verdict; a report that predates verdicts gets one from its
// knee and steps ("" when it has no step).
func runVerdict(r messages.RunReport) string {
	switch {
	case r.Verdict != "":
		return r.Verdict
	case len(r.Steps) == 0:
		return ""
	case r.Knee != nil:
		return messages.RunKnee
	case len(inconclusiveSteps(r.Steps)) == len(r.Steps):
		return messages.RunInconclusive
	}
	return messages.RunNoKnee
}

// inconclusiveSteps lists the step numbers of the inconclusive steps.
func inconclusiveSteps(steps []messages.StepResult) []int {
	var out []int
	for i := range steps {
		if isInconclusive(&steps[i]) {
			out = append(out, steps[i].Step)
		}
	}
	return out
}

// Percentile names, as in PhaseResult.Above, TooFew and Disagree.
const (
	nameP50  = "p50"
	nameP90  = "p90"
	nameP99  = "p99"
	nameP999 = "p999"
)

// listed reports whether names holds name ("p99.9" is taken for "p999").
func listed(names []string, name string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.ReplaceAll(n, ".", "") == name })
}

// pctText formats percentile name of p, whose value is v: "> 412 (3% never
// sent)" when it is only a lower bound (listed in p.Above), "none served"
// when no command of the phase was, "too few" when the sample cannot
// resolve its rank (listed in p.Unresolved), else ms(v).
func pctText(p messages.PhaseResult, name string, v float64) string {
	switch {
	case listed(p.Above, name) && p.Count == 0:
		return "none served (" + share(p.NeverSent) + " never sent)"
	case listed(p.Above, name):
		return "> " + ms(v) + " (" + share(p.NeverSent) + " never sent)"
	case listed(p.Unresolved, name):
		return unresolvedText
	}
	return ms(v)
}

// unresolvedText is a percentile whose rank the sample cannot resolve.
const unresolvedText = "too few"

// ciText formats the interval of percentile name of p: "low..high", or,
// when it has no upper bound, "≥ low (too few samples)" or "too few
// samples", or "(never sent above it)" when the bound is open because its
// rank falls among commands never sent.
func ciText(p messages.PhaseResult, name string, iv messages.Interval) string {
	why := "too few samples"
	if !listed(p.TooFew, name) && p.NeverSent > 0 {
		why = "never sent above it"
	}
	switch open := iv.Open() || listed(p.TooFew, name); {
	case open && iv[0] > 0:
		return "≥ " + ms(iv[0]) + " (" + why + ")"
	case open:
		return why
	case iv == messages.Interval{}:
		return "-"
	}
	return ms(iv[0]) + ".." + ms(iv[1])
}

// share formats a share as a percentage, with one decimal under 1%.
func share(v float64) string {
	switch {
	case v > 0 && v < 0.001:
		return "< 0.1%"
	case v > 0 && v < 0.01:
		return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
	}
	return percent(v)
}
