package aggregator

import (
	"time"

	"github.com/imapload/imapload/messages"
)

// deliveries pools the step's deliveries (phase deliver and the batches'
// arrivals); nil when the step delivered none.
func (p *Pool) deliveries() *messages.DeliveriesResult {
	ph := &p.phases[messages.Deliver]
	var offered float64
	for _, id := range p.producerIDs() {
		offered += p.prods[id].deliver
	}
	if p.info.FleetDeliverRate == 0 && offered == 0 && !ph.present {
		return nil
	}
	d := &messages.DeliveriesResult{
		TargetRate: p.info.FleetDeliverRate, OfferedRate: offered,
		Scheduled: ph.attempted + ph.dropped, Accepted: ph.succeeded,
		Failed: ph.attempted - min(ph.succeeded, ph.attempted), Dropped: ph.dropped,
		Arrivals: p.totals.arrivals,
	}
	if secs := time.Duration(p.info.Duration).Seconds(); secs > 0 {
		d.DeliveredRate = float64(ph.succeeded) / secs
	}
	if d.TargetRate > 0 {
		d.Ratio = d.DeliveredRate / d.TargetRate
	}
	return d
}
