package producer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
)

// errStepReused refuses a step command for a (run, step) that was already
// commanded or has a result: the aggregator keeps the first command of a
// step and refuses every batch that disagrees with it, so running it again
// would send load whose figures nobody pools.
var errStepReused = errors.New("producer: step already commanded")

// maxHistory bounds the steps a producer remembers having accepted: as many
// as the steps stream keeps.
const maxHistory = bus.StepsMaxMsgs

// stepKey names a step of a run.
type stepKey struct {
	run  string
	step int
}

// history remembers when this producer accepted each step, the oldest
// forgotten past maxHistory. The control loop is its only user.
type history struct {
	at    map[stepKey]time.Time
	order []stepKey
}

// accepted notes that k was accepted at now.
func (h *history) accepted(k stepKey, now time.Time) {
	if h.at == nil {
		h.at = map[stepKey]time.Time{}
	}
	if _, ok := h.at[k]; ok {
		return
	}
	if len(h.order) >= maxHistory {
		delete(h.at, h.order[0])
		h.order = h.order[1:]
	}
	h.at[k] = now
	h.order = append(h.order, k)
}

// when is when k was accepted, if it was.
func (h *history) when(k stepKey) (time.Time, bool) {
	t, ok := h.at[k]
	return t, ok
}

// reused says why cmd must not run, nil when it may: this producer
// accepted the same step before, or the step has a result already. It is
// called before anything of the step is sent. A failed look at the results
// is logged and does not refuse the step: the look guards against a
// mistake, it must not stop a run when the results stream is unreachable.
func (p *Producer) reused(ctx context.Context, cmd messages.StepCommand) error {
	if t, ok := p.history.when(stepKey{cmd.Run, cmd.Step}); ok {
		return fmt.Errorf("%w: run %s step %d was commanded at %s and this producer ran it; a step runs once, so use a fresh run id (imapload ramp --run auto)",
			errStepReused, cmd.Run, cmd.Step, t.UTC().Format(time.RFC3339))
	}
	done, err := bus.RunResults(ctx, p.js, cmd.Run)
	if err != nil {
		p.log.Warn("producer: cannot look for earlier results of the run", "run", cmd.Run, "err", err)
		return nil
	}
	if t, ok := done[cmd.Step]; ok {
		return fmt.Errorf("%w: run %s step %d already has a result (published %s); a step runs once, so use a fresh run id (imapload ramp --run auto)",
			errStepReused, cmd.Run, cmd.Step, t.UTC().Format(time.RFC3339))
	}
	return nil
}
