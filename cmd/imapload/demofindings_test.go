package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
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

// checkReportKnee: the report's invalid steps are the generator-saturated
// ones and its knee is the first valid step below the threshold.
func checkReportKnee(t *testing.T, r messages.RunReport) {
	t.Helper()
	var invalid []int
	var knee *messages.StepResult
	for i, st := range r.Steps {
		if st.GeneratorSaturated {
			invalid = append(invalid, st.Step)
		} else if knee == nil && st.Ratio < r.Threshold {
			knee = &r.Steps[i]
		}
	}
	if !slices.Equal(r.Invalid, invalid) {
		t.Errorf("report invalid steps = %v, want the generator-saturated steps %v", r.Invalid, invalid)
	}
	if (knee == nil) != (r.Knee == nil) || knee != nil && r.Knee.Step != knee.Step {
		t.Errorf("report knee = %+v, want the first valid step below %.2f: %s", r.Knee, r.Threshold, stepRatios(r))
	}
}

// checkFindings checks the acceptance findings and returns "" or why some
// that did not hold could not be judged. They measure the embedded server's
// knobs only when the machine had CPU to spare. On a loaded machine the
// producers miss their schedule (the report then rightly refuses those
// steps as a knee); and the login modes are the most fragile: CPU contention
// stretches a bcrypt miss from about 15 ms to over 150 ms, smearing the high
// mode, so the logins of a step are no longer found bimodal. A
// finding that does not hold on such a run is logged, and the caller skips
// the test at its end.
func checkFindings(t *testing.T, r messages.RunReport, capacity float64) string {
	t.Helper()
	why := unjudgeable(r)
	loginWhy := why
	if load, n := loadAverage(), runtime.NumCPU(); why == "" && load > float64(n) {
		loginWhy = fmt.Sprintf("the load average was %.1f on %d CPUs, too much to judge the login modes", load, n)
	}
	server, login := &judgement{t: t, why: why}, &judgement{t: t, why: loginWhy}
	checkKnee(server.fail, r, capacity)
	checkSlowBackend(server.fail, r)
	checkBimodalLogin(login.fail, r)
	switch {
	case server.missed:
		return why
	case login.missed:
		return loginWhy
	}
	return ""
}

// judgement reports a finding that does not hold: as an error, or, when why
// says the run could not measure it, as a note.
type judgement struct {
	t      *testing.T
	why    string
	missed bool // a finding did not hold on a run that could not be judged
}

func (v *judgement) fail(format string, args ...any) {
	v.t.Helper()
	if v.why == "" {
		v.t.Errorf(format, args...)
		return
	}
	v.missed = true
	v.t.Logf("not judged (%s): %s", v.why, fmt.Sprintf(format, args...))
}

// unjudgeable says why a run's findings do not measure the server, or "".
func unjudgeable(r messages.RunReport) string {
	if bad := saturatedUpToKnee(r); len(bad) > 0 {
		return fmt.Sprintf("the generators missed their schedule at steps %v", bad)
	}
	if load, n := loadAverage(), runtime.NumCPU(); load > 2*float64(n) {
		return fmt.Sprintf("the load average was %.1f on %d CPUs", load, n)
	}
	return ""
}

// loadAverage is the machine's 1-minute load average, 0 where unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// saturatedUpToKnee lists the generator-saturated steps up to and including
// the first step below the threshold (or all steps, if none fell below).
func saturatedUpToKnee(r messages.RunReport) []int {
	var bad []int
	for _, st := range r.Steps {
		if st.GeneratorSaturated {
			bad = append(bad, st.Step)
		}
		if st.Ratio < r.Threshold {
			break
		}
	}
	return bad
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
		if b := st.Phases["login"].Bimodal; b != nil && b.HighMode > b.LowMode {
			return
		}
	}
	judge("login is bimodal in no step; login P50/P99 by step: %s", phaseSpread(r, "login"))
}

// mailboxPhases are the phases a slow account pays its extra delay on.
var mailboxPhases = []string{"list", "select", "fetch", "store", "append"}

// checkSlowBackend: in a step that held, a mailbox phase's pooled P99 is
// beyond the slow delay while its median is not (the slow accounts make the
// tail); and in some step the average of the per-producer P99s of a mailbox
// phase is below the pooled P99.
func checkSlowBackend(judge func(string, ...any), r messages.RunReport) {
	tail, fallacy := false, false
	for _, st := range r.Steps {
		held := st.Ratio >= r.Threshold
		for _, ph := range mailboxPhases {
			p := st.Phases[ph]
			tail = tail || held && p.P99 >= ms(demoSlowDelay) && p.P50 < ms(demoSlowDelay)
			fallacy = fallacy || st.AverageP99Fallacy[ph] < 0
		}
	}
	if !tail {
		judge("no held step has a mailbox P99 ≥ the slow delay %v over a median below it; select P50/P99: %s", demoSlowDelay, phaseSpread(r, "select"))
	}
	if !fallacy {
		judge("no step has average_p99_fallacy < 0 for a mailbox phase")
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func stepRatios(r messages.RunReport) string {
	var b bytes.Buffer
	for _, st := range r.Steps {
		fmt.Fprintf(&b, "[%d: %v/s → %.0f/s, saturated %v] ", st.Step, st.TargetRate, st.DeliveredRate, st.GeneratorSaturated)
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
