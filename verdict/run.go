package verdict

import (
	"fmt"

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
)

// topErrorKinds is how many error kinds a failing run lists.
const topErrorKinds = 5

// Conclude sets r's Verdict, Reasons and TopErrors from its stamped Steps,
// its Knee and LastHeld: a knee found wins; otherwise, among the steps above
// the last held rate, the first failing step makes the run failing and the
// first other inconclusive step makes it inconclusive; a run with neither has
// no knee. An inconclusive step at or under a rate that held (a step re-issued
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
