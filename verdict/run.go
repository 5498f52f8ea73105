package verdict

import (
	"fmt"
	"strconv"

	"github.com/imapload/imapload/messages"
)

// Exit codes of ramp, step and demo: what the run concluded.
const (
	ExitOK           = 0 // a verdict was reached (a knee, or no knee up to the last step) and every threshold passed
	ExitError        = 1 // the run could not be carried out (NATS unreachable, no producer, an I/O error)
	ExitUsage        = 2 // impossible flags or arguments: nothing was sent
	ExitFailing      = 3 // the server is not answering correctly: most commands failed
	ExitInconclusive = 4 // the run stopped at a step that could not be measured, before any knee
	ExitThreshold    = 5 // a verdict was reached but a threshold (--expect-knee-above, --max-p99, --max-error-rate) failed
	ExitNoneHeld     = 6 // every valid step fell below, down to the lowest rate offered (--min): no rate the server sustains was found
)

// topErrorKinds is how many error kinds a failing run lists.
const topErrorKinds = 5

// Conclude sets r's Verdict, Reasons and TopErrors from its stamped Steps,
// its Knee and LastHeld: a knee found wins; otherwise, among the steps above
// the last held rate, the first failing step makes the run failing and the
// first other inconclusive step makes it inconclusive; a run with neither
// whose valid steps all fell below held nothing (RunNoneHeld, with the
// lowest of them); one with none below has no knee. An inconclusive step at or under a rate that held (a step re-issued
// with the right producer count, a passing hiccup) did not stop the run.
func Conclude(r *messages.RunReport) {
	r.Reasons, r.TopErrors = nil, nil
	open := unsettled(r)
	switch {
	case r.Knee != nil:
		r.Verdict = messages.RunKnee
	case firstWith(open, messages.ReasonFailing) != nil:
		s := firstWith(open, messages.ReasonFailing)
		r.Verdict = messages.RunFailing
		r.Reasons = stepReasons(s)
		r.TopErrors = TopErrors(s.Errors, topErrorKinds)
	case firstWith(open, "") != nil:
		r.Verdict = messages.RunInconclusive
		r.Reasons = stepReasons(firstWith(open, ""))
	case r.LastHeld == nil && lowestBelow(r.Steps) != nil:
		r.Verdict = messages.RunNoneHeld
		r.Reasons = []messages.Reason{noneHeld(lowestBelow(r.Steps))}
		r.TopErrors = TopErrors(lowestBelow(r.Steps).Errors, topErrorKinds)
	case len(r.Steps) > 0:
		r.Verdict = messages.RunNoKnee
	default:
		r.Verdict = messages.RunInconclusive
		r.Reasons = []messages.Reason{{Code: messages.ReasonNoResult, Detail: "no step result arrived", Remedy: Remedy(messages.ReasonNoResult)}}
	}
}

// firstWith is the first inconclusive step (in step order) with a reason of
// code, or with any reason when code is "".
func firstWith(steps []messages.StepResult, code string) *messages.StepResult {
	for i := range steps {
		s := &steps[i]
		if s.Verdict == messages.VerdictInconclusive && (code == "" || Has(*s, code)) {
			return s
		}
	}
	return nil
}

// stepReasons are s's reasons, each saying which step it is about.
func stepReasons(s *messages.StepResult) []messages.Reason {
	out := make([]messages.Reason, len(s.Reasons))
	for i, x := range s.Reasons {
		x.Detail = fmt.Sprintf("step %d at %.0f/s: %s", s.Step, s.TargetRate, x.Detail)
		out[i] = x
	}
	return out
}

// ExitCode is the exit code a finished run's report calls for.
func ExitCode(r messages.RunReport) int {
	switch r.Verdict {
	case messages.RunFailing:
		return ExitFailing
	case messages.RunInconclusive:
		return ExitInconclusive
	case messages.RunNoneHeld:
		return ExitNoneHeld
	}
	for _, t := range r.Thresholds {
		if !t.Pass {
			return ExitThreshold
		}
	}
	return ExitOK
}

// unsettled are the steps above the last held rate: an inconclusive step at
// or under a rate that held (a retried step, a passing hiccup) did not stop
// the run.
func unsettled(r *messages.RunReport) []messages.StepResult {
	if r.LastHeld == nil {
		return r.Steps
	}
	var out []messages.StepResult
	for _, s := range r.Steps {
		if s.TargetRate > r.LastHeld.Rate {
			out = append(out, s)
		}
	}
	return out
}

// lowestBelow is the valid step below with the lowest rate (the earliest on
// a tie), nil when none is below.
func lowestBelow(steps []messages.StepResult) *messages.StepResult {
	var low *messages.StepResult
	for i := range steps {
		s := &steps[i]
		if s.Verdict == messages.VerdictBelow && (low == nil || s.TargetRate < low.TargetRate) {
			low = s
		}
	}
	return low
}

// noneHeld is the reason of a run that held nothing, down to low.
func noneHeld(low *messages.StepResult) messages.Reason {
	return messages.Reason{Code: messages.ReasonNoneHeld,
		Detail: fmt.Sprintf("no step held: every valid step fell below its target, down to step %d at %s/s offered (%s/s delivered, ratio %.2f)",
			low.Step, rateText(low.TargetRate), rateText(low.DeliveredRate), low.Ratio) + belowOn(low),
		Remedy: Remedy(messages.ReasonNoneHeld)}
}

// rateText is a rate in a reason: whole numbers from 100/s, three
// significant digits under.
func rateText(r float64) string {
	if r >= 100 {
		return fmt.Sprintf("%.0f", r)
	}
	return strconv.FormatFloat(r, 'g', 3, 64)
}
