package reporter

import (
	"fmt"
	"strings"

	"github.com/imapload/imapload/messages"
)

// StepLine is a finished step as a ramp prints it when its result arrives:
// its figures and verdict, then each reason with its detail and what to do.
// earlier are the steps whose lines were printed before it, in order: what
// they said is not said again, so a remedy one of them printed is referred
// back to ("what to do: as for step 1 above"). With StepLinesAbove, the
// table printed after the lines does the same.
func StepLine(r messages.StepResult, earlier []messages.StepResult) string {
	said := told{}
	for i := range earlier {
		said.stepLine(&earlier[i])
	}
	return said.stepLine(&r)
}

func (t told) stepLine(r *messages.StepResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d done: target %.0f/s, delivered %.1f/s (%.0f%%): %s", r.Step, r.TargetRate, r.DeliveredRate, 100*r.Ratio, strings.ToUpper(r.Verdict))
	if r.TargetSessionRate > 0 {
		fmt.Fprintf(&b, "; sessions %.1f/s of %.1f/s", r.SessionRate, r.TargetSessionRate)
	}
	if c := r.Connections; c != nil {
		fmt.Fprintf(&b, "; held %d of %d IDLE connections", c.Held, c.Offered)
	}
	if d := r.Deliveries; d != nil {
		fmt.Fprintf(&b, "; delivered %.1f/s of %.1f/s, %d of %d seen arriving", d.DeliveredRate, d.TargetRate, d.Seen, d.Watched)
	}
	if r.Below != "" {
		b.WriteString("\n    below on " + r.Below)
	}
	for _, x := range r.Reasons {
		fmt.Fprintf(&b, "\n    %s: %s", x.Code, x.Detail)
		if x.Remedy != "" {
			b.WriteString("\n    what to do: " + t.whatToDo(x.Remedy, r.Step))
		}
	}
	for _, x := range r.Caveats {
		fmt.Fprintf(&b, "\n    caveat %s: %s", x.Code, x.Detail)
		if x.Remedy != "" {
			b.WriteString("\n    what to do: " + t.whatToDo(x.Remedy, r.Step))
		}
	}
	return b.String()
}

// told maps each remedy an output has printed in full to the step under
// whose line or row it was printed (0: under the run's verdict), so that
// each remedy is printed once and referred back to after.
type told map[string]int

// whatToDo is what to print of remedy in step's text: the remedy the first
// time, then a reference back to where it was printed.
func (t told) whatToDo(remedy string, step int) string {
	first, ok := t[remedy]
	switch {
	case !ok:
		t[remedy] = step
		return remedy
	case first == step || first == 0:
		return "as above"
	}
	return fmt.Sprintf("as for step %d above", first)
}

// reason is "code: detail (what to do: …)", its remedy told once.
func (t told) reason(rs messages.Reason, step int) string {
	text := rs.Code
	if rs.Detail != "" {
		text += ": " + rs.Detail
	}
	if rs.Remedy != "" {
		text += " (what to do: " + t.whatToDo(rs.Remedy, step) + ")"
	}
	return text
}
