package reporter

import (
	"fmt"
	"math"
	"strings"

	"github.com/imapload/imapload/messages"
)

// The golden reports are made by hand, verdicts and all, so that the
// renderers are tested apart from Build and package verdict. Their
// findings are findings' own.

// Remedies as package verdict words them, by hand.
const (
	remedyHost    = "the producers' host is busy with other work or their CPU quota is too small: run them where CPU is idle (stop the other work, fewer per host) or raise the quota, then rerun; more producers on the same host will not help"
	remedyFailing = "the server is not answering correctly: check the address and port, --tls and --tls-ca, and the accounts' user names and passwords"
	remedyStalled = "a producer could not run at all (stopped, frozen, a paused VM or container, swapping): find what stopped it, then rerun"
	remedyRate    = "the producers' shares did not add up to the target (a producer left, or a stale registry entry): rerun; imapload ramp re-issues a step with the producers that answered"
)

// handReport makes a report of steps (in step order) with knee and the
// inconclusive steps; the caller sets the run's verdict and the rest.
func handReport(run string, steps []messages.StepResult, knee *messages.Knee) messages.RunReport {
	for i := range steps {
		steps[i].Run = run
	}
	return messages.RunReport{Kind: messages.KindRunReport, Run: run, Threshold: DefaultThreshold,
		Knee: knee, Invalid: orEmpty(inconclusiveSteps(steps)),
		Findings: orEmpty(findings(steps, knee, DefaultThreshold)), Steps: steps, Generated: fixedNow}
}

// judge sets a step's verdict and reasons by hand.
func judge(s messages.StepResult, v string, reasons ...messages.Reason) messages.StepResult {
	s.Verdict, s.Reasons = v, reasons
	return s
}

// simpleStep is a step with fetch and login phases and the given verdict.
func simpleStep(step int, target, delivered float64, v string, reasons ...messages.Reason) messages.StepResult {
	s := stepResult(step, target, delivered)
	s.OfferedRate = target
	n := uint64(delivered * 30)
	s.Phases = map[string]messages.PhaseResult{
		"login": phaseResult(n/10, 0, 0.3, 4),
		"fetch": phaseResult(n*9/10, 0, 1.1, 9*float64(step)),
	}
	return judge(s, v, reasons...)
}

// oldReport is the golden ramp as a report made before verdicts: no step
// verdict, no run verdict, step 3 saturated, the knee at step 4.
func oldReport() messages.RunReport {
	steps := latestPerStep(goldenSteps())
	knee := &messages.Knee{Step: 4, Rate: 2000, DeliveredRate: 1560, Ratio: 0.78, Threshold: DefaultThreshold}
	r := handReport("golden", steps, knee)
	r.LastHeld = &messages.StepRef{Step: 2, Rate: 1000, DeliveredRate: 996.5, Ratio: 0.997}
	return r
}

// hostReport stops at step 3, inconclusive because p2's host was busy.
func hostReport() messages.RunReport {
	reason := messages.Reason{Code: messages.ReasonHostOverloaded, Remedy: remedyHost,
		Detail: "fell behind its schedule: p2 lag P99 85.5 ms at 0.40 of 2 cores, waited for a CPU 35% of the time"}
	bad := simpleStep(3, 1500, 1230, messages.VerdictInconclusive, reason)
	bad.GeneratorSaturated = true
	bad.PerProducer[1] = messages.ProducerBreakdown{Producer: "p2", Count: 12000, Share: 0.33, P99: 30, Saturated: true,
		LagP99: 85.5, CPU: 0.4, CPULimit: 2, RunDelay: 0.35, LagCause: messages.ReasonHostOverloaded}
	steps := []messages.StepResult{
		simpleStep(1, 500, 499, messages.VerdictHeld), simpleStep(2, 1000, 995, messages.VerdictHeld), bad,
	}
	r := handReport("host", steps, nil)
	r.LastHeld = &messages.StepRef{Step: 2, Rate: 1000, DeliveredRate: 995, Ratio: 0.995}
	r.Verdict = messages.RunInconclusive
	reason.Detail = "step 3 at 1500/s: " + reason.Detail
	r.Reasons = []messages.Reason{reason}
	return r
}

// failingReport is a run whose logins were refused from the first step.
func failingReport() messages.RunReport {
	errs := []messages.ErrorGroup{
		{Phase: "login", Kind: "NO [AUTHENTICATIONFAILED]", Count: 2850, Example: "a3 NO [AUTHENTICATIONFAILED] Authentication failed.", Producers: 3},
		{Phase: "dial", Kind: "dial: connection refused", Count: 12, Example: "dial tcp 127.0.0.1:1143: connect: connection refused", Producers: 1},
	}
	reason := messages.Reason{Code: messages.ReasonFailing, Remedy: remedyFailing,
		Detail: "2850 of 3000 login attempts failed (95%); most often login: NO [AUTHENTICATIONFAILED] (2850)"}
	s := simpleStep(1, 100, 5, messages.VerdictInconclusive, reason)
	s.Errors = errs
	setFailed(&s, map[string]uint64{"login": 2850})
	r := handReport("failing", []messages.StepResult{s}, nil)
	r.Verdict, r.TopErrors = messages.RunFailing, errs
	reason.Detail = "step 1 at 100/s: " + reason.Detail
	r.Reasons = []messages.Reason{reason}
	return r
}

// rangeReport has a knee between 1000 and 2000/s: steps 2 and 3, between
// the last held step and the knee, were inconclusive. Two thresholds.
func rangeReport() messages.RunReport {
	stalled := messages.Reason{Code: messages.ReasonGeneratorStalled, Remedy: remedyStalled,
		Detail: "fell behind its schedule: p1 lag P99 2100.0 ms at 0.01 of 2 cores, stopped and continued (SIGSTOP/SIGCONT)"}
	mismatch := messages.Reason{Code: messages.ReasonRateMismatch, Remedy: remedyRate,
		Detail: "the 3 producer(s) offered 1000.0/s in all against a target of 1500.0/s (-33%)"}
	steps := []messages.StepResult{
		simpleStep(1, 500, 499, messages.VerdictHeld),
		simpleStep(2, 1000, 700, messages.VerdictInconclusive, stalled),
		simpleStep(3, 1500, 990, messages.VerdictInconclusive, mismatch),
		simpleStep(4, 2000, 1400, messages.VerdictBelow),
	}
	knee := &messages.Knee{Step: 4, Rate: 2000, DeliveredRate: 1400, Ratio: 0.7, Threshold: DefaultThreshold, Low: 1000, Uncertain: []int{2, 3}}
	r := handReport("range", steps, knee)
	r.LastHeld = &messages.StepRef{Step: 1, Rate: 500, DeliveredRate: 499, Ratio: 0.998}
	r.Verdict = messages.RunKnee
	r.Thresholds = []messages.ThresholdCheck{
		{Name: "expect-knee-above 1500/s", Detail: "the highest rate that held is 500/s"},
		{Name: "max-p99 fetch=50ms", Pass: true, Detail: "within it on 1 held step(s)"},
	}
	return r
}

// openReport has figures without an upper bound: too few samples for a
// P99 interval at step 1, and P99s among commands never sent at step 2.
func openReport() messages.RunReport {
	s1, s2 := simpleStep(1, 10, 10, messages.VerdictHeld), simpleStep(2, 20, 19.5, messages.VerdictHeld)
	s1.Phases["fetch"] = tooFew(s1.Phases["fetch"], 3.1)
	s1.Phases["login"] = tooFew(s1.Phases["login"], 0)
	s2.Phases["fetch"] = above(s2.Phases["fetch"], 0.03, "p99", "p999")
	s2.Phases["login"] = above(s2.Phases["login"], 0.004, "p999")
	r := handReport("open", []messages.StepResult{s1, s2}, nil)
	r.LastHeld = &messages.StepRef{Step: 2, Rate: 20, DeliveredRate: 19.5, Ratio: 0.975}
	r.Verdict = messages.RunNoKnee
	return r
}

// tooFew opens p's P99 and P99.9 intervals above low.
func tooFew(p messages.PhaseResult, low float64) messages.PhaseResult {
	p.CI.P99, p.CI.P999 = messages.Interval{low, math.Inf(1)}, messages.Interval{low, math.Inf(1)}
	p.TooFew = []string{"p99", "p999"}
	return p
}

// above makes the named percentiles lower bounds, neverSent of the
// commands never sent.
func above(p messages.PhaseResult, neverSent float64, names ...string) messages.PhaseResult {
	p.NeverSent, p.Above = neverSent, names
	p.Dropped = uint64(neverSent * float64(p.Count) / (1 - neverSent))
	return p
}

// emptyReport is the report of a run without results.
func emptyReport() messages.RunReport {
	r := handReport("empty", []messages.StepResult{}, nil)
	r.Verdict = messages.RunInconclusive
	r.Reasons = []messages.Reason{{Code: messages.ReasonNoResult, Detail: "no step result arrived",
		Remedy: "start an aggregator (imapload aggregator) on the same NATS and check its log"}}
	return r
}

// busyDemoReport is a demo on a busy two-core machine, as it printed: eight
// phases of short steps (too few samples for a P99 interval), scripts'
// sessions per second, integrity checks, and step 2 inconclusive because the
// three producers' host was busy, each named with its figures.
func busyDemoReport() messages.RunReport {
	s1 := demoStep(1, 200, 199.5)
	s2 := demoStep(2, 400, 392)
	var details []string
	for i, lag := range []float64{33.7, 34.7, 35.4} {
		details = append(details, fmt.Sprintf("demo-p%d lag P99 %.1f ms at 0.15 of 2 cores, waited for a CPU 48%% of the time, host CPU pressure 74%%", i+1, lag))
	}
	reason := messages.Reason{Code: messages.ReasonHostOverloaded, Remedy: remedyHost,
		Detail: "fell behind its schedule: " + strings.Join(details, "; ")}
	s2 = judge(s2, messages.VerdictInconclusive, reason)
	r := handReport("demo-20261207-163708", []messages.StepResult{s1, s2}, nil)
	r.LastHeld = &messages.StepRef{Step: 1, Rate: 200, DeliveredRate: 199.5, Ratio: 0.998}
	r.Verdict = messages.RunInconclusive
	reason.Detail = "step 2 at 400/s: " + reason.Detail
	r.Reasons = []messages.Reason{reason}
	return r
}

// demoStep is a held step of the demo's session: every phase, each with too
// few samples for its P99 interval.
func demoStep(step int, target, delivered float64) messages.StepResult {
	s := stepResult(step, target, delivered)
	s.Run, s.OfferedRate, s.SessionRate, s.TargetSessionRate = "demo", target, delivered/12.5, target/12.5
	s.Checks = messages.Checks{Run: 2}
	s.Phases = map[string]messages.PhaseResult{}
	for i, name := range []string{"dial", "login", "list", "select", "fetch", "store", "append", "logout"} {
		n := uint64(delivered * 4 / 8)
		p := phaseResult(n, 0, 0.3+float64(i), 0.9+5*float64(i))
		s.Phases[name] = tooFew(p, 0.8*p.P99)
	}
	return judge(s, messages.VerdictHeld)
}
