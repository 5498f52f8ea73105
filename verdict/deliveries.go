package verdict

import (
	"fmt"

	"github.com/imapload/imapload/messages"
)

// deliveriesBelow says how a step's deliveries (StepResult.Deliveries) fell
// short at threshold, one cause per item: accepted at less than threshold
// of their target rate, or, of the deliveries to accounts with a held IDLE
// connection, fewer than threshold seen arriving there. A step holds only
// if its deliveries hold too.
func deliveriesBelow(r messages.StepResult, threshold float64) []string {
	d := r.Deliveries
	if d == nil {
		return nil
	}
	var out []string
	if d.TargetRate > 0 && d.Ratio < threshold {
		s := fmt.Sprintf("deliveries: accepted %.1f of %.1f/s (%.1f%%, under %.0f%%)",
			d.DeliveredRate, d.TargetRate, 100*d.Ratio, 100*threshold)
		if d.Failed > 0 || d.Dropped > 0 {
			s += fmt.Sprintf(", %d refused or failed, %d never sent (no free delivery slot)", d.Failed, d.Dropped)
		}
		out = append(out, s)
	}
	if d.Watched > 0 && float64(d.Seen) < threshold*float64(d.Watched) {
		out = append(out, fmt.Sprintf("time to inbox: %d of %d deliveries to accounts with a held IDLE connection seen there (%.1f%%, under %.0f%%), %d never seen",
			d.Seen, d.Watched, 100*float64(d.Seen)/float64(d.Watched), 100*threshold, d.Missing))
	}
	return out
}

// belowOn is ": below on …" with what step s fell short on (its Below), ""
// when it names nothing: a run's reason says which of commands, held
// connections or deliveries fell short, since a step below on its
// deliveries alone delivered its command rate (ratio 1.00).
func belowOn(s *messages.StepResult) string {
	if s.Below == "" {
		return ""
	}
	return ": below on " + s.Below
}
