package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/reporter"
)

// demoSetup is what the demo configured, to compare the findings with.
type demoSetup struct {
	capacity     float64 // commands/s
	bcryptCost   int
	slowFraction float64
	slowDelay    time.Duration
}

// demoFindings states, for the embedded server's three knobs, what the run
// found: where the knee fell against the capacity, the bimodal login, and what
// the slow backend did to the pooled P99 and to an average of per-producer P99s.
func demoFindings(r messages.RunReport, s demoSetup) []string {
	out := []string{capacityFinding(r, s)}
	out = append(out, loginFinding(r, s))
	return append(out, slowFinding(r, s))
}

// capacityFinding compares the run's verdict with the capacity knob; a run
// that could not measure says so and never offers a knee.
func capacityFinding(r messages.RunReport, s demoSetup) string {
	head := fmt.Sprintf("capacity: the server was set to %.0f commands/s", s.capacity)
	switch r.Verdict {
	case messages.RunKnee:
		held := "no step held"
		if r.LastHeld != nil {
			held = fmt.Sprintf("the last step that held offered %.0f/s", r.LastHeld.Rate)
		}
		return fmt.Sprintf("%s; the knee is %s (step %d, %.0f/s delivered) and %s",
			head, kneeRate(r.Knee), r.Knee.Step, r.Knee.DeliveredRate, held)
	case messages.RunNoKnee:
		return head + "; every step held, so no knee was found: raise --max or --max-steps"
	case messages.RunNoneHeld:
		return head + "; no step held, down to the lowest rate offered (--min): lower --min, or see the verdict above"
	}
	return fmt.Sprintf("%s; the run could not measure it (%s: %s; why and what to do: see the verdict above)", head, r.Verdict, codesOf(r.Reasons))
}

// codesOf lists the codes of rs, without their details and remedies,
// which the table above printed.
func codesOf(rs []messages.Reason) string {
	codes := make([]string, 0, len(rs))
	for _, x := range rs {
		if !slices.Contains(codes, x.Code) {
			codes = append(codes, x.Code)
		}
	}
	if len(codes) == 0 {
		return "no reason given"
	}
	return strings.Join(codes, ", ")
}

// kneeRate is the knee's rate, or its range when inconclusive steps lie
// below it.
func kneeRate(k *messages.Knee) string {
	if k.Low > 0 {
		return fmt.Sprintf("between %.0f/s and %.0f/s offered (steps %v in between were inconclusive)", k.Low, k.Rate, k.Uncertain)
	}
	return fmt.Sprintf("at %.0f/s offered", k.Rate)
}

// loginFinding compares the login cache and bcrypt cost with the bimodal
// login the report's findings describe (at the same steps: the valid ones),
// without repeating its figures.
func loginFinding(r messages.RunReport, s demoSetup) string {
	for _, st := range r.Steps {
		if b := st.Phases["login"].Bimodal; b != nil && st.Verdict != messages.VerdictInconclusive {
			return fmt.Sprintf("login cost: the server was set to cache logins and pay bcrypt cost %d on a miss, which gives two modes: the findings above find login bimodal from step %d",
				s.bcryptCost, st.Step)
		}
	}
	return "login cost: login was not found bimodal in any step"
}

// slowFinding picks the step and mailbox phase where averaging per-producer
// P99s would be furthest off; when the report's findings already say so, it
// refers to them instead of giving the figures again.
func slowFinding(r messages.RunReport, s demoSetup) string {
	best, step, phase := 0.0, 0, ""
	for _, st := range r.Steps {
		if st.Verdict == messages.VerdictInconclusive {
			continue
		}
		for _, p := range []string{"list", "select", "fetch", "store", "append"} {
			if f, ok := st.AverageP99Fallacy[p]; ok && f < best {
				best, step, phase = f, st.Step, p
			}
		}
	}
	head := fmt.Sprintf("slow backend: %.0f%% of the accounts pay %v more per mailbox command", 100*s.slowFraction, s.slowDelay)
	if phase == "" {
		return head + "; no phase's per-producer P99s disagreed enough to matter"
	}
	if -best >= reporter.FallacyNote { // the report's findings quantify it
		return fmt.Sprintf("%s: the tail that averaging the per-producer P99s would understate, as the findings above say of %s", head, phase)
	}
	pooled := stepByNumber(r, step).Phases[phase].P99
	return fmt.Sprintf("%s; at step %d the pooled P99 of %s is %.1f ms, while the average of the per-producer P99s would say %.1f ms (%.0f%% low)",
		head, step, phase, pooled, pooled*(1+best), -100*best)
}

func stepByNumber(r messages.RunReport, n int) messages.StepResult {
	for _, st := range r.Steps {
		if st.Step == n {
			return st
		}
	}
	return messages.StepResult{}
}

func printDemoFindings(w io.Writer, r messages.RunReport, s demoSetup) {
	fmt.Fprintln(w, "\nwhat the demo server was set to, and what the run found:")
	_ = reporter.WriteList(w, demoFindings(r, s))
}
