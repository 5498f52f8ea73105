package observe

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
)

// Observer scrapes the server's metrics endpoints during each step's
// window and publishes what it saw. Create it with New and start it with
// Run; it is what `imapload observe` runs, and what a single-process
// pipeline (run, demo) starts beside its other roles.
type Observer struct {
	nc       *nats.Conn
	opts     Options
	log      *slog.Logger
	scrapers []*scraper
	js       jetstream.JetStream
	steps    sync.WaitGroup // the steps being scraped or published
}

// New checks the options and returns an observer that will use nc. It
// does no I/O.
func New(nc *nats.Conn, opts *Options) (*Observer, error) {
	if nc == nil {
		return nil, ErrNoConn
	}
	o, err := opts.normalized()
	if err != nil {
		return nil, err
	}
	ob := &Observer{nc: nc, opts: o, log: o.Logger}
	for _, e := range o.Endpoints {
		ob.scrapers = append(ob.scrapers, newScraper(e, &ob.opts))
	}
	return ob, nil
}

// ID is the observer's id, in its subjects and in the results.
func (ob *Observer) ID() string { return ob.opts.ID }

// Run ensures the server figures' stream, then scrapes the endpoints during
// the window of every step command published on messages.StepSubject
// (it answers none: the producers do) until ctx is cancelled. A new step
// cuts the one being scraped short; it is published as it is, marked
// stopped early. When ctx ends, Run stops the step in hand, waits for its
// figures to be published (at most Options.PublishWait) and returns nil.
// Call Run once per Observer.
func (ob *Observer) Run(ctx context.Context) error {
	js, err := jetstream.New(ob.nc)
	if err != nil {
		return fmt.Errorf("observe: jetstream: %w", err)
	}
	if _, err := bus.EnsureServer(ctx, js, ob.opts.Bus); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("observe: %w", err)
	}
	ob.js = js
	msgs := make(chan *nats.Msg, 64)
	sub, err := ob.nc.ChanSubscribe(messages.StepSubject, msgs)
	if err != nil {
		return fmt.Errorf("observe: subscribe %s: %w", messages.StepSubject, err)
	}
	defer sub.Unsubscribe()
	ob.log.Info("observe: watching step commands", "id", ob.opts.ID, "endpoints", len(ob.scrapers), "interval", ob.opts.Interval)
	ob.control(ctx, msgs)
	ob.steps.Wait()
	return nil
}

// control starts a step for each new step command until ctx ends, then
// stops the one in hand.
func (ob *Observer) control(ctx context.Context, msgs <-chan *nats.Msg) {
	var last stepKey
	stop := func() {}
	defer func() { stop() }()
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-msgs:
			cmd, err := messages.ParseStepCommand(m.Data)
			if err != nil {
				ob.log.Debug("observe: step command ignored", "err", err) // the producers answer it
				continue
			}
			if k := (stepKey{cmd.Run, cmd.Step}); k != last {
				stop()
				last, stop = k, ob.start(ctx, cmd, time.Now())
			}
		}
	}
}

// stepKey names a step.
type stepKey struct {
	run  string
	step int
}

// start scrapes cmd's window, which begins Warmup after received (as the
// producers count it), and returns what cuts it short.
func (ob *Observer) start(ctx context.Context, cmd messages.StepCommand, received time.Time) context.CancelFunc {
	ctx, cancel := context.WithCancel(ctx)
	start := received.Add(cmd.WarmupOrDefault())
	ob.log.Info("observe: step", "run", cmd.Run, "step", cmd.Step, "window_start", start.UTC(), "duration", cmd.Duration.D())
	ob.steps.Go(func() {
		defer cancel()
		ob.runStep(ctx, cmd, start, start.Add(cmd.Duration.D()))
	})
	return cancel
}
