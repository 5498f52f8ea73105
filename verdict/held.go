package verdict

import (
	"fmt"

	"github.com/imapload/imapload/messages"
)

// HoldFailShare is the share of failed hold set-ups (the server's failures
// to accept, log in, select or IDLE a new held connection) above which a
// connection step is below: new connections have started failing.
const HoldFailShare = 0.01

// Below says why a step is below at threshold, or "" when it is not: its
// command rate (delivered/target under threshold), its held connections
// (fewer held through the window than threshold of those offered), or its
// new connections failing (more than HoldFailShare of the hold set-ups in
// the window). Every cause that applies is named, joined by "; ".
func Below(r messages.StepResult, threshold float64) string {
	threshold = Threshold(threshold)
	var out string
	add := func(s string) {
		if out != "" {
			out += "; "
		}
		out += s
	}
	if r.Ratio < threshold {
		add(fmt.Sprintf("command rate: delivered %.1f of %.1f/s (%.1f%%, under %.0f%%)",
			r.DeliveredRate, r.TargetRate, 100*r.Ratio, 100*threshold))
	}
	if c := r.Connections; c != nil && c.HeldShare() < threshold {
		add(fmt.Sprintf("held connections: %d of %d held through the window (%.1f%%, under %.0f%%)",
			c.Held, c.Offered, 100*c.HeldShare(), 100*threshold))
	}
	if c := r.Connections; c != nil && c.SetupFailed > 0 && float64(c.SetupFailed) > HoldFailShare*float64(c.SetupAttempted) {
		add(fmt.Sprintf("new connections failing: %d of %d hold set-ups failed (over %.0f%%)",
			c.SetupFailed, c.SetupAttempted, 100*HoldFailShare))
	}
	for _, s := range deliveriesBelow(r, threshold) {
		add(s)
	}
	return out
}

// MostHeld is the step that held the most connections with its command rate
// intact: among valid steps whose verdict at threshold is held, the one with
// the highest ConnectionsResult.Held (the earliest step on a tie); nil when
// none held connections.
func MostHeld(steps []messages.StepResult, threshold float64) *messages.HeldRef {
	var best *messages.StepResult
	for i := range steps {
		s := &steps[i]
		if s.Connections == nil || s.Connections.Held == 0 || Of(*s, threshold) != messages.VerdictHeld {
			continue
		}
		if best == nil || s.Connections.Held > best.Connections.Held ||
			s.Connections.Held == best.Connections.Held && s.Step < best.Step {
			best = s
		}
	}
	if best == nil {
		return nil
	}
	return &messages.HeldRef{Step: best.Step, Connections: best.Connections.Held, Target: best.Connections.Target,
		Rate: best.TargetRate, Ratio: best.Ratio}
}
