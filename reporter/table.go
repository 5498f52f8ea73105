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
var tableHeader = []string{"STEP", "MARK", "TARGET/s", "DELIVERED/s", "RATIO", "PHASE", "COUNT", "ERRORS", "P50 ms", "P99 ms", "P99 95% CI", "P99.9 ms"}

// leftAligned are the text columns of tableHeader; numbers align right.
var leftAligned = map[int]bool{1: true, 5: true, 10: true}

// RenderTable writes r as a plain-text table for a terminal: one row per step
// and phase (response-time P50, P99 with its 95% interval, P99.9), the knee
// and invalid steps marked, the top error kinds under each step, then the
// knee, the last step that held and the findings. Fixed-width columns, no
// colours.
func RenderTable(w io.Writer, r messages.RunReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "imapload run %s: %s, knee threshold %s, generated %s\n\n",
		r.Run, plural(len(r.Steps), "step"), ratio(r.Threshold), r.Generated.UTC().Format(time.RFC3339))
	t := &textTable{header: tableHeader, left: leftAligned}
	for i := range r.Steps {
		addStep(t, &r.Steps[i], mark(r, r.Steps[i].Step))
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
	for _, n := range r.Invalid {
		if n == step {
			marks = append(marks, "INVALID")
		}
	}
	return strings.Join(marks, ",")
}

// addStep adds a step's rows: the step's figures on its first phase row.
func addStep(t *textTable, s *messages.StepResult, mark string) {
	head := []string{strconv.Itoa(s.Step), mark, rate(s.TargetRate), rate(s.DeliveredRate), ratio(s.Ratio)}
	names := phaseNames(s.Phases)
	if len(names) == 0 {
		t.row(append(head, "-", "0", "0", "-", "-", "-", "-"))
	}
	for i, name := range names {
		if i > 0 {
			head = make([]string, 5)
		}
		t.row(append(head, phaseCells(name, s.Phases[name])...))
	}
	if len(s.Missing) > 0 {
		t.note("missing: " + strings.Join(s.Missing, ", "))
	}
	if errs := sortedErrors(s.Errors); len(errs) > 0 {
		t.note("errors: " + errorList(errs))
	}
}

func phaseCells(name string, p messages.PhaseResult) []string {
	ci := "-"
	if p.CI.P99 != (messages.Interval{}) {
		ci = ms(p.CI.P99[0]) + ".." + ms(p.CI.P99[1])
	}
	return []string{name, strconv.FormatUint(p.Count, 10), strconv.FormatUint(failed(p), 10), ms(p.P50), ms(p.P99), ci, ms(p.P999)}
}

// errorList names the top error kinds: `fetch "NO [SERVERBUG] …" ×120`.
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

func writeSummary(b *strings.Builder, r messages.RunReport) {
	switch k := r.Knee; {
	case k != nil:
		fmt.Fprintf(b, "knee:      step %d at %s/s offered, %s/s delivered (ratio %s < %s)\n",
			k.Step, rate(k.Rate), rate(k.DeliveredRate), ratio(k.Ratio), ratio(k.Threshold))
	case len(r.Steps) == 0:
		b.WriteString("knee:      none yet (no step results)\n")
	case len(r.Invalid) >= len(r.Steps):
		b.WriteString("knee:      none (no valid step)\n")
	default:
		fmt.Fprintf(b, "knee:      none (every valid step delivered at least %s of its target)\n", percent(r.Threshold))
	}
	if h := r.LastHeld; h != nil {
		fmt.Fprintf(b, "last held: step %d at %s/s offered, %s/s delivered (ratio %s)\n",
			h.Step, rate(h.Rate), rate(h.DeliveredRate), ratio(h.Ratio))
	} else {
		b.WriteString("last held: none\n")
	}
	if len(r.Invalid) > 0 {
		fmt.Fprintf(b, "invalid:   %s (generator saturated: never a knee)\n", stepsWord(r.Invalid))
	}
	if len(r.Findings) > 0 {
		b.WriteString("\nfindings:\n")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(b, "  - %s\n", f)
	}
}
