package main

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

// checkPhysics holds whatever the machine's load: no step delivered more
// than the server's capacity, every step offered beyond what the capacity
// can deliver at the threshold fell below it, and the report's knee and
// invalid steps follow from the step results.
func checkPhysics(t *testing.T, r messages.RunReport, capacity float64) {
	t.Helper()
	for _, st := range r.Steps {
		if st.DeliveredRate > capacity*1.05 {
			t.Errorf("step %d delivered %.0f/s, more than the capacity %v/s", st.Step, st.DeliveredRate, capacity)
		}
		if st.TargetRate*r.Threshold > capacity && st.Ratio >= r.Threshold {
			t.Errorf("step %d held %v/s (ratio %.2f), beyond the capacity %v/s", st.Step, st.TargetRate, st.Ratio, capacity)
		}
	}
	checkReportKnee(t, r)
}

// checkReportKnee: the report's invalid steps are the inconclusive ones and
// its knee is the first valid step below the threshold, in rate order (the
// demo's rates rise).
func checkReportKnee(t *testing.T, r messages.RunReport) {
	t.Helper()
	var invalid []int
	var knee *messages.StepResult
	for i, st := range r.Steps {
		if st.Verdict == messages.VerdictInconclusive {
			invalid = append(invalid, st.Step)
		} else if knee == nil && st.Ratio < r.Threshold {
			knee = &r.Steps[i]
		}
	}
	if len(invalid)+len(r.Invalid) > 0 && !slices.Equal(r.Invalid, invalid) {
		t.Errorf("report invalid steps = %v, want the inconclusive steps %v", r.Invalid, invalid)
	}
	if (knee == nil) != (r.Knee == nil) || knee != nil && r.Knee.Step != knee.Step {
		t.Errorf("report knee = %+v, want the first valid step below %.2f: %s", r.Knee, r.Threshold, stepRatios(r))
	}
}

// judgement is how much of a demo's measurements a test judges.
type judgement int

const (
	// judgePlumbing judges output, files and the physics of the results.
	judgePlumbing judgement = iota
	// judgeKnee adds the verdict: a knee within one step of the capacity, or
	// inconclusive for the generators' reasons; never a wrong knee. It is
	// what a host made busy on purpose must still get right. Whether login
	// is bimodal and whether the slow accounts make the pooled tail are
	// latency shapes a busy host's queueing can blur (CPU hogs slowed the
	// bcrypt misses and the cache hits alike, so login read as one mode),
	// so they are not judged there.
	judgeKnee
	// judgeAll adds the latency findings: the bimodal login and the slow
	// backend's tail (the quiet, race-free run).
	judgeAll
)

// checkFindings judges the demo's findings against the embedded server's
// knobs, whatever the machine's load. A run that could not measure the
// server (its producers fell behind on a busy machine) must say so, name why
// and offer no knee: that is a right answer, not a skip. A run that found a
// knee must find it within one step of the capacity, and its valid steps
// must show the bimodal login and the slow backend.
func checkFindings(t *testing.T, r messages.RunReport, capacity float64, judge judgement) {
	t.Helper()
	switch r.Verdict {
	case messages.RunInconclusive:
		checkCouldNotMeasure(t, r)
		return
	case messages.RunKnee:
		checkKnee(t.Errorf, r, capacity)
	default:
		t.Errorf("demo verdict %q, want a knee or inconclusive; steps %s", r.Verdict, stepRatios(r))
		return
	}
	if judge < judgeAll {
		if !t.Failed() {
			t.Logf("demo knee judged and held: knee at %.0f/s within one step of the capacity %.0f/s (latency findings not judged on a host made busy)", r.Knee.Rate, capacity)
		}
		return
	}
	checkSlowBackend(t.Errorf, t.Logf, r)
	checkBimodalLogin(t.Errorf, r)
	if !t.Failed() {
		t.Logf("demo findings judged and held: knee at %.0f/s within one step of the capacity %.0f/s, bimodal login, the slow backend's tail in the pooled P99", r.Knee.Rate, capacity)
	}
}

// checkCouldNotMeasure: an inconclusive demo blames its generators or their
// host (never the server, which answers), and claims no knee.
func checkCouldNotMeasure(t *testing.T, r messages.RunReport) {
	t.Helper()
	if r.Knee != nil {
		t.Errorf("inconclusive demo reports a knee %+v", r.Knee)
	}
	if len(r.Reasons) == 0 {
		t.Errorf("inconclusive demo gives no reason")
	}
	for _, x := range r.Reasons {
		switch x.Code {
		case messages.ReasonGeneratorSaturated, messages.ReasonHostOverloaded, messages.ReasonGeneratorStalled:
		default:
			t.Errorf("inconclusive demo blames %s (%s), want a generator or host cause", x.Code, x.Detail)
		}
		if x.Remedy == "" {
			t.Errorf("reason %s has no remedy", x.Code)
		}
	}
	t.Logf("the demo could not measure the server and said so: %v", r.Reasons)
}

// checkKnee: the knee is one of the two ramp steps around the capacity (the
// last below it or the first above it) and the last step that held offered
// no more than the capacity.
func checkKnee(judge func(string, ...any), r messages.RunReport, capacity float64) {
	if r.Knee == nil {
		judge("report has no knee; steps %s", stepRatios(r))
		return
	}
	below, above := 0.0, 0.0
	for _, rate := range demoRates {
		if rate <= capacity {
			below = rate
		} else if above == 0 {
			above = rate
		}
	}
	if r.Knee.Rate != below && r.Knee.Rate != above {
		judge("knee at %v/s, want %v or %v/s (one step of capacity %v/s); steps %s", r.Knee.Rate, below, above, capacity, stepRatios(r))
	}
	if r.LastHeld != nil && r.LastHeld.Rate > capacity {
		judge("last held step offered %v/s, above capacity %v/s", r.LastHeld.Rate, capacity)
	}
}

// checkBimodalLogin: bcrypt misses and cache hits make login bimodal.
func checkBimodalLogin(judge func(string, ...any), r messages.RunReport) {
	for _, st := range r.Steps {
		if b := st.Phases["login"].Bimodal; b != nil && b.HighMode > b.LowMode && st.Verdict != messages.VerdictInconclusive {
			return
		}
	}
	judge("login is bimodal in no step; login P50/P99 by step: %s", phaseSpread(r, "login"))
}

// mailboxPhases are the phases a slow account pays its extra delay on.
var mailboxPhases = []string{"list", "select", "fetch", "store", "append"}

// checkSlowBackend: in a step that held, a mailbox phase's pooled P99 is
// beyond the slow delay while its median is not (the slow accounts make the
// tail). Whether averaging the per-producer P99s would understate the pooled
// one depends on how the few slow accounts fell among the producers in that
// run (the result quantifies it only when their P99s differ twofold), so it
// is logged, not judged.
func checkSlowBackend(judge func(string, ...any), logf func(string, ...any), r messages.RunReport) {
	tail, fallacy := false, false
	for _, st := range r.Steps {
		held := st.Verdict == messages.VerdictHeld
		for _, ph := range mailboxPhases {
			p := st.Phases[ph]
			tail = tail || held && p.P99 >= ms(demoSlowDelay) && p.P50 < ms(demoSlowDelay)
			fallacy = fallacy || held && st.AverageP99Fallacy[ph] < 0
		}
	}
	if !tail {
		judge("no held step has a mailbox P99 ≥ the slow delay %v over a median below it; select P50/P99: %s", demoSlowDelay, phaseSpread(r, "select"))
	}
	logf("averaging per-producer P99s would understate a mailbox phase's pooled P99 in a held step: %v", fallacy)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func stepRatios(r messages.RunReport) string {
	var b bytes.Buffer
	for _, st := range r.Steps {
		fmt.Fprintf(&b, "[%d: %v/s → %.0f/s, %s %v] ", st.Step, st.TargetRate, st.DeliveredRate, st.Verdict, st.Reasons)
	}
	return b.String()
}

func phaseSpread(r messages.RunReport, phase string) string {
	var b bytes.Buffer
	for _, st := range r.Steps {
		p := st.Phases[phase]
		fmt.Fprintf(&b, "[%d: %.1f/%.1f ms] ", st.Step, p.P50, p.P99)
	}
	return b.String()
}
