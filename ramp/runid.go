package ramp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
)

// ErrRunUsed refuses a run id that already has results at the steps a ramp
// would use. The aggregator keeps the first command of every (run, step)
// and refuses batches that disagree with it, and the producers refuse a
// step already run: a reused id would send no load, or load whose figures
// nobody pools.
var ErrRunUsed = errors.New("ramp: run id already used")

// CheckFresh returns ErrRunUsed, with the steps and when the first of
// them was published, when run has a result at step first or after;
// nil when it has none. A look that fails is an error of its own.
func CheckFresh(ctx context.Context, js jetstream.JetStream, run string, first int) error {
	done, err := bus.RunResults(ctx, js, run)
	if err != nil {
		return fmt.Errorf("ramp: %w", err)
	}
	var steps []int
	for s := range done {
		if s >= first {
			steps = append(steps, s)
		}
	}
	if len(steps) == 0 {
		return nil
	}
	slices.Sort(steps)
	return fmt.Errorf("%w: run %s already has results (%s, the first published %s); a run id names one run: use a fresh one, or --run auto",
		ErrRunUsed, run, stepList(steps), done[steps[0]].UTC().Format(time.RFC3339))
}

// stepList is "step 3" or "steps 1–7 (5 of them)".
func stepList(steps []int) string {
	if len(steps) == 1 {
		return fmt.Sprintf("step %d", steps[0])
	}
	return fmt.Sprintf("steps %d–%d, %d of them", steps[0], steps[len(steps)-1], len(steps))
}
