package aggregator

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Aggregator consumes sample batches, pools each step and publishes its
// StepResult once the step is complete or timed out. Create it with New and
// start it with Run.
type Aggregator struct {
	nc   *nats.Conn
	opts *Options
	log  *slog.Logger
	now  func() time.Time

	cmds *commandBook // every step's command, as read from the steps stream
	warn *warnLimiter // warnings about bad input, a few a minute at most

	// Everything below belongs to Run's loop, the one goroutine that handles
	// batches and sweeps: no lock, so none is ever held across network I/O.
	js       jetstream.JetStream
	results  jetstream.Stream
	steps    jetstream.Stream
	lookedAt time.Time // when the steps stream's end was last looked at
	open     map[stepKey]*openStep
	closed   map[stepKey]published // steps whose result is published
	upAt     time.Time             // when the connection to NATS last came back
	reconns  uint64                // reconnections seen by the last sweep
	runs     map[string]bool       // runs whose published results were looked up
}

// New returns an aggregator that will use nc. It does no I/O.
func New(nc *nats.Conn, opts *Options) (*Aggregator, error) {
	if nc == nil {
		return nil, ErrNoConn
	}
	log, now := opts.logger(), opts.now()
	return &Aggregator{
		nc: nc, opts: opts, log: log, now: now,
		cmds: newCommandBook(opts.maxCommands()), warn: newWarnLimiter(log, opts.warnEvery(), now),
		open: map[stepKey]*openStep{}, closed: map[stepKey]published{}, runs: map[string]bool{},
	}, nil
}

// Run ensures the streams, follows the step commands, consumes batches with
// the durable consumer and publishes step results until ctx is cancelled;
// then it stops consuming,
// waits for the message in hand and returns nil. Steps still open stay open
// in the stream (see doc.go): a later Run with the same Durable resumes them.
// Call Run once per Aggregator.
func (a *Aggregator) Run(ctx context.Context) error {
	cons, cmds, err := a.setup(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil // cancelled while setting up
		}
		return err
	}
	defer stopConsuming(cmds)
	a.log.Info("aggregator: consuming batches", "stream", messages.SamplesStream,
		"durable", a.opts.durable(), "step_timeout", a.opts.stepTimeout())
	in := make(chan jetstream.Msg, consumeBuffer)
	cc, err := cons.Consume(func(m jetstream.Msg) { deliver(ctx, in, m) },
		jetstream.PullMaxMessages(64),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			a.warn.warn("aggregator: consuming batches", "err", err)
		}))
	if err != nil {
		return fmt.Errorf("aggregator: consume %s: %w", messages.SamplesStream, err)
	}
	tick := time.NewTicker(a.sweepEvery())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			stopConsuming(cc)
			return nil
		case m := <-in:
			a.handle(ctx, m)
		case <-tick.C:
			a.sweep(ctx)
		}
	}
}

// consumeBuffer is how many delivered batches wait for Run's loop; the
// consumer's callback waits while it is full.
const consumeBuffer = 64

// deliver hands m to Run's loop. A message not handed over before ctx ends
// is left unacknowledged: the stream redelivers it to the next run.
func deliver(ctx context.Context, in chan<- jetstream.Msg, m jetstream.Msg) {
	select {
	case in <- m:
	case <-ctx.Done():
	}
}

func stopConsuming(cc jetstream.ConsumeContext) {
	cc.Stop()
	<-cc.Closed()
}

// setup ensures the streams, starts reading the step commands and creates
// the durable consumer of batches.
func (a *Aggregator) setup(ctx context.Context) (jetstream.Consumer, jetstream.ConsumeContext, error) {
	if err := a.ensure(ctx); err != nil {
		return nil, nil, err
	}
	cmds, err := a.followCommands(ctx)
	if err != nil {
		return nil, nil, err
	}
	cons, err := a.js.CreateOrUpdateConsumer(ctx, messages.SamplesStream, jetstream.ConsumerConfig{
		Durable:       a.opts.durable(),
		Description:   "imapload aggregator: pools sample batches into step results",
		FilterSubject: messages.SamplesSubjects,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       a.opts.ackWait(),
		MaxAckPending: maxAckPending,
	})
	if err != nil {
		stopConsuming(cmds)
		return nil, nil, fmt.Errorf("aggregator: durable consumer %q: %w", a.opts.durable(), err)
	}
	return cons, cmds, nil
}

// maxAckPending bounds the batches delivered and not yet settled: the
// anchors of open steps, and batches waiting, NAK'd, for their command or
// for room among the open steps. Everything else is settled at once.
const maxAckPending = 10_000

// ensure creates or updates the samples and results streams.
func (a *Aggregator) ensure(ctx context.Context) error {
	js, err := jetstream.New(a.nc)
	if err != nil {
		return fmt.Errorf("aggregator: jetstream: %w", err)
	}
	if _, err := bus.EnsureSamples(ctx, js, a.opts.busOptions()); err != nil {
		return fmt.Errorf("aggregator: %w", err)
	}
	results, err := bus.EnsureResults(ctx, js, a.opts.busOptions())
	if err != nil {
		return fmt.Errorf("aggregator: %w", err)
	}
	a.js, a.results = js, results
	return nil
}

// sweepEvery is how often open steps are checked for their deadline.
func (a *Aggregator) sweepEvery() time.Duration {
	return min(max(a.opts.stepTimeout()/10, 20*time.Millisecond), time.Second)
}

// sweep publishes every open step that is finished or past its deadline.
func (a *Aggregator) sweep(ctx context.Context) {
	now := a.now()
	if !a.connected(now) {
		return // a result cannot be published, and batches may be on their way
	}
	for _, st := range a.open {
		if st.pool.finished() || a.overdue(st, now) {
			a.close(ctx, st)
		}
	}
	a.prune()
}

// connected reports whether the connection to NATS is up, and notes when
// it came back after an outage.
func (a *Aggregator) connected(now time.Time) bool {
	if !a.nc.IsConnected() {
		return false
	}
	if n := a.nc.Stats().Reconnects; n != a.reconns {
		a.reconns, a.upAt = n, now
	}
	return true
}

// overdue reports whether st is past the time it closes unfinished. After
// an outage every step gets Options.StepTimeout more, counted from the
// reconnection: the producers' batches held during the outage are being
// published again, and a step closed before they land would be published
// with their producers missing (then corrected by a later revision).
func (a *Aggregator) overdue(st *openStep, now time.Time) bool {
	timeout := a.opts.stepTimeout()
	return now.After(st.closesAt(timeout)) && now.After(a.upAt.Add(timeout))
}

// prune forgets the closed steps whose command the book no longer holds: a
// batch of theirs is rejected anyway. It keeps a.closed and a.runs bounded.
func (a *Aggregator) prune() {
	if len(a.closed) <= 2*a.opts.maxCommands() {
		return
	}
	for k := range a.closed {
		if _, ok := a.cmds.get(k); !ok {
			delete(a.closed, k)
		}
	}
	clear(a.runs) // looked up again when a run's step next opens
}
