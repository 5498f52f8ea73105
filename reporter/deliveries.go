package reporter

import (
	"fmt"

	"github.com/imapload/imapload/messages"
)

// deliveriesText is a step's deliveries, as a note under it: their rate,
// what became of them, and the integrity of what arrived on the held IDLE
// connections (each delivery seen once).
func deliveriesText(d *messages.DeliveriesResult) string {
	n := fmt.Sprintf("deliveries: %s/s of %s/s (%.0f%%): %d accepted, %d failed, %d never sent; ",
		rate(d.DeliveredRate), rate(d.TargetRate), 100*d.Ratio, d.Accepted, d.Failed, d.Dropped)
	if d.Watched == 0 {
		return n + "none to an account with a held IDLE connection, so no time to inbox"
	}
	n += fmt.Sprintf("time to inbox: %d of %d watched seen, %d missing, %d duplicates", d.Seen, d.Watched, d.Missing, d.Duplicates)
	if d.Intact() {
		n += " (each arrived once)"
	}
	return n
}
