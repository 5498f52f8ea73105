package reporter

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/imapload/imapload/messages"
)

// tableHeader names the columns of RenderTable. Latencies are response times
// in milliseconds from the merged sketches; the interval is the 95% interval
// of the P99 from the count-weighted reservoirs.
var tableHeader = []string{"STEP", "MARK", "VERDICT", "TARGET/s", "DELIVERED/s", "RATIO", "SESSIONS/s", "PHASE", "COUNT", "ERRORS", "P50 ms", "P99 ms", "P99 95% CI", "P99.9 ms"}

// leftAligned are the text columns of tableHeader; numbers align right.
var leftAligned = map[int]bool{1: true, 2: true, 7: true, 12: true}

// stepColumns is how many columns of tableHeader describe the step.
const stepColumns = 7

// RenderTable writes r as a plain-text table for a terminal: one row per step
// and phase (response-time P50, P99 with its 95% interval, P99.9), each
// step's verdict, the knee and last held step marked, the reasons of
// inconclusive steps and the top error kinds under each step, then the run's
// verdict, the knee, the last step that held, the thresholds, the top errors
// of a failing run and the findings. Fixed-width columns, no colours.
func RenderTable(w io.Writer, r messages.RunReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "imapload run %s: %s, knee threshold %s, generated %s\n\n",
		r.Run, plural(len(r.Steps), "step"), ratio(r.Threshold), r.Generated.UTC().Format(time.RFC3339))
	t := &textTable{header: tableHeader, left: leftAligned}
	for i := range r.Steps {
		addStep(t, &r.Steps[i], mark(r, r.Steps[i].Step), r.Threshold)
	}
	t.write(&b)
	b.WriteString("\n")
	writeSummary(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

func mark(r messages.RunReport, step int) string {
	var marks []string
	if r.Knee != nil && r.Knee.Step == step {
		marks = append(marks, "KNEE")
	}
	if r.LastHeld != nil && r.LastHeld.Step == step {
		marks = append(marks, "last held")
	}
	return strings.Join(marks, ",")
}

// addStep adds a step's rows: the step's figures on its first phase row,
// then notes: why it is inconclusive, who is missing, its top errors.
func addStep(t *textTable, s *messages.StepResult, mark string, threshold float64) {
	head := []string{strconv.Itoa(s.Step), mark, stepVerdict(s, threshold), rate(s.TargetRate), rate(s.DeliveredRate), ratio(s.Ratio), sessions(s)}
	names := phaseNames(s.Phases)
	if len(names) == 0 {
		t.row(append(head, "-", "0", "0", "-", "-", "-", "-"))
	}
	for i, name := range names {
		if i > 0 {
			head = make([]string, stepColumns)
		}
		t.row(append(head, phaseCells(name, s.Phases[name])...))
	}
	if isInconclusive(s) {
		for _, rs := range stepReasons(s) {
			t.note("inconclusive: " + reasonText(rs))
		}
	}
	if c := s.Connections; c != nil {
		t.note(connectionsText(c))
		if s.Below != "" {
			t.note("below on " + s.Below)
		}
	}
	if s.Profile != "" {
		t.note("profile: " + s.Profile)
	}
	if s.Script != "" {
		t.note("script: " + s.Script)
	}
	if len(s.Missing) > 0 {
		t.note("missing: " + strings.Join(s.Missing, ", "))
	}
	if n := checksNote(s); n != "" {
		t.note(n)
	}
	if n := serverNote(s); n != "" {
		t.note(n)
	}
	if errs := sortedErrors(s.Errors); len(errs) > 0 {
		t.note("errors: " + errorList(errs))
	}
}

// sessions is the step's delivered sessions (logins) per second, and the
// offered ones of a step that runs a script.
func sessions(s *messages.StepResult) string {
	if s.TargetSessionRate > 0 {
		return rate(s.SessionRate) + " of " + rate(s.TargetSessionRate)
	}
	return rate(s.SessionRate)
}

// checksNote says what the step's integrity checks found, "" when none ran
// and nothing kept them from running: "integrity checks: 25 run, 0 failed".
func checksNote(s *messages.StepResult) string {
	c := s.Checks
	if c.Run == 0 && s.ChecksDisabled == "" {
		return ""
	}
	n := fmt.Sprintf("integrity checks: %d run, %d failed", c.Run, c.Failed)
	if s.ChecksDisabled != "" {
		n += "; " + s.ChecksDisabled
	}
	return n
}

func phaseCells(name string, p messages.PhaseResult) []string {
	return []string{name, strconv.FormatUint(p.Count, 10), strconv.FormatUint(failed(p), 10),
		pctText(p, nameP50, p.P50), pctText(p, nameP99, p.P99), ciText(p, nameP99, p.CI.P99), pctText(p, nameP999, p.P999)}
}

// errorList names the top error kinds: `fetch "NO [SERVERBUG] …" x120`.
func errorList(errs []messages.ErrorGroup) string {
	parts := make([]string, 0, topErrors+1)
	for _, e := range errs[:min(topErrors, len(errs))] {
		parts = append(parts, fmt.Sprintf("%s %q x%d", e.Phase, clip(e.Kind, 60), e.Count))
	}
	if more := len(errs) - topErrors; more > 0 {
		parts = append(parts, "and "+plural(more, "more kind"))
	}
	return strings.Join(parts, "; ")
}

// runVerdictWords say what each run verdict means.
var runVerdictWords = map[string]string{
	messages.RunKnee:         "knee (the server stopped keeping up)",
	messages.RunNoKnee:       "no knee (every valid step held)",
	messages.RunInconclusive: "inconclusive (what the server sustains could not be established)",
	messages.RunFailing:      "failing (most commands failed: the server did not answer correctly)",
	"":                       "none yet (no step results)",
}

func writeSummary(b *strings.Builder, r messages.RunReport) {
	writeVerdict(b, r)
	writeKnee(b, r)
	if h := r.LastHeld; h != nil {
		fmt.Fprintf(b, "last held: step %d at %s/s offered, %s/s delivered (ratio %s)\n",
			h.Step, rate(h.Rate), rate(h.DeliveredRate), ratio(h.Ratio))
	} else {
		b.WriteString("last held: none\n")
	}
	if m := r.MostHeld; m != nil {
		fmt.Fprintf(b, "most held: step %d held %d IDLE connections (of %d asked) with %s/s intact (ratio %s)\n",
			m.Step, m.Connections, m.Target, rate(m.Rate), ratio(m.Ratio))
	}
	if bad := inconclusiveSteps(r.Steps); len(bad) > 0 {
		fmt.Fprintf(b, "inconclusive: %s (never the knee nor the last held step; reasons under each)\n", stepsWord(bad))
	}
	writeThresholds(b, r.Thresholds)
	writeTopErrors(b, r.TopErrors)
	if len(r.Findings) > 0 {
		b.WriteString("\nfindings:\n")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(b, "  - %s\n", f)
	}
}

// writeVerdict writes the run's verdict and its reasons, each with its own remedy.
func writeVerdict(b *strings.Builder, r messages.RunReport) {
	v := runVerdict(r)
	words, ok := runVerdictWords[v]
	if !ok {
		words = v
	}
	fmt.Fprintf(b, "verdict:   %s\n", words)
	for _, rs := range r.Reasons {
		fmt.Fprintf(b, "           - %s\n", reasonText(rs))
	}
}

func writeKnee(b *strings.Builder, r messages.RunReport) {
	switch k := r.Knee; {
	case k != nil && k.Low > 0:
		fmt.Fprintf(b, "knee:      between %s and %s/s: %s; step %d at %s/s offered fell below (%s/s delivered, ratio %s < %s)\n",
			rate(k.Low), rate(k.Rate), uncertainWords(k.Uncertain), k.Step, rate(k.Rate), rate(k.DeliveredRate), ratio(k.Ratio), ratio(k.Threshold))
	case k != nil && k.Connections > 0:
		fmt.Fprintf(b, "knee:      step %d at %d held connections and %s/s offered: below on %s\n",
			k.Step, k.Connections, rate(k.Rate), k.Below)
	case k != nil:
		fmt.Fprintf(b, "knee:      step %d at %s/s offered, %s/s delivered (ratio %s < %s)\n",
			k.Step, rate(k.Rate), rate(k.DeliveredRate), ratio(k.Ratio), ratio(k.Threshold))
	case len(r.Steps) == 0:
		b.WriteString("knee:      none yet (no step results)\n")
	case runVerdict(r) == messages.RunNoKnee:
		fmt.Fprintf(b, "knee:      none (every valid step delivered at least %s of its target)\n", percent(r.Threshold))
	default:
		b.WriteString("knee:      none found (see the verdict)\n")
	}
}

// uncertainWords says which steps make the knee a range.
func uncertainWords(steps []int) string {
	switch len(steps) {
	case 0:
		return "the steps between were inconclusive"
	case 1:
		return stepsWord(steps) + " was inconclusive"
	}
	return stepsWord(steps) + " were inconclusive"
}

func writeThresholds(b *strings.Builder, checks []messages.ThresholdCheck) {
	if len(checks) > 0 {
		b.WriteString("thresholds:\n")
	}
	for _, c := range checks {
		result := "FAIL"
		if c.Pass {
			result = "PASS"
		}
		fmt.Fprintf(b, "  %s  %s: %s\n", result, c.Name, c.Detail)
	}
}

// writeTopErrors lists a failing run's top errors with counts and an example.
func writeTopErrors(b *strings.Builder, errs []messages.ErrorGroup) {
	if len(errs) > 0 {
		b.WriteString("top errors:\n")
	}
	for _, e := range errs {
		fmt.Fprintf(b, "  %s %q x%d (%s)", e.Phase, clip(e.Kind, 80), e.Count, plural(e.Producers, "producer"))
		if e.Example != "" {
			fmt.Fprintf(b, ", e.g. %q", clip(e.Example, 120))
		}
		b.WriteString("\n")
	}
}

// connectionsText is a step's held connections, as a note under it.
func connectionsText(c *messages.ConnectionsResult) string {
	return fmt.Sprintf("connections: %d of %d held through the window (%d asked), %d at its end, %d dropped; set-ups %d, %d failed",
		c.Held, c.Offered, c.Target, c.HeldAtEnd, c.Dropped, c.SetupAttempted, c.SetupFailed)
}
