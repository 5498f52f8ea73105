package ramp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/verdict"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Errors of the controller.
var (
	ErrNoProducers = errors.New("ramp: no producer accepted the step")
	ErrNoResult    = errors.New("ramp: no step result in time")
	ErrOptions     = errors.New("ramp: bad options")
)

// Options configure a Controller. Template carries what every step shares
// (duration, warm-up, stagger, mix, arrival); Run, Step and Rate are set per step.
type Options struct {
	Template messages.StepCommand
	Plan     Plan
	// ReplyWait is how long producers' answers are collected (default 1s).
	ReplyWait time.Duration
	// ResultWait is how long past warm-up + duration a result may take
	// (default 60s: the aggregator's own timeout plus margin).
	ResultWait time.Duration
	// Cooldown is how long the ramp offers no load before a step that
	// follows an overloaded one at a lower rate (Decision.Cooldown): the
	// downward search, the re-offer before a bisection, a midpoint after a
	// midpoint below. 0 means the template's window (one step's length); a
	// negative value, none.
	Cooldown time.Duration
	// OnCooldown is called before each cool-down, with the step it precedes
	// (its number and rate) and the decision that asked for it.
	OnCooldown func(step int, d Decision, wait time.Duration)
	// FirstStep is the number of the first step (default 1); later steps
	// follow it.
	FirstStep int
	// OnStep is called after a step was published, with the answers.
	OnStep func(cmd messages.StepCommand, replies []messages.StepReply)
	// OnResult is called with each step's result.
	OnResult func(messages.StepResult)
	Bus      *bus.Options
	Logger   *slog.Logger
}

// Controller runs a ramp against a deployed fleet. Create it with New.
type Controller struct {
	nc       *nats.Conn
	opts     Options
	log      *slog.Logger
	stepNo   int    // the last step number used
	stopped  string // why the plan ended
	answered bool   // a result of this ramp arrived: an aggregator is running
}

// New checks the options; it does no I/O.
func New(nc *nats.Conn, opts *Options) (*Controller, error) {
	if opts == nil {
		return nil, fmt.Errorf("%w: options are required (run and plan)", ErrOptions)
	}
	o := *opts
	probe := o.Template
	probe.Step, probe.Rate, probe.SessionRate = 1, 1, 0 // each step's rates are the plan's
	if err := probe.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if err := o.Plan.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if o.ReplyWait <= 0 {
		o.ReplyWait = time.Second
	}
	if o.ResultWait <= 0 {
		o.ResultWait = time.Minute
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Controller{nc: nc, opts: o, log: log, stepNo: max(o.FirstStep, 1) - 1}, nil
}

// Run runs the plan to its end and returns the step results in order. A
// run id that has results at the plan's steps is refused (ErrRunUsed)
// before any step command is sent.
func (c *Controller) Run(ctx context.Context) ([]messages.StepResult, error) {
	js, err := jetstream.New(c.nc)
	if err != nil {
		return nil, err
	}
	if _, err := bus.EnsureResults(ctx, js, c.opts.Bus); err != nil {
		return nil, err
	}
	if _, err := bus.EnsureSteps(ctx, js, c.opts.Bus); err != nil {
		return nil, err // the aggregator pools only steps whose command is kept
	}
	if err := CheckFresh(ctx, js, c.opts.Template.Run, c.stepNo+1); err != nil {
		return nil, err // before any step command: nothing is sent under a used id
	}
	results, stop, err := c.watchResults(ctx, js)
	if err != nil {
		return nil, err
	}
	defer stop()
	var done []messages.StepResult
	for {
		d := c.opts.Plan.Decide(done)
		if d.Stop != "" {
			c.stopped = d.Stop
			return done, nil
		}
		if err := c.coolDown(ctx, d); err != nil {
			return done, err
		}
		res, err := c.step(ctx, js, d.Rate, d.Conns, results)
		if err != nil {
			return done, err
		}
		done = append(done, res)
	}
}

// coolDown waits, offering no load, before a step the plan asked to cool
// down for (see Options.Cooldown).
func (c *Controller) coolDown(ctx context.Context, d Decision) error {
	wait := c.opts.Cooldown
	if wait == 0 {
		wait = c.opts.Template.Duration.D()
	}
	if !d.Cooldown || wait <= 0 {
		return nil
	}
	if c.opts.OnCooldown != nil {
		c.opts.OnCooldown(c.stepNo+1, d, wait)
	}
	c.log.Info("ramp: cooling down before the next step", "step", c.stepNo+1, "kind", d.Kind, "wait", wait)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Stopped says why the plan ended, once Run has returned without error.
func (c *Controller) Stopped() string { return c.stopped }

// step publishes one step command and waits for its result, judged at the
// plan's threshold. When the producers that accepted did not divide the rate
// by their own number (a producer left, a stale registry entry), the step is
// re-issued at once under the next step number with that number, so that
// their shares add up to the target; the first one is stopped by it.
func (c *Controller) step(ctx context.Context, js jetstream.JetStream, rate float64, conns int, results <-chan messages.StepResult) (messages.StepResult, error) {
	cmd := c.opts.Template
	cmd.Rate = rate
	if sc := cmd.Normalized().ScriptOf(); sc != nil && cmd.SessionRate > 0 {
		cmd.SessionRate = rate / float64(len(sc)) // offered in sessions/s, as the template was
	}
	if conns > 0 {
		cmd.Connections = conns
	}
	if cmd.Producers == 0 && cmd.ProducerRate == 0 {
		cmd.Producers = c.liveProducers(ctx, js)
	}
	cmd, replies, err := c.offer(cmd)
	if err != nil {
		return messages.StepResult{}, err
	}
	if n := Accepted(replies); cmd.ProducerRate == 0 && n > 0 && misShared(replies, n) {
		c.log.Warn("ramp: the producers that accepted divided the rate by another count; re-issuing the step", "step", cmd.Step, "accepted", n)
		cmd.Producers = n
		if cmd, _, err = c.offer(cmd); err != nil {
			return messages.StepResult{}, err
		}
	}
	r, err := c.awaitResult(ctx, cmd, results)
	verdict.Stamp(&r, c.opts.Plan.Threshold)
	return r, err
}

// offer publishes cmd under the next step number and gathers the answers.
func (c *Controller) offer(cmd messages.StepCommand) (messages.StepCommand, []messages.StepReply, error) {
	c.stepNo++
	cmd.Step = c.stepNo
	replies, err := c.publish(cmd)
	if err != nil {
		return cmd, nil, err
	}
	if c.opts.OnStep != nil {
		c.opts.OnStep(cmd, replies)
	}
	if Accepted(replies) == 0 {
		return cmd, replies, noProducers(cmd, replies)
	}
	return cmd, replies, nil
}

// noProducers is ErrNoProducers with its cause: no producer answered, or
// those that did refused (their first reason, quoted).
func noProducers(cmd messages.StepCommand, replies []messages.StepReply) error {
	if len(replies) == 0 {
		return fmt.Errorf("%w: run %s step %d (no answer); start producers (imapload producer) on the same NATS", ErrNoProducers, cmd.Run, cmd.Step)
	}
	return fmt.Errorf("%w: run %s step %d: %d producer(s) refused it: %s", ErrNoProducers, cmd.Run, cmd.Step, len(replies), replies[0].Error)
}

// misShared reports whether an accepting producer divided the rate by a
// count other than the n that accepted.
func misShared(replies []messages.StepReply, n int) bool {
	for _, r := range replies {
		if r.Accepted && r.Producers != n {
			return true
		}
	}
	return false
}

// Accepted counts the answers that accepted the step.
func Accepted(replies []messages.StepReply) int {
	n := 0
	for _, r := range replies {
		if r.Accepted {
			n++
		}
	}
	return n
}

// liveProducers counts registry entries; 0 (let producers decide) on error.
func (c *Controller) liveProducers(ctx context.Context, js jetstream.JetStream) int {
	kv, err := js.KeyValue(ctx, messages.ProducersBucket)
	if err != nil {
		return 0
	}
	keys, err := kv.Keys(ctx)
	if err != nil {
		return 0
	}
	return len(keys)
}

// publish sends cmd as a request and gathers every answer within ReplyWait.
func (c *Controller) publish(cmd messages.StepCommand) ([]messages.StepReply, error) {
	body, err := json.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	return Broadcast(c.nc, body, c.opts.ReplyWait)
}

// Broadcast publishes a step command on messages.StepSubject with a reply
// subject and returns every producer's answer that arrives within wait. With
// wait ≤ 0 it only publishes.
func Broadcast(nc *nats.Conn, body []byte, wait time.Duration) ([]messages.StepReply, error) {
	if wait <= 0 {
		if err := nc.Publish(messages.StepSubject, body); err != nil {
			return nil, err
		}
		return nil, nc.Flush()
	}
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(messages.StepSubject, inbox, body); err != nil {
		return nil, err
	}
	var replies []messages.StepReply
	deadline := time.Now().Add(wait)
	for {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			return replies, nil // the wait is over: every answer in time is in
		}
		if r, err := messages.DecodeStepReply(m.Data); err == nil {
			replies = append(replies, *r)
		}
	}
}

func (c *Controller) awaitResult(ctx context.Context, cmd messages.StepCommand, results <-chan messages.StepResult) (messages.StepResult, error) {
	wait := cmd.WarmupOrDefault() + cmd.Duration.D() + c.opts.ResultWait
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return messages.StepResult{}, ctx.Err()
		case <-timer.C:
			return messages.StepResult{}, c.noResult(cmd, wait)
		case r := <-results:
			c.answered = true
			if r.Step != cmd.Step {
				continue
			}
			if c.opts.OnResult != nil {
				c.opts.OnResult(r)
			}
			return r, nil
		}
	}
}

// noResult is ErrNoResult with its likely cause. Only when no aggregator
// answered this ramp (no result of it arrived) may the cause be that none
// is running; once one has, it is running, and the step's batches were
// refused or never stored.
func (c *Controller) noResult(cmd messages.StepCommand, wait time.Duration) error {
	if !c.answered {
		return fmt.Errorf("%w: run %s step %d after %v, and no result of this ramp at all; is an aggregator (imapload aggregator) running on the same NATS?", ErrNoResult, cmd.Run, cmd.Step, wait)
	}
	return fmt.Errorf("%w: run %s step %d after %v; the aggregator answered earlier steps, so it is running: its log says which of the step's batches it refused, and why", ErrNoResult, cmd.Run, cmd.Step, wait)
}

// watchResults delivers the run's step results published from now on.
func (c *Controller) watchResults(ctx context.Context, js jetstream.JetStream) (<-chan messages.StepResult, func(), error) {
	oc, err := js.OrderedConsumer(ctx, messages.ResultsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{messages.ResultsSubject(c.opts.Template.Run)},
		DeliverPolicy:  jetstream.DeliverNewPolicy,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("ramp: watch results: %w", err)
	}
	out := make(chan messages.StepResult, 64)
	cc, err := oc.Consume(func(m jetstream.Msg) {
		r, err := messages.DecodeResult(m.Data()) // run reports and malformed results are skipped
		if err != nil {
			return
		}
		select {
		case out <- *r:
		default:
			c.log.Warn("ramp: result dropped, controller not keeping up", "step", r.Step)
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("ramp: watch results: %w", err)
	}
	stop := func() { cc.Stop(); <-cc.Closed() }
	return out, stop, nil
}
