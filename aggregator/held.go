package aggregator

import (
	"strings"

	"github.com/imapload/imapload/messages"
)

// heldAcc accumulates one producer's held IDLE connections over the
// measurement window, from the batches that overlap it. Like the rest of the
// pool it depends only on the set of batches, not on their order.
type heldAcc struct {
	target int    // its share (StepInfo.Connections)
	least  uint32 // fewest held in any window batch
	seen   bool   // a window batch was added
	endTo  int64  // To of its latest window batch
	endSeq uint64
	atEnd  uint32 // Held of that batch
	drops  uint64
}

// add folds in b, a batch of a step whose window lasts window ns.
func (h *heldAcc) add(b *messages.SampleBatch, window int64) {
	h.target = max(h.target, b.Info.Connections)
	h.drops += b.Health.HeldDrops
	if b.To <= 0 || b.From >= window || b.Seq == 0 {
		return // warm-up, after the window, or batch 0 (cut before anything started)
	}
	if !h.seen || b.Health.HeldMin < h.least {
		h.least = b.Health.HeldMin
	}
	if !h.seen || b.To > h.endTo || b.To == h.endTo && b.Seq > h.endSeq {
		h.endTo, h.endSeq, h.atEnd = b.To, b.Seq, b.Health.Held
	}
	h.seen = true
}

// connections pools the producers' held connections; nil when the step
// held none. target is the command's fleet-wide figure (0 without a
// command, or with producer_connections: then what the producers offered).
func (p *Pool) connections(target int) *messages.ConnectionsResult {
	var c messages.ConnectionsResult
	for _, pa := range p.prods {
		h := &pa.held
		c.Offered += h.target
		c.Held += uint64(h.least)
		c.HeldAtEnd += uint64(h.atEnd)
		c.Dropped += h.drops
	}
	if c.Offered == 0 && target == 0 {
		return nil
	}
	c.Target = target
	if c.Target == 0 {
		c.Target = c.Offered
	}
	hold := &p.phases[messages.Hold]
	c.SetupAttempted, c.SetupFailed = hold.attempted, hold.attempted-min(hold.succeeded, hold.attempted)
	for k, e := range p.errs {
		if k.phase == messages.Hold && strings.HasPrefix(k.kind, messages.GeneratorKind) {
			c.SetupAttempted -= min(e.count, c.SetupAttempted)
			c.SetupFailed -= min(e.count, c.SetupFailed)
		}
	}
	return &c
}
