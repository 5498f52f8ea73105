package reporter

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/imapload/imapload/messages"
)

// splitTolerance is how far the share of the completions of the producers
// put in the low population may be from the low mode's share for the split
// to count as separating the populations.
const splitTolerance = 0.05

// bimodalFindings names each bimodal phase once: where it was bimodal, then
// a description of its two populations at the first such step. The steps
// must be conclusive.
func bimodalFindings(steps []messages.StepResult) []string {
	var out []string
	for _, name := range allPhases(steps) {
		var at []int
		var first *messages.StepResult
		for i := range steps {
			if steps[i].Phases[name].Bimodal != nil {
				first = cmp.Or(first, &steps[i])
				at = append(at, steps[i].Step)
			}
		}
		if first != nil {
			out = append(out, bimodalSentence(name, first, at))
		}
	}
	return out
}

// bimodalSentence describes first (shares, modes, and who falls in each when
// the producers separate them), then offers an explanation for login, only
// as a possibility: the figures cannot tell a cache hit from a fast hash.
func bimodalSentence(phase string, first *messages.StepResult, at []int) string {
	b := first.Phases[phase].Bimodal
	where := stepsWord(at)
	if len(at) > 1 {
		where += fmt.Sprintf("; at step %d", at[0])
	}
	text := fmt.Sprintf("%s is bimodal at %s: two populations, %s of the commands around %s ms and %s around %s ms",
		phase, where, percent(b.LowShare), ms(b.LowMode), percent(b.HighShare), ms(b.HighMode))
	if low, high, ok := splitProducers(first.PerProducer, b); ok {
		text += fmt.Sprintf(" (the fast one from %s, the slow one from %s)", strings.Join(low, ", "), strings.Join(high, ", "))
	}
	text += " — its percentiles describe neither"
	if phase == messages.Login.String() {
		text += "; possibly cache hits and password-hash misses (e.g. bcrypt)"
	}
	return text
}

// splitProducers puts each producer in the low population when its P99 lies
// below the geometric middle of the modes (at least 99% of its commands are
// fast), else in the high one. The split separates the populations when both
// are non-empty and the low producers' share of the completions is within
// splitTolerance of the low mode's share; otherwise ok is false and nothing
// is said about who. A producer's P99 spans every phase, so a phase whose
// modes lie below the others' latencies never separates: that errs towards
// silence.
func splitProducers(ps []messages.ProducerBreakdown, b *messages.Bimodality) (low, high []string, ok bool) {
	middle := math.Sqrt(b.LowMode * b.HighMode)
	share := 0.0
	for _, p := range ps {
		if p.P99 < middle {
			low, share = append(low, p.Producer), share+p.Share
		} else {
			high = append(high, p.Producer)
		}
	}
	ok = len(low) > 0 && len(high) > 0 && math.Abs(share-b.LowShare) <= splitTolerance
	return low, high, ok
}
