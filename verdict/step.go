package verdict

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/imapload/imapload/messages"
)

// DefaultThreshold is the delivered/target ratio under which a step is below:
// the server delivered less than 90% of what was offered.
const DefaultThreshold = 0.9

// Bounds of the step rules.
const (
	// RateTolerance is how far (relative) the fleet's offered rate may be from
	// the target before the step is a rate_mismatch.
	RateTolerance = 0.02
	// FailingShare is the share of failed commands above which a step is failing.
	FailingShare = 0.5
	// cpuBound is the share of its CPU limit at which a producer is CPU-bound.
	cpuBound = 0.8
	// throttledShare, runDelayShare and pressureShare are the shares of wall
	// time above which a lagging producer's host is called busy.
	throttledShare = 0.05
	runDelayShare  = 0.05
	pressureShare  = 0.10
)

// Threshold maps anything but a number in (0, 1] to DefaultThreshold.
func Threshold(t float64) float64 {
	if !(t > 0) || t > 1 {
		return DefaultThreshold
	}
	return t
}

// Stamp sets r's Reasons (from its own figures), its Verdict at threshold
// and, when below, what it fell below on (Below). A step that delivered its
// target held whatever its generators' health: their lag does not void it
// but becomes a caveat on its latencies (Caveats), which carry that lag.
func Stamp(r *messages.StepResult, threshold float64) {
	r.Reasons = Reasons(*r)
	r.Caveats = slices.DeleteFunc(r.Caveats, func(c messages.Reason) bool { return slices.Contains(lagCodes, c.Code) })
	if Below(*r, threshold) == "" {
		r.Reasons = slices.DeleteFunc(r.Reasons, func(x messages.Reason) bool {
			if !slices.Contains(lagCodes, x.Code) {
				return false
			}
			x.Detail = "the step delivered its target, so it held, but its latencies carry the generator's lag: " + x.Detail
			r.Caveats = append(r.Caveats, x)
			return true
		})
	}
	r.Verdict = Of(*r, threshold)
	r.Below = ""
	if r.Verdict == messages.VerdictBelow {
		r.Below = Below(*r, threshold)
	}
}

// Of is the verdict of a step whose Reasons are set: inconclusive when it
// has any but a generator's lag; else held when its ratio, its held
// connections and its new connections reach the threshold (see Below), a
// lagging generator notwithstanding (the server delivered the target);
// else inconclusive when a generator lagged (the shortfall may be the
// generator's), else below.
func Of(r messages.StepResult, threshold float64) string {
	below := Below(r, threshold) != ""
	switch {
	case slices.ContainsFunc(r.Reasons, func(x messages.Reason) bool { return !slices.Contains(lagCodes, x.Code) }):
		return messages.VerdictInconclusive
	case !below:
		return messages.VerdictHeld
	case len(r.Reasons) > 0 || slices.ContainsFunc(r.Caveats, func(x messages.Reason) bool { return slices.Contains(lagCodes, x.Code) }):
		return messages.VerdictInconclusive
	default:
		return messages.VerdictBelow
	}
}

// Valid reports whether a stamped step measured the server.
func Valid(r messages.StepResult) bool { return r.Verdict != messages.VerdictInconclusive }

// Has reports whether r has a reason with code.
func Has(r messages.StepResult, code string) bool {
	return slices.ContainsFunc(r.Reasons, func(x messages.Reason) bool { return x.Code == code })
}

// Reasons lists why r did not measure the server as asked, from its figures,
// in a fixed order: failing first (it explains the rest), then the fleet's
// shape, then the generators' lag.
func Reasons(r messages.StepResult) []messages.Reason {
	var out []messages.Reason
	add := func(code, detail string) {
		out = append(out, messages.Reason{Code: code, Detail: detail, Remedy: Remedy(code)})
	}
	ucode, ud := unserved(r)
	fd := failing(r)
	if ucode == messages.ReasonFailing {
		fd = ud // it names the set-up stage that kept the commands from the server
	}
	if fd == "" {
		fd = refused(r)
	}
	if fd != "" {
		add(messages.ReasonFailing, fd)
	}
	if ucode == messages.ReasonSetupUnanswered || ucode == messages.ReasonUnserved && fd == "" {
		add(ucode, ud)
	}
	if d := incomplete(r); d != "" {
		add(messages.ReasonIncomplete, d)
	}
	if d := sharedID(r); d != "" {
		add(messages.ReasonSharedID, d) // the cause of the shares not adding up: never also a rate_mismatch
	} else if d := rateMismatch(r); d != "" {
		add(messages.ReasonRateMismatch, d)
	}
	if d := unaddressable(r); d != "" {
		add(messages.ReasonUnaddressable, d)
	}
	for _, code := range lagCodes {
		if d := lagged(r, code); d != "" {
			add(code, d)
			if local := localProducers(r); len(local) > 0 && code != messages.ReasonGeneratorStalled {
				x := &out[len(out)-1]
				x.Detail += fmt.Sprintf("; the server under test runs on the same host as %s (its address is theirs): the two compete for its CPUs", strings.Join(local, ", "))
				x.Remedy = localRemedy
			}
		}
	}
	return out
}

// Failed counts r's failed commands the server caused (every phase, errors
// imapload caused itself left out) and the commands sent to it.
func Failed(r messages.StepResult) (failed, attempted uint64) {
	for _, p := range r.Phases {
		attempted += p.Attempted
		failed += p.Attempted - min(p.Succeeded, p.Attempted)
	}
	for _, e := range r.Errors {
		if strings.HasPrefix(e.Kind, messages.GeneratorKind) {
			failed -= min(e.Count, failed)
			attempted -= min(e.Count, attempted)
		}
	}
	return failed, attempted
}

// setupPhases are the phases a session passes before it can send anything:
// when most of one fails, nothing else is sent, and the dials that succeeded
// before each refused LOGIN hold the pooled share at one half.
var setupPhases = []string{"dial", "login"}

func failing(r messages.StepResult) string {
	if c := r.Connections; c != nil && c.Held > 0 {
		// The server logged held connections in and kept them: it answers
		// correctly, and what it refused is load (see Below).
		return ""
	}
	failed, attempted := Failed(r)
	what := "commands sent to the server"
	if !most(failed, attempted) {
		what = ""
		for _, ph := range setupPhases {
			if f, a := failedIn(r, ph); most(f, a) {
				failed, attempted, what = f, a, ph+" attempts"
				break
			}
		}
	}
	if what == "" {
		return ""
	}
	d := fmt.Sprintf("%d of %d %s failed (%.0f%%)", failed, attempted, what, 100*float64(failed)/float64(attempted))
	if top := TopErrors(r.Errors, 1); len(top) > 0 {
		d += fmt.Sprintf("; most often %s: %s (%d)", top[0].Phase, top[0].Kind, top[0].Count)
	}
	return d
}

// most reports whether failed is more than FailingShare of attempted.
func most(failed, attempted uint64) bool {
	return attempted > 0 && float64(failed) > FailingShare*float64(attempted)
}

// failedIn is Failed for one phase.
func failedIn(r messages.StepResult, phase string) (failed, attempted uint64) {
	p := r.Phases[phase]
	attempted, failed = p.Attempted, p.Attempted-min(p.Succeeded, p.Attempted)
	for _, e := range r.Errors {
		if e.Phase == phase && strings.HasPrefix(e.Kind, messages.GeneratorKind) {
			failed -= min(e.Count, failed)
			attempted -= min(e.Count, attempted)
		}
	}
	return failed, attempted
}

// unaddressable says how many scheduled commands had nothing to address,
// when they are more than RateTolerance of those scheduled: commands never
// sent leave the server offered less than the target, and would otherwise
// read as its shortfall.
func unaddressable(r messages.StepResult) string {
	var n uint64
	var top *messages.ErrorGroup
	for i, e := range r.Errors {
		if strings.HasPrefix(e.Kind, messages.UnaddressableKind) {
			n += e.Count
			if top == nil || e.Count > top.Count {
				top = &r.Errors[i]
			}
		}
	}
	if n == 0 || float64(n) <= RateTolerance*float64(r.Scheduled) {
		return ""
	}
	return fmt.Sprintf("%d of %d scheduled commands (%.0f%%) had nothing to address and were never sent, most often %s: %s (%d): the server was offered less than the target",
		n, r.Scheduled, 100*float64(n)/float64(max(r.Scheduled, 1)), top.Phase, strings.TrimPrefix(top.Kind, messages.UnaddressableKind), top.Count)
}

func incomplete(r messages.StepResult) string {
	var parts []string
	if len(r.Producers) == 0 {
		parts = append(parts, "no producer sent a batch")
	}
	if len(r.Missing) > 0 {
		parts = append(parts, fmt.Sprintf("no final batch from %s", strings.Join(r.Missing, ", ")))
	}
	if len(r.StoppedEarly) > 0 {
		parts = append(parts, fmt.Sprintf("stopped before the window ended: %s", strings.Join(r.StoppedEarly, ", ")))
	}
	return strings.Join(parts, "; ")
}

func rateMismatch(r messages.StepResult) string {
	if !(r.OfferedRate > 0) || !(r.TargetRate > 0) || math.Abs(r.OfferedRate-r.TargetRate) <= RateTolerance*r.TargetRate {
		return ""
	}
	return fmt.Sprintf("the %d producer(s) offered %.1f/s in all against a target of %.1f/s (%+.0f%%)",
		len(r.Producers), r.OfferedRate, r.TargetRate, 100*(r.OfferedRate/r.TargetRate-1))
}

// TopErrors returns the n most frequent error kinds the server caused.
func TopErrors(errs []messages.ErrorGroup, n int) []messages.ErrorGroup {
	var out []messages.ErrorGroup
	for _, e := range errs {
		if !strings.HasPrefix(e.Kind, messages.GeneratorKind) {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b messages.ErrorGroup) int {
		return -cmpUint(a.Count, b.Count)
	})
	return out[:max(0, min(n, len(out)))]
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sharedID says which producer ids ran in more than one process at once.
func sharedID(r messages.StepResult) string {
	var parts []string
	for _, id := range r.SharedIDs {
		parts = append(parts, fmt.Sprintf("producer id %s ran in %d processes at once (instances %s)", id.Producer, len(id.Instances), strings.Join(id.Instances, ", ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ": their batches collide, so the step's counts are not the fleet's"
}
