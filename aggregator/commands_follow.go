package aggregator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/nats-io/nats.go/jetstream"
)

// The wait for a batch's step command: a batch stored before the command
// has been read is delayed, NAK'd, up to commandTries deliveries; then it is
// rejected. The steps stream's end is looked at at most once per lookEvery.
// A command is stored before the batches of its step, give or take
// commandLag: the server stores the two streams' messages apart.
const (
	commandTries = 5
	commandDelay = 100 * time.Millisecond
	lookEvery    = 20 * time.Millisecond
	commandLag   = 50 * time.Millisecond
)

// followCommands ensures the steps stream, then reads it from its start
// into the command book with an ordered consumer until the returned
// ConsumeContext is stopped. It returns once the commands stored so far are
// read (or after ioTimeout, with a warning).
func (a *Aggregator) followCommands(ctx context.Context) (jetstream.ConsumeContext, error) {
	steps, err := bus.EnsureSteps(ctx, a.js, a.opts.busOptions())
	if err != nil {
		return nil, fmt.Errorf("aggregator: %w", err)
	}
	a.steps = steps
	oc, err := steps.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, fmt.Errorf("aggregator: read %s: %w", bus.StepsStream, err)
	}
	cc, err := oc.Consume(a.readCommand, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		a.warn.warn("aggregator: reading step commands", "err", err)
	}))
	if err != nil {
		return nil, fmt.Errorf("aggregator: read %s: %w", bus.StepsStream, err)
	}
	if err := a.awaitCommands(ctx); err != nil && ctx.Err() == nil {
		a.log.Warn("aggregator: step commands not all read at start", "err", err)
	}
	return cc, nil
}

// readCommand keeps one message of the steps stream in the command book.
func (a *Aggregator) readCommand(m jetstream.Msg) {
	md, err := m.Metadata()
	if err != nil {
		return
	}
	cmd, err := a.cmds.add(md.Sequence.Stream, m.Data())
	switch {
	case errors.Is(err, errConflicting):
		a.warn.warn("aggregator: a different command for a step already commanded, ignored", "run", cmd.Run, "step", cmd.Step)
	case err != nil:
		a.warn.warn("aggregator: malformed step command ignored", "stream_seq", md.Sequence.Stream, "err", err)
	}
}

// awaitCommands waits until the book holds every command stored now.
func (a *Aggregator) awaitCommands(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	if err := a.lookAtCommands(ctx); err != nil {
		return err
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !a.cmds.caughtUp() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// lookAtCommands reads where the steps stream ends, on the stream's clock.
func (a *Aggregator) lookAtCommands(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	a.lookedAt = time.Now()
	info, err := a.steps.Info(ctx)
	if err != nil {
		return fmt.Errorf("aggregator: %s: %w", bus.StepsStream, err)
	}
	a.cmds.looked(info.State.LastSeq, info.TimeStamp)
	return nil
}

// commandsCover reports whether every step command stored up to stored (a
// batch's time in the stream) plus commandLag has been read: then a batch
// whose step has no command can be rejected at once. Both streams share the
// server's clock.
func (a *Aggregator) commandsCover(ctx context.Context, stored time.Time) bool {
	stored = stored.Add(commandLag)
	if a.cmds.covers(stored) {
		return true
	}
	if time.Since(a.lookedAt) < lookEvery {
		return false
	}
	if err := a.lookAtCommands(ctx); err != nil {
		a.warn.warn("aggregator: cannot look at the step commands", "err", err)
		return false
	}
	return a.cmds.covers(stored)
}
